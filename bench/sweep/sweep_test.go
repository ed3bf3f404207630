package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"iolab/bench/fio"
)

func TestPlanSteps(t *testing.T) {
	cfg, err := fio.ParseArgs([]string{"--name=a", "--filename=/dev/null", "--rw=randread", "--ioengine=libaio", "--iodepth=4", "--runtime=10", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	mustSweep := func(s string) Sweep {
		sw, err := ParseSweep(s)
		if err != nil {
			t.Fatal(err)
		}
		return sw
	}
	plan := &Plan{Name: "p", Base: *cfg, Repeat: 2, Runtime: 3e9,
		Sweeps: []Sweep{mustSweep("iodepth=1,8"), mustSweep("ioengine=libaio,io_uring+sqpoll"), mustSweep("scheduler=none,bfq")}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2*2*2*2 {
		t.Fatalf("%d steps, want 16", len(steps))
	}
	// Repeats are the outer loop; the first sweep varies slowest.
	first, last := steps[0], steps[15]
	if first.Repeat != 0 || first.Value(AxisIODepth) != "1" || first.Value(AxisEngine) != "libaio" || first.Scheduler != "none" {
		t.Fatalf("first step %s", &first)
	}
	if last.Repeat != 1 || last.Value(AxisIODepth) != "8" || last.Value(AxisEngine) != "io_uring+sqpoll" || last.Scheduler != "bfq" {
		t.Fatalf("last step %s", &last)
	}
	for i, st := range steps {
		if st.Seq != i {
			t.Fatalf("step %d has seq %d", i, st.Seq)
		}
		j := st.Config.Groups[0].Jobs[0]
		if want := st.Value(AxisIODepth); want == "8" && j.IODepth != 8 {
			t.Fatalf("step %s: iodepth %d", &st, j.IODepth)
		}
		if j.Runtime != 3e9 {
			t.Fatalf("step %s: runtime %v, want the plan's 3s", &st, j.Runtime)
		}
		if st.Value(AxisEngine) == "io_uring+sqpoll" {
			if j.IOEngine != "io_uring" || !j.SQThreadPoll {
				t.Fatalf("step %s: engine %s sqpoll %v", &st, j.IOEngine, j.SQThreadPoll)
			}
			var names []string
			for _, o := range j.Options {
				names = append(names, o.Name+"="+o.Value)
			}
			if got := strings.Join(names, " "); !strings.Contains(got, "ioengine=io_uring") || !strings.Contains(got, "sqthread_poll=") {
				t.Fatalf("job options %s", got)
			}
		} else if j.SQThreadPoll {
			t.Fatalf("step %s: sqpoll left on", &st)
		}
	}
	// The base plan is untouched.
	if plan.Base.Jobs[0].IODepth != 4 {
		t.Fatal("Steps changed the base jobs")
	}
}

func TestPlanStepsNumJobs(t *testing.T) {
	cfg, err := fio.ParseArgs([]string{"--name=a", "--filename=/dev/null", "--rw=randread", "--group_reporting"})
	if err != nil {
		t.Fatal(err)
	}
	sw, _ := ParseSweep("numjobs=1,4")
	steps, err := (&Plan{Base: *cfg, Sweeps: []Sweep{sw}}).Steps()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(steps[1].Config.Groups[0].Jobs); n != 4 {
		t.Fatalf("numjobs=4 step has %d jobs", n)
	}
	if !steps[1].Config.Groups[0].Reporting {
		t.Fatal("group_reporting lost")
	}
}

// A sweep of one value overrides every job; it is not an axis.
func TestPlanSwept(t *testing.T) {
	p := &Plan{Sweeps: []Sweep{
		{Axis: AxisNumJobs, Values: []string{"1"}},
		{Axis: AxisIODepth, Values: []string{"1", "4"}},
		{Axis: AxisEngine, Values: []string{"libaio", "libaio"}},
		{Axis: AxisScheduler, Values: []string{"none", "bfq"}},
	}}
	var axes []Axis
	for _, s := range p.Swept() {
		axes = append(axes, s.Axis)
	}
	if want := []Axis{AxisIODepth, AxisScheduler}; !slices.Equal(axes, want) {
		t.Errorf("Swept axes = %q, want %q", axes, want)
	}
	if p.SweepsAxis(AxisNumJobs) || !p.SweepsAxis(AxisIODepth) {
		t.Errorf("SweepsAxis: numjobs %v, iodepth %v; want false, true", p.SweepsAxis(AxisNumJobs), p.SweepsAxis(AxisIODepth))
	}
	if (*Plan)(nil).Swept() != nil {
		t.Error("a nil plan sweeps something")
	}
}

// An option axis sets its option on every job of each step and records it
// in the job's options; values with commas keep them.
func TestPlanStepsOptionAxis(t *testing.T) {
	cfg, err := fio.ParseArgs([]string{"--name=a", "--filename=/dev/null", "--ioengine=libaio", "--iodepth=16", "--cpus_allowed=0"})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := ParseSweep("iodepth_batch_submit=1,8")
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := ParseSweep("cpus_allowed=0,1;1")
	if err != nil {
		t.Fatal(err)
	}
	plan := &Plan{Name: "p", Base: *cfg, Sweeps: []Sweep{batch, cpus}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4", len(steps))
	}
	for _, st := range steps {
		j := st.Config.Groups[0].Jobs[0]
		wantBatch := map[string]int{"1": 1, "8": 8}[st.Value("iodepth_batch")]
		wantCPUs := map[string][]int{"0,1": {0, 1}, "1": {1}}[st.Value("cpus_allowed")]
		if j.IODepthBatchSubmit != wantBatch || !slices.Equal(j.CPUsAllowed, wantCPUs) {
			t.Errorf("step %s: iodepth_batch %d cpus %v", &st, j.IODepthBatchSubmit, j.CPUsAllowed)
		}
		var opts []string
		for _, o := range j.Options {
			opts = append(opts, o.Name+"="+o.Value)
		}
		if got := strings.Join(opts, " "); !strings.Contains(got, "iodepth_batch="+st.Value("iodepth_batch")) || !strings.Contains(got, "cpus_allowed="+st.Value("cpus_allowed")) {
			t.Errorf("step %s: job options %s", &st, got)
		}
	}
	spec, ok := LookupAxis("iodepth_batch")
	if !ok || spec.Numeric || spec.Bare || spec.Label("8") != "iodepth_batch=8" {
		t.Errorf("option axis %+v", spec)
	}
	// The command line that reproduces the plan separates what holds a
	// comma with semicolons, and parses back to the same sweeps.
	cmd := plan.Command()
	if !strings.Contains(cmd, "--sweep=iodepth_batch=1,8") || !strings.Contains(cmd, "'--sweep=cpus_allowed=0,1;1'") {
		t.Errorf("command %s", cmd)
	}
	plan.Base.TraceBlock = true
	if cmd := plan.Command(); !strings.Contains(cmd, " --trace-block") || !strings.Contains(plan.JobFile(), "; iolab run --trace-block\n") {
		t.Errorf("a traced plan's command %s, or its job file, without --trace-block", cmd)
	}
	plan.Base.TraceBlock = false
	for _, sw := range plan.Sweeps {
		back, err := ParseSweep(sw.String())
		if err != nil || !reflect.DeepEqual(back, sw) {
			t.Errorf("%s parses back as %+v, %v", sw, back, err)
		}
	}
}

func TestJoinValues(t *testing.T) {
	for _, vals := range [][]string{{"1"}, {"1", "8"}, {"0,1"}, {"0,1", "2"}, {"4k,64k", "8k,128k"}} {
		s := JoinValues(vals)
		if back := SplitValues(s); !slices.Equal(back, vals) {
			t.Errorf("%q: joined %q, split back %q", vals, s, back)
		}
	}
}

// Planned counts the steps Steps makes, without making them: every
// combination the check did not leave out (a skip recorded twice counts
// once), Repeat times; with AutoRepeat, from the first rounds to the cap.
func TestPlanPlanned(t *testing.T) {
	cfg, err := fio.ParseArgs([]string{"--name=a", "--filename=/dev/null", "--rw=randread", "--ioengine=libaio", "--runtime=10", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	engines := Sweep{Axis: AxisEngine, Values: []string{"libaio", "io_uring", "io_uring+hipri"}}
	depths := Sweep{Axis: AxisIODepth, Values: []string{"1", "8", "64"}}
	hipri := func(d string) Skip {
		return Skip{Axes: []AxisValue{{AxisEngine, "io_uring+hipri"}, {AxisIODepth, d}}, Reason: "no poll queues"}
	}
	for _, c := range []struct {
		name   string
		plan   Plan
		lo, hi int
	}{
		{"one step", Plan{Base: *cfg}, 1, 1},
		{"3 × 3 × 4", Plan{Base: *cfg, Repeat: 4, Sweeps: []Sweep{engines, depths}}, 36, 36},
		{"hipri left out", Plan{Base: *cfg, Repeat: 2, Sweeps: []Sweep{engines, depths},
			Skipped: []Skip{hipri("1"), hipri("8"), hipri("64"), hipri("8")}}, 12, 12},
		{"auto", Plan{Base: *cfg, AutoRepeat: &AutoRepeat{Within: 0.05, Max: 10}, Sweeps: []Sweep{depths}}, 3 * MinAutoRepeat, 30},
	} {
		lo, hi := c.plan.Planned()
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s: Planned %d, %d; want %d, %d", c.name, lo, hi, c.lo, c.hi)
		}
		if steps, err := c.plan.Steps(); err != nil || len(steps) != lo {
			t.Errorf("%s: Steps made %d (%v), Planned says %d", c.name, len(steps), err, lo)
		}
	}
	for _, p := range Presets() {
		cfg, err := fio.ParseArgs(p.Args("/dev/null", nil))
		if err != nil {
			t.Fatal(err)
		}
		plan := Plan{Base: *cfg, Repeat: p.Repeat, Sweeps: p.Sweeps}
		steps, err := plan.Steps()
		if lo, hi := plan.Planned(); err != nil || lo != len(steps) || hi != lo {
			t.Errorf("%s: Planned %d, %d; Steps made %d (%v)", p.Name, lo, hi, len(steps), err)
		}
	}
}
