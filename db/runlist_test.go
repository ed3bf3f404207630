package db

import (
	"context"
	"slices"
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
