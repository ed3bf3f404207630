package sweep

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/stats"
)

func TestPresetsParse(t *testing.T) {
	presets := Presets()
	var names []string
	for _, p := range presets {
		names = append(names, p.Name)
	}
	if want := []string{"sched-mixed", "sched-seqwrite", "sched-fairness", "engines-randwrite", "numjobs-scaling", "qos-curve", "pts-precondition"}; !slices.Equal(names, want) {
		t.Fatalf("Presets() names = %q, want %q", names, want)
	}
	for _, p := range presets {
		t.Run(p.Name, func(t *testing.T) {
			if p.Description == "" || p.Repeat < 1 || len(p.Jobs) == 0 || (len(p.Sweeps) == 0 && !p.Sequential) {
				t.Errorf("incomplete preset: %+v", p)
			}
			args := p.Args("/dev/loop7", nil)
			if args[0] != "--filename=/dev/loop7" {
				t.Errorf("Args()[0] = %q, want --filename first", args[0])
			}
			cfg, err := fio.ParseArgs(args)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", args, err)
			}
			if p.Sequential {
				if len(cfg.Groups) != len(p.Jobs) {
					t.Fatalf("%d groups, want %d: the preset's jobs run one after the other", len(cfg.Groups), len(p.Jobs))
				}
				return // phases: checked one by one in TestPresetContents
			}
			if len(cfg.Groups) != 1 {
				t.Fatalf("%d groups, want 1: the preset's jobs run at the same time", len(cfg.Groups))
			}
			for _, j := range cfg.Groups[0].Jobs {
				if j.Filename != "/dev/loop7" || !j.Direct || !j.TimeBased || j.Runtime < 30*time.Second {
					t.Errorf("job %q: filename %q, direct %v, time_based %v, runtime %v; want the target, O_DIRECT and a time-based run of 30 s or more",
						j.Name, j.Filename, j.Direct, j.TimeBased, j.Runtime)
				}
			}
			// Every sweep value must be a valid value of its axis on the
			// base job.
			base := cfg.Groups[0].Jobs[0]
			for _, s := range p.Sweeps {
				if len(s.Values) == 0 {
					t.Errorf("sweep %s has no values", s.Axis)
				}
				for _, v := range s.Values {
					if err := checkSweepValue(base, s.Axis, v); err != nil {
						t.Errorf("sweep %s=%s: %v", s.Axis, v, err)
					}
				}
			}
		})
	}
}

// checkSweepValue applies one sweep value to a copy of j the way a step
// would, without depending on the plan's own expansion.
func checkSweepValue(j bench.Job, axis Axis, v string) error {
	j = j.Clone()
	switch axis {
	case AxisRateIOPS:
		spec, _ := LookupAxis(axis)
		return spec.Check(v)
	case AxisScheduler:
		if !slices.Contains([]string{"none", "mq-deadline", "bfq", "kyber"}, v) {
			return errors.New("not a blk-mq scheduler")
		}
		return nil
	case AxisEngine:
		engine, mods, _ := strings.Cut(v, "+")
		if err := fio.ApplyOption(&j, "ioengine", engine); err != nil {
			return err
		}
		for m := range strings.SplitSeq(mods, "+") {
			opt := map[string]string{"hipri": "hipri", "sqpoll": "sqthread_poll", "fixedbufs": "fixedbufs", "": ""}[m]
			if opt == "" && m != "" {
				return errors.New("unknown engine variant " + m)
			}
			if opt != "" {
				if err := fio.ApplyOption(&j, opt, ""); err != nil {
					return err
				}
			}
		}
	default:
		if err := fio.ApplyOption(&j, string(axis), v); err != nil {
			return err
		}
	}
	return fio.FinishJob(&j)
}

