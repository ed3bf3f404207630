package db

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"iolab/bench"
	"iolab/bench/sweep"
)

func TestWorkload(t *testing.T) {
	job := func(name, rw string, bs int64) bench.Job { return bench.Job{Name: name, RW: rw, BS: bs} }
	for _, tt := range []struct {
		name string
		plan sweep.Plan
		want string
	}{
		{"one job", sweep.Plan{Base: bench.Config{Jobs: []bench.Job{job("a", "randwrite", 4096)}}}, "randwrite 4k"},
		{"two jobs", sweep.Plan{Base: bench.Config{Groups: []bench.Group{{Jobs: []bench.Job{job("w", "write", 1<<20), job("r", "randread", 4096)}}}}}, "write 1m + randread 4k"},
		{"clones once", sweep.Plan{Base: bench.Config{Groups: []bench.Group{{Jobs: []bench.Job{job("r", "randread", 4096), job("r", "randread", 4096)}}}}}, "randread 4k"},
		{"bs swept", sweep.Plan{Base: bench.Config{Jobs: []bench.Job{job("a", "randread", 4096)}}, Sweeps: []sweep.Sweep{{Axis: sweep.AxisBS, Values: []string{"4k", "64k"}}}}, "randread 4k,64k"},
		{"no jobs", sweep.Plan{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Workload(Run{Plan: tt.plan}); got != tt.want {
				t.Errorf("Workload = %q, want %q", got, tt.want)
			}
		})
	}
}

// The filters on what the plan and name say, with a limit counted after
// them.
func TestListRunsDerivedFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	var ids []int64
	for i, w := range []struct{ name, rw string }{{"qd sweep", "randread"}, {"Writer", "randwrite"}, {"qd again", "randread"}} {
		r := &Run{Name: w.name, Status: StatusDone, Created: at(i), Host: testHost(),
			Plan: sweep.Plan{Name: w.name, Base: bench.Config{Jobs: []bench.Job{{Name: "j", RW: w.rw, BS: 4096}}}}}
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, tt := range []struct {
		name   string
		filter RunFilter
		want   []int64
	}{
		{"workload", RunFilter{Workload: "randread 4k"}, []int64{ids[2], ids[0]}},
		{"workload, limit after", RunFilter{Workload: "randread 4k", Limit: 1}, []int64{ids[2]}},
		{"name, any case", RunFilter{Name: "WRITER"}, []int64{ids[1]}},
		{"name part", RunFilter{Name: "qd"}, []int64{ids[2], ids[0]}},
		{"none", RunFilter{Workload: "write 1m"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.ListRuns(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The runs list's steps column: the stored steps against the plan's,
// a range with --repeat auto, the count alone when the plan has none.
func TestStepsText(t *testing.T) {
	depths := sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32"}}
	engines := sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring", "io_uring+sqpoll"}}
	for _, tt := range []struct {
		run  Run
		want string
	}{
		{Run{Steps: 20, Plan: sweep.Plan{Repeat: 4, Sweeps: []sweep.Sweep{depths, engines}}}, "20 of 72"},
		{Run{Steps: 72, Plan: sweep.Plan{Repeat: 4, Sweeps: []sweep.Sweep{depths, engines}}}, "72 of 72"},
		{Run{Steps: 1, Plan: sweep.Plan{}}, "1 of 1"},
		{Run{Steps: 0, Plan: sweep.Plan{Repeat: 3, Sweeps: []sweep.Sweep{depths}}}, "0 of 18"},
		{Run{Steps: 40, Plan: sweep.Plan{AutoRepeat: &sweep.AutoRepeat{Within: 0.05, Max: 10}, Sweeps: []sweep.Sweep{depths}}},
			"40 of " + strconv.Itoa(6*sweep.MinAutoRepeat) + "…60"},
		{Run{Steps: 3, Plan: sweep.Plan{Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth}}}}, "3"},
	} {
		if got := StepsText(tt.run); got != tt.want {
			t.Errorf("%d steps of %+v: %q, want %q", tt.run.Steps, tt.run.Plan.Sweeps, got, tt.want)
		}
	}
}
