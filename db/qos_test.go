package db

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench"
)

// TestQoSRoundTrip: the latency from intended starts and each interval's
// latency read back as they were saved; a job without them reads back
// without them.
func TestQoSRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	st := testStep(rng, 0, 2000, 4, true)
	jr := &st.Result.Groups[0].Jobs[0]
	for range 2000 {
		jr.Dirs[bench.Read].Intended.Add(latency(rng, 200_000, 0.5))
	}
	for i := range jr.Samples {
		if i != 2 {
			jr.Samples[i].Lat = &bench.IntervalLat{N: uint64(100 + i), P50: 1000, P99: uint64(9000 + i), Max: 12345}
		}
	}
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	got, err := s.StepsFor(ctx, id, StepLoad{Samples: EverySample})
	if err != nil {
		t.Fatal(err)
	}
	g := &got[0].Result.Groups[0].Jobs[0]
	if !reflect.DeepEqual(g.Dirs[bench.Read].Intended, jr.Dirs[bench.Read].Intended) {
		t.Errorf("intended-start latency: got %+v, want %+v", g.Dirs[bench.Read].Intended.Stat, jr.Dirs[bench.Read].Intended.Stat)
	}
	if !g.Paced(bench.Read) || g.Paced(bench.Write) {
		t.Errorf("paced read %v write %v, want true false", g.Paced(bench.Read), g.Paced(bench.Write))
	}
	for i := range jr.Samples {
		if !reflect.DeepEqual(g.Samples[i].Lat, jr.Samples[i].Lat) {
			t.Errorf("sample %d latency: got %+v, want %+v", i, g.Samples[i].Lat, jr.Samples[i].Lat)
		}
	}
	other := &got[0].Result.Groups[1].Jobs[0]
	if other.Paced(bench.Read) || len(other.Samples) > 0 && other.Samples[0].Lat != nil {
		t.Errorf("a job without them reads back with them: %+v", other.Dirs[bench.Read].Intended.Stat)
	}
}

// TestSampleTrimsRoundTrip: a sample's trims (rw=trim and its kin) read
// back as they were saved, beside its reads and writes.
func TestSampleTrimsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	st := testStep(rand.New(rand.NewPCG(3, 4)), 0, 500, 4, true)
	jr := &st.Result.Groups[0].Jobs[0]
	for i := range jr.Samples {
		jr.Samples[i].IOs[bench.Trim] = uint64(10 * (i + 1))
		jr.Samples[i].Bytes[bench.Trim] = uint64(40960 * (i + 1))
	}
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	got, err := s.StepsFor(ctx, id, StepLoad{Samples: EverySample})
	if err != nil {
		t.Fatal(err)
	}
	g := got[0].Result.Groups[0].Jobs[0].Samples
	if len(g) != len(jr.Samples) || len(g) == 0 {
		t.Fatalf("%d samples back, want %d", len(g), len(jr.Samples))
	}
	for i := range g {
		if g[i].IOs != jr.Samples[i].IOs || g[i].Bytes != jr.Samples[i].Bytes {
			t.Errorf("sample %d: got %v %v, want %v %v", i, g[i].IOs, g[i].Bytes, jr.Samples[i].IOs, jr.Samples[i].Bytes)
		}
	}
}
