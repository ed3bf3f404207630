package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"iolab/bench/fio"
)

func TestParseSweep(t *testing.T) {
	tests := []struct {
		in   string
		want Sweep
		err  string
	}{
		{"iodepth=1,8,32", Sweep{AxisIODepth, []string{"1", "8", "32"}}, ""},
		{"iodepth=1..256", Sweep{AxisIODepth, []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}}, ""},
		{"numjobs=1..32", Sweep{AxisNumJobs, []string{"1", "2", "4", "8", "16", "32"}}, ""},
		{"iodepth=3..10", Sweep{AxisIODepth, []string{"3", "6"}}, ""},
		{"ioengine=io_uring,io_uring+hipri,io_uring+sqpoll+hipri,libaio,psync", Sweep{AxisEngine, []string{"io_uring", "io_uring+hipri", "io_uring+sqpoll+hipri", "libaio", "psync"}}, ""},
		{"scheduler=none,mq-deadline,bfq,kyber", Sweep{AxisScheduler, []string{"none", "mq-deadline", "bfq", "kyber"}}, ""},
		{"bs=4k,1m", Sweep{AxisBS, []string{"4k", "1m"}}, ""},
		{"rw=randread,randwrite", Sweep{AxisRW, []string{"randread", "randwrite"}}, ""},
		{"depth=1,2", Sweep{}, `"depth" is not an axis`},
		{"iodepth", Sweep{}, "want AXIS=v1,v2"},
		{"iodepth=1,,2", Sweep{}, "empty value"},
		{"iodepth=8..1", Sweep{}, "1 ≤ first ≤ last"},
		{"iodepth=0", Sweep{}, "iodepth"},
		{"ioengine=libaio+hipri", Sweep{}, "io_uring mode"},
		{"ioengine=io_uring+turbo", Sweep{}, `unknown mode "turbo"`},
		{"ioengine=spdk", Sweep{}, "not an engine"},
		{"rw=randomread", Sweep{}, "randomread"},
		// Any other option iolab takes is an axis, under fio's name.
		{"iodepth_batch_submit=1,8", Sweep{"iodepth_batch", []string{"1", "8"}}, ""},
		{"direct=0,1", Sweep{"direct", []string{"0", "1"}}, ""},
		{"hipri=0,1", Sweep{"hipri", []string{"0", "1"}}, ""},
		{"blocksize=4k,8k", Sweep{AxisBS, []string{"4k", "8k"}}, ""},
		{"readwrite=read,write", Sweep{AxisRW, []string{"read", "write"}}, ""},
		// Values that hold commas are separated by semicolons.
		{"cpus_allowed=0,1;1", Sweep{"cpus_allowed", []string{"0,1", "1"}}, ""},
		{"cpus_allowed=0-1,3;", Sweep{"cpus_allowed", []string{"0-1,3"}}, ""},
		{"percentile_list=50:99;99.9", Sweep{"percentile_list", []string{"50:99", "99.9"}}, ""},
		{"cpus_allowed=0,1;;2", Sweep{}, "empty value"},
		{"iodepth_batch_submit=1,x", Sweep{}, `iodepth_batch: "x" is not a whole number`},
		{"direct=0..1", Sweep{}, "direct"}, // ranges are for Numeric axes
		{"filename=/dev/a,/dev/b", Sweep{}, "filename cannot be swept"},
		{"allow_mounted_write=0,1", Sweep{}, "cannot be swept"},
		{"name=a,b", Sweep{}, "cannot be swept"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSweep(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

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