func TestPresetContents(t *testing.T) {
	parse := func(name string) (Preset, *bench.Config) {
		t.Helper()
		p, err := PresetByName(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := fio.ParseArgs(p.Args("/dev/nvme0n1", nil))
		if err != nil {
			t.Fatal(err)
		}
		return p, cfg
	}
	schedulers := []Sweep{{Axis: AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}}}

	p, cfg := parse("sched-mixed")
	j := cfg.Groups[0].Jobs[0]
	if j.RW != "randrw" || j.RWMixRead != 70 || j.BS != 4096 || j.IODepth != 8 || j.IOEngine != "libaio" {
		t.Errorf("sched-mixed job: rw %s rwmixread %d bs %d iodepth %d %s", j.RW, j.RWMixRead, j.BS, j.IODepth, j.IOEngine)
	}
	if !slices.EqualFunc(p.Sweeps, schedulers, sweepEqual) || p.Repeat != 5 || !p.DropCaches || p.Discard {
		t.Errorf("sched-mixed plan: %+v", p)
	}

	p, cfg = parse("sched-seqwrite")
	j = cfg.Groups[0].Jobs[0]
	if j.RW != "write" || j.BS != 1<<20 || j.IODepth != 4 {
		t.Errorf("sched-seqwrite job: rw %s bs %d iodepth %d", j.RW, j.BS, j.IODepth)
	}
	if !slices.EqualFunc(p.Sweeps, schedulers, sweepEqual) || p.Repeat != 5 || !p.DropCaches {
		t.Errorf("sched-seqwrite plan: %+v", p)
	}

	p, cfg = parse("sched-fairness")
	jobs := cfg.Groups[0].Jobs
	if len(jobs) != 2 {
		t.Fatalf("sched-fairness: %d jobs, want 2", len(jobs))
	}
	w, r := jobs[0], jobs[1]
	if w.Name != "bg-writer" || w.RW != "write" || w.BS != 1<<20 || w.IODepth != 16 {
		t.Errorf("sched-fairness writer: %s rw %s bs %d iodepth %d", w.Name, w.RW, w.BS, w.IODepth)
	}
	if r.Name != "fg-reader" || r.RW != "randread" || r.BS != 4096 || r.IODepth != 1 {
		t.Errorf("sched-fairness reader: %s rw %s bs %d iodepth %d", r.Name, r.RW, r.BS, r.IODepth)
	}
	if !slices.EqualFunc(p.Sweeps, schedulers, sweepEqual) || p.Repeat != 5 || !p.DropCaches {
		t.Errorf("sched-fairness plan: %+v", p)
	}
	// The write-up measures the reader; the writer is the load.
	if p.Measured != "fg-reader" {
		t.Errorf("sched-fairness measures %q, want fg-reader", p.Measured)
	}

	p, cfg = parse("engines-randwrite")
	j = cfg.Groups[0].Jobs[0]
	if j.RW != "randwrite" || j.BS != 4096 || j.RampTime != 10*time.Second || j.Runtime != 60*time.Second {
		t.Errorf("engines-randwrite job: rw %s bs %d ramp %v runtime %v", j.RW, j.BS, j.RampTime, j.Runtime)
	}
	want := []Sweep{
		{Axis: AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}},
		{Axis: AxisEngine, Values: []string{"io_uring", "io_uring+hipri", "io_uring+sqpoll", "io_uring+sqpoll+hipri", "libaio"}},
	}
	if !slices.EqualFunc(p.Sweeps, want, sweepEqual) || p.Repeat != 5 || !p.Discard {
		t.Errorf("engines-randwrite plan: %+v", p)
	}

	p, cfg = parse("numjobs-scaling")
	if !cfg.Groups[0].Reporting {
		t.Error("numjobs-scaling: no group_reporting")
	}
	want = []Sweep{{Axis: AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}}}
	if !slices.EqualFunc(p.Sweeps, want, sweepEqual) {
		t.Errorf("numjobs-scaling sweeps: %+v", p.Sweeps)
	}
}

// TestPresetPTSPrecondition: SNIA PTS-style preconditioning is a purge, a
// sequential fill of the whole device twice, then random writes that end
// on steady state.
func TestPresetPTSPrecondition(t *testing.T) {
	p, err := PresetByName("pts-precondition")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fio.ParseArgs(p.Args("/dev/nvme0n1", []string{"--ss_dur=30s"}))
	if err != nil {
		t.Fatal(err)
	}
	fill, steady := cfg.Groups[0].Jobs[0], cfg.Groups[1].Jobs[0]
	if fill.RW != "write" || fill.BS != 128<<10 || fill.Loops != 2 || fill.Size != 0 || fill.TimeBased {
		t.Errorf("fill: rw %s bs %d loops %d size %d time_based %v; want the whole device written twice, sequentially at 128 KiB",
			fill.RW, fill.BS, fill.Loops, fill.Size, fill.TimeBased)
	}
	if !cfg.Groups[1].Wait || steady.RW != "randwrite" || steady.BS != 4096 || !steady.Steady() || steady.SteadyName() != "iops" ||
		steady.SSLimit != 10 || !steady.SSPct || steady.SSDur != 30*time.Second || !steady.TimeBased {
		t.Errorf("steady phase: wait %v, %+v", cfg.Groups[1].Wait, steady.SteadyOptions)
	}
	if !p.Discard || p.Measured != "steady-randwrite" || len(p.Sweeps) != 0 {
		t.Errorf("plan: %+v", p)
	}
}

