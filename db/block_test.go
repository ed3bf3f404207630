package db

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench"
)

// TestBlockTimeRoundTrip: a traced job's block-layer time per direction
// and its group's trace read back as they were saved, whichever
// histograms the load reads; a job and a group without them read back
// without them.
func TestBlockTimeRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	st := testStep(rng, 0, 1000, 2, true)
	jr := &st.Result.Groups[0].Jobs[0]
	var b bench.BlockTime
	for range 900 {
		b.Submit.Add(latency(rng, 2_000, 0.3))
		b.Queue.Add(latency(rng, 30_000, 0.8))
		b.Device.Add(latency(rng, 80_000, 0.4))
		b.Completion.Add(latency(rng, 1_500, 0.3))
	}
	b.OneToOne, b.Merged, b.Split, b.Unmatched = 900, 60, 30, 10
	jr.Dirs[bench.Write].Block = &b
	trace := &bench.BlockTrace{Devices: []string{"7:0"}, Foreign: 12, Dropped: 3, Missed: 1}
	st.Result.Groups[0].Trace = trace
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	for _, load := range []StepLoad{{}, LoadAll()} {
		got, err := s.StepsFor(ctx, id, load)
		if err != nil {
			t.Fatal(err)
		}
		g := &got[0].Result.Groups[0]
		if !reflect.DeepEqual(g.Jobs[0].Dirs[bench.Write].Block, &b) {
			t.Errorf("write block time: got %+v, want %+v", g.Jobs[0].Dirs[bench.Write].Block, &b)
		}
		if r := g.Jobs[0].Dirs[bench.Read].Block; r != nil {
			t.Errorf("read block time %+v, want none", r)
		}
		if !reflect.DeepEqual(g.Trace, trace) {
			t.Errorf("trace: got %+v, want %+v", g.Trace, trace)
		}
		other := &got[0].Result.Groups[1]
		if other.Trace != nil || other.Jobs[0].Dirs[bench.Read].Block != nil || other.Jobs[0].Dirs[bench.Write].Block != nil {
			t.Errorf("a group without a trace reads back with one: %+v", other)
		}
	}
}
