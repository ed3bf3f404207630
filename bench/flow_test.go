package bench

import (
	"strings"
	"testing"
	"time"
)

// TestFlowShares: jobs that try in turn to issue I/Os keep the counts
// their weights say (fio's flow_threshold_exceeded); one that leaves the
// flow takes its weight and I/Os with it, and the other goes on alone.
func TestFlowShares(t *testing.T) {
	cfg := &Config{Groups: []Group{{Jobs: []Job{{Name: "a", FlowOptions: FlowOptions{Flow: 1}}, {Name: "b", FlowOptions: FlowOptions{Flow: 3}},
		{Name: "c", FlowOptions: FlowOptions{Flow: 2, FlowID: 7}}, {Name: "d"}}}}}
	fs := newFlows(cfg)
	a, b := fs.join(&cfg.Groups[0].Jobs[0]), fs.join(&cfg.Groups[0].Jobs[1])
	if c, d := fs.join(&cfg.Groups[0].Jobs[2]), fs.join(&cfg.Groups[0].Jobs[3]); c == nil || c.f == a.f || d != nil {
		t.Fatalf("flow_id 7 shares flow 0's counters, or a job without flow is in one")
	}
	var n [2]int
	for range 4000 {
		for i, s := range []*flowShare{a, b} {
			if !s.over() {
				n[i]++
			}
		}
	}
	if n[1] < 3*n[0]-3 || n[1] > 3*n[0]+3 || n[0] < 900 {
		t.Errorf("weights 1 and 3 issued %d and %d I/Os", n[0], n[1])
	}
	a.leave()
	a.leave() // a second leave takes nothing more away
	if got := b.f.weight.Load(); got != 3 {
		t.Fatalf("the flow's weight is %d once a has left, want 3", got)
	}
	for range 100 {
		if b.over() {
			t.Fatal("b, alone in its flow, was held back")
		}
	}
}

func TestCheckFlows(t *testing.T) {
	job := func(name string, flow, id int, set func(j *Job)) Job {
		j := NewJob()
		j.Name, j.Flow, j.FlowID = name, flow, id
		if set != nil {
			set(&j)
		}
		return j
	}
	stonewall := func(j *Job) { j.Stonewall = true }
	for _, tc := range []struct {
		name string
		jobs []Job
		want string // "" when the run is fine
	}{
		{"one group", []Job{job("a", 1, 0, nil), job("b", 8, 0, nil)}, ""},
		{"after a stonewall", []Job{job("a", 1, 0, nil), job("b", 1, 0, stonewall)}, "job a: its flow (flow_id=0) counts job b's weight from the start"},
		{"after a stonewall, a runtime", []Job{job("a", 1, 0, func(j *Job) { j.Runtime = time.Second }), job("b", 1, 0, stonewall)}, ""},
		{"after a stonewall, other flows", []Job{job("a", 1, 1, nil), job("b", 1, 2, stonewall)}, ""},
		{"new_group runs at once", []Job{job("a", 1, 0, nil), job("b", 1, 0, func(j *Job) { j.NewGroup = true })}, ""},
		{"wait_for", []Job{job("a", 1, 0, nil), job("b", 1, 0, func(j *Job) { j.WaitFor = "a" })}, "waits for it (wait_for)"},
		{"flow_sleep alone", []Job{job("a", 0, 0, func(j *Job) { j.FlowSleep = time.Millisecond })}, "no job of the run is in a flow"},
		{"flow_id alone", []Job{job("a", 0, 3, nil)}, "no job of the run is in a flow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkFlows(Expand(tc.jobs))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("checkFlows: %v, want %q", err, tc.want)
			}
		})
	}
}