func sweepEqual(a, b Sweep) bool { return a.Axis == b.Axis && slices.Equal(a.Values, b.Values) }

func TestPresetsAreCopies(t *testing.T) {
	a := Presets()
	a[0].Global[0] = "--ioengine=psync"
	a[0].Sweeps[0].Values[0] = "bfq"
	b := Presets()
	if b[0].Global[0] == "--ioengine=psync" || b[0].Sweeps[0].Values[0] == "bfq" {
		t.Error("changing one Presets() result changed the next")
	}
	p, _ := PresetByName("sched-fairness")
	args := p.Args("/dev/sda", []string{"--iodepth=2"})
	if p.Jobs[0][3] != "--iodepth=16" {
		t.Errorf("Args changed the preset's jobs: %q", p.Jobs[0])
	}
	if !slices.Contains(args, "--iodepth=2") {
		t.Errorf("Args = %q", args)
	}
}

func TestPresetByNameUnknown(t *testing.T) {
	_, err := PresetByName("sched-fairnes")
	var oe *bench.OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want an *OptionError", err)
	}
	want := `unknown preset "sched-fairnes" (did you mean "sched-fairness"?); the presets are sched-mixed, sched-seqwrite, sched-fairness, engines-randwrite, numjobs-scaling, qos-curve, pts-precondition`
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if _, err := PresetByName("xyz"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("PresetByName(xyz) err = %v, want an error without a suggestion", err)
	}
}

