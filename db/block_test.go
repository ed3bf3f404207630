package db

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench"
)

// TestBlockTimeRoundTrip: a traced job's time in the block layer and its
// group's trace read back as they were saved; an untraced job and group
// read back without them.
func TestBlockTimeRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	st := testStep(rng, 0, 2000, 4, true)
	jr := &st.Result.Groups[0].Jobs[0]
	var bt bench.BlockTime
	for range 2000 {
		bt.Submit.Add(latency(rng, 3_000, 0.3))
		bt.Queue.Add(latency(rng, 2_000, 0.5))
		bt.Device.Add(latency(rng, 40_000, 0.5))
		bt.Completion.Add(latency(rng, 20_000, 0.5))
	}
	bt.OneToOne, bt.Merged, bt.Split, bt.Unmatched = 2000, 3, 2, 1
	jr.Dirs[bench.Read].Block = &bt
	trace := &bench.BlockTrace{Devices: []string{"7:0"}, Foreign: 12, Dropped: 1, Missed: 2}
	st.Result.Groups[0].Trace = trace
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	got, err := s.StepsFor(ctx, id, StepLoad{})
	if err != nil {
		t.Fatal(err)
	}
	g := &got[0].Result.Groups[0]
	if b := g.Jobs[0].Dirs[bench.Read].Block; b == nil || !reflect.DeepEqual(*b, bt) {
		t.Errorf("block time: got %+v, want %+v", b, bt)
	}
	if g.Jobs[0].Dirs[bench.Write].Block != nil {
		t.Errorf("the untraced direction reads back with a block time")
	}
	if !reflect.DeepEqual(g.Trace, trace) {
		t.Errorf("trace: got %+v, want %+v", g.Trace, trace)
	}
	other := &got[0].Result.Groups[1]
	if other.Trace != nil || other.Jobs[0].Dirs[bench.Read].Block != nil {
		t.Errorf("an untraced group reads back traced")
	}
}
