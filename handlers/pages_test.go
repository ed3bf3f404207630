package handlers

import (
	"testing"
	"time"

	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/db"
)

// A run's planned steps are counted once, and a run stored under a
// deleted one's id has its own.
func TestPlannedSteps(t *testing.T) {
	plan := func(depths ...string) sweep.Plan {
		cfg, err := fio.ParseArgs([]string{"--name=j", "--ioengine=null", "--size=1m", "--rw=randread"})
		if err != nil {
			t.Fatal(err)
		}
		return sweep.Plan{Name: "p", Base: *cfg, Repeat: 2, Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: depths}}}
	}
	p := &plannedSteps{counts: map[plannedKey]int{}}
	at := time.Unix(100, 0)
	run := &db.Run{ID: 3, Created: at, Plan: plan("1", "4", "16")}
	if n := p.of(run); n != 6 {
		t.Fatalf("planned %d, want 6", n)
	}
	run.Plan = plan("1")
	if n := p.of(run); n != 6 {
		t.Fatalf("the same run again: planned %d, want the 6 counted before", n)
	}
	if n := p.of(&db.Run{ID: 3, Created: at.Add(time.Nanosecond), Plan: plan("1")}); n != 2 {
		t.Fatalf("another run under id 3: planned %d, want its 2", n)
	}
	if n := p.of(&db.Run{ID: 4, Created: at}); n != 0 {
		t.Fatalf("a run without jobs: planned %d, want 0", n)
	}
}
