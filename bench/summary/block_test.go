package summary

import (
	"reflect"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// A traced step's view keeps each direction's block-layer parts and its
// group's trace, and its figures are of any part asked for; an untraced
// step's parts are empty, never zero-valued figures of other kinds.
func TestBlockParts(t *testing.T) {
	j := sweeptest.SubmitJob("r", "io_uring", 0) // lat 3.5 µs
	sweeptest.Traced(&j, bench.Read, [4]float64{0.1, 0.2, 0.6, 0.1}, 0.95)
	st := doneStep(j)
	st.Result.Groups[0].Trace = &bench.BlockTrace{Devices: []string{"7:0"}, Dropped: 2}
	v := StepViewOf(&st)
	g := v.Result.Groups[0]
	if g.Trace == nil || g.Trace.Dropped != 2 {
		t.Errorf("trace %+v, want the step's", g.Trace)
	}
	b := g.Jobs[0].Dirs[bench.Read].Block
	if b == nil || b.OneToOne != 950 || b.Merged != 50 || b.IOs() != 1000 {
		t.Fatalf("block view %+v, want 950 one-to-one of 1000", b)
	}
	lat := sweeptest.SubmitLat("io_uring", "lat")
	f := FiguresOf(&st)
	for k, share := range map[LatKind]float64{LatSubmit: 0.1, LatQueue: 0.2, LatDevice: 0.6, LatCompletion: 0.1} {
		got := f.Jobs[0].As(k)
		if want := time.Duration(float64(lat) * share); got.Lat != k || got.IOs != 950 || !near(got.P50, want) {
			t.Errorf("%s: %s p50 %v of %d I/Os, want %v of 950", k, got.Lat, got.P50, got.IOs, want)
		}
		if k.Of(&g.Jobs[0].Dirs[bench.Write]).Hist != nil {
			t.Errorf("%s of the untraced writes has a histogram", k)
		}
		if p, err := ParseLatKind(string(k)); err != nil || p != k {
			t.Errorf("ParseLatKind(%q) = %q, %v", k, p, err)
		}
	}
	if j := f.Jobs[0]; j.Traced != 1000 || j.OneToOne() != 0.95 {
		t.Errorf("traced %d, %v one-to-one; want 1000, 0.95", j.Traced, j.OneToOne())
	}
	plain := doneStep(sweeptest.SubmitJob("r", "io_uring", 0))
	if got := FiguresOf(&plain).Jobs[0].As(LatQueue); got.IOs != 0 || got.P50 != 0 {
		t.Errorf("an untraced step's queue figures: %d I/Os p50 %v", got.IOs, got.P50)
	}
}

// A traced step that lost events or saw other processes' I/O is a note
// to read its split with, in Notes and NotesOf alike; a trace that lost
// nothing is none.
func TestTraceNotes(t *testing.T) {
	clean := doneStep(sweeptest.SubmitJob("r", "io_uring", 0))
	clean.Result.Groups[0].Trace = &bench.BlockTrace{Devices: []string{"7:0"}}
	lossy := doneStep(sweeptest.SubmitJob("r", "io_uring", 0))
	lossy.Step.Seq = 1
	lossy.Result.Groups[0].Trace = &bench.BlockTrace{Devices: []string{"7:0"}, Dropped: 3, Missed: 1, Foreign: 9}
	steps := []sweep.StepResult{clean, lossy}
	want := []Note{
		{Step: 2, Text: "the block-layer trace lost 4 events (3 dropped, 1 missed): its time split may lack I/Os"},
		{Step: 2, Text: "the block-layer trace saw 9 bios of other processes on the traced devices: they shared its queues"},
	}
	if got := Notes(steps); !reflect.DeepEqual(got, want) {
		t.Errorf("Notes = %+v, want %+v", got, want)
	}
	if got := NotesOf(StepViews(steps)); !reflect.DeepEqual(got, want) {
		t.Errorf("NotesOf = %+v, want %+v", got, want)
	}
}