func TestPresetArgsOverrides(t *testing.T) {
	for _, tc := range []struct {
		name, preset string
		overrides    []string
		want         []string
	}{
		{
			name: "none", preset: "sched-seqwrite",
			want: []string{"--filename=/dev/sdb", "--ioengine=libaio", "--direct=1", "--rw=write", "--bs=1m", "--iodepth=4",
				"--runtime=30", "--time_based", "--name=seqwrite"},
		},
		{
			name: "replace and add", preset: "sched-seqwrite",
			overrides: []string{"--runtime=5s", "--ramp_time=1", "--norandommap"},
			want: []string{"--filename=/dev/sdb", "--ioengine=libaio", "--direct=1", "--rw=write", "--bs=1m", "--iodepth=4",
				"--runtime=5s", "--time_based", "--ramp_time=1", "--norandommap", "--name=seqwrite"},
		},
		{
			name: "alias, separate value, one dash", preset: "sched-seqwrite",
			overrides: []string{"--blocksize", "128k", "-iodepth=2", "--filename=/dev/sdc"},
			want: []string{"--filename=/dev/sdc", "--ioengine=libaio", "--direct=1", "--rw=write", "--blocksize=128k", "-iodepth=2",
				"--runtime=30", "--time_based", "--name=seqwrite"},
		},
		{
			name: "flag without value does not take the next argument", preset: "sched-seqwrite",
			overrides: []string{"--time_based", "extra.fio"},
			want: []string{"--filename=/dev/sdb", "--ioengine=libaio", "--direct=1", "--rw=write", "--bs=1m", "--iodepth=4",
				"--runtime=30", "--time_based", "--name=seqwrite", "--", "extra.fio"},
		},
		{
			name: "an option the jobs set changes in every job", preset: "sched-fairness",
			overrides: []string{"--iodepth=4", "--runtime=2"},
			want: []string{"--filename=/dev/sdb", "--ioengine=libaio", "--direct=1", "--runtime=2", "--time_based",
				"--name=bg-writer", "--rw=write", "--bs=1m", "--iodepth=4",
				"--name=fg-reader", "--rw=randread", "--bs=4k", "--iodepth=4"},
		},
		{
			name: "a further job", preset: "sched-fairness",
			overrides: []string{"--runtime=2", "--name=extra", "--rw=read", "--runtime=3"},
			want: []string{"--filename=/dev/sdb", "--ioengine=libaio", "--direct=1", "--runtime=2", "--time_based",
				"--name=bg-writer", "--rw=write", "--bs=1m", "--iodepth=16",
				"--name=fg-reader", "--rw=randread", "--bs=4k", "--iodepth=1",
				"--name=extra", "--rw=read", "--runtime=3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PresetByName(tc.preset)
			if err != nil {
				t.Fatal(err)
			}
			got := p.Args("/dev/sdb", tc.overrides)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Args =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestPresetArgsOverridesParse(t *testing.T) {
	p, err := PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fio.ParseArgs(p.Args("/dev/sdb", []string{"--iodepth", "4", "--runtime=2", "--ioengine=io_uring"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range cfg.Groups[0].Jobs {
		if j.IODepth != 4 || j.Runtime != 2*time.Second || j.IOEngine != "io_uring" {
			t.Errorf("job %s: iodepth %d runtime %v engine %s, want the overrides", j.Name, j.IODepth, j.Runtime, j.IOEngine)
		}
	}
	if _, err := fio.ParseArgs(p.Args("/dev/sdb", []string{"--iodepht=4"})); err == nil || !strings.Contains(err.Error(), `did you mean "iodepth"`) {
		t.Errorf("a misspelt override: err = %v, want ParseArgs to name it", err)
	}
}

// A plan names the job its preset measures, when it still has it.
func TestPlanMeasuredJob(t *testing.T) {
	plan := func(preset string, jobs ...string) *Plan {
		p := &Plan{Preset: preset}
		for _, j := range jobs {
			p.Base.Jobs = append(p.Base.Jobs, bench.Job{Name: j})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		plan *Plan
		want string
	}{
		{"sched-fairness", plan("sched-fairness", "bg-writer", "fg-reader"), "fg-reader"},
		{"a preset without one", plan("sched-mixed", "randrw-70-30"), ""},
		{"no preset", plan("", "bg-writer", "fg-reader"), ""},
		{"the job renamed away", plan("sched-fairness", "bg-writer", "reader"), ""},
		{"an unknown preset", plan("gone", "fg-reader"), ""},
		{"no plan", nil, ""},
	} {
		if got := tc.plan.MeasuredJob(); got != tc.want {
			t.Errorf("%s: MeasuredJob = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPresetsCanTell: a preset that compares its sweep's values runs
// enough repeats for the diff to reach a verdict on them. Mann–Whitney's
// exact test gives at best p = 2/C(2n, n): 0.1 at 3 a side (never below
// 0.05: "too few repeats to tell", even for io_uring+sqpoll's −88 % with
// ranges apart), 0.029 at 4 (only when no repeat of one side crosses the
// other), 0.0079 at 5, where one repeat crossing the other side (U = 1,
// p = 0.016) or two pairs (U = 2, p = 0.032) still read as significant.
// So each such preset must tell a clear change apart with one repeat out
// of place. The presets of one repeat answer no diff of theirs: the QoS
// curve (its knee) and the preconditioning (its steady state).
func TestPresetsCanTell(t *testing.T) {
	for _, p := range Presets() {
		if p.Repeat == 1 {
			if p.SLO == "" && !p.Sequential {
				t.Errorf("%s: 1 repeat, and it compares its sweep's values", p.Name)
			}
			continue
		}
		if p.Repeat < stats.RepeatsEach(0.95) {
			t.Errorf("%s: %d repeats a side cannot reach 95 %% (needs %d)", p.Name, p.Repeat, stats.RepeatsEach(0.95))
		}
		a := make([]float64, p.Repeat)
		b := make([]float64, p.Repeat)
		for i := range a {
			a[i] = 1000 + float64(i)
			b[i] = 0.12 * a[i] // −88 %, the ranges apart
		}
		if c := stats.Compare(a, b, 0.95); c.Verdict != stats.Significant {
			t.Errorf("%s: −88 %% with %d repeats apart: %s", p.Name, p.Repeat, c)
		}
		b[len(b)-1] = a[0] + 0.5 // one repeat of B above one of A: U = 1
		c := stats.Compare(a, b, 0.95)
		if c.Verdict != stats.Significant {
			t.Errorf("%s: one repeat out of place in %d: %s, want significant", p.Name, p.Repeat, c)
		}
		t.Logf("%s: %d repeats, one out of place: p = %.3g", p.Name, p.Repeat, c.P)
	}
}
