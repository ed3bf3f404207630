package launch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

func TestNewPlanPreset(t *testing.T) {
	plan, err := NewPlan(Spec{Preset: "sched-mixed", Args: []string{"--iodepth=4", "--filename", "/dev/loop9"},
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}}}})
	if err != nil {
		t.Fatal(err)
	}
	preset, err := sweep.PresetByName("sched-mixed")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Name != "sched-mixed" || plan.Preset != "sched-mixed" || plan.Repeat != preset.Repeat || plan.Repeat < 5 || !plan.DropCaches {
		t.Errorf("plan %q preset %q repeat %d drop caches %v: want the preset's", plan.Name, plan.Preset, plan.Repeat, plan.DropCaches)
	}
	if len(plan.Sweeps) != 1 || !slices.Equal(plan.Sweeps[0].Values, []string{"none", "bfq"}) {
		t.Errorf("sweeps %+v: the spec's scheduler sweep should replace the preset's", plan.Sweeps)
	}
	j := plan.Base.Jobs[0]
	if j.Filename != "/dev/loop9" || j.IODepth != 4 || j.IOEngine != "libaio" {
		t.Errorf("job %s on %s iodepth %d: want the override and the preset's engine", j.IOEngine, j.Filename, j.IODepth)
	}
	// The scheduler presets trace where they can (the check decides);
	// --trace-block asks outright.
	if !plan.TraceBlockWhereAble || plan.Base.TraceBlock {
		t.Errorf("preset: trace where able %v, traced outright %v", plan.TraceBlockWhereAble, plan.Base.TraceBlock)
	}
	asked, err := NewPlan(Spec{Args: []string{"--name=a", "--filename=/dev/loop9", "--rw=randread"}, TraceBlock: true})
	if err != nil || !asked.Base.TraceBlock || asked.TraceBlockWhereAble {
		t.Errorf("--trace-block: %v, traced %v", err, asked != nil && asked.Base.TraceBlock)
	}
}

func TestNewPlanExactIgnoresPresetSweeps(t *testing.T) {
	plan, err := NewPlan(Spec{Preset: "sched-mixed", Args: []string{"--filename=/dev/loop9"}, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Sweeps) != 0 || plan.Repeat != 1 || plan.DropCaches {
		t.Errorf("exact spec took the preset's sweeps %v, repeat %d, drop caches %v", plan.Sweeps, plan.Repeat, plan.DropCaches)
	}
}

func TestNewPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		spec   Spec
		option string
		msg    string
	}{
		{Spec{Preset: "sched-mixed"}, "filename", "needs a target"},
		{Spec{Preset: "no-such"}, "preset", "unknown preset"},
		{Spec{Preset: "sched-mixed", JobFile: "[j]\n"}, "preset", "not both"},
		{Spec{Args: []string{"--name=j", "--filename=/x", "--iodepth=zero"}}, "iodepth", "not a whole number"},
	} {
		_, err := NewPlan(tc.spec)
		oe, ok := err.(*bench.OptionError)
		if !ok || oe.Option != tc.option || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewPlan(%+v) = %v; want an option error on %s saying %q", tc.spec, err, tc.option, tc.msg)
		}
	}
}

// The QoS objective: the preset's, unless --slo gives one; a bad one is
// refused on slo; the plan's command line gives it back.
func TestNewPlanSLO(t *testing.T) {
	args := []string{"--filename=/dev/loop9"}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Preset: "qos-curve", Args: args}, "p99<1ms"},
		{Spec{Preset: "qos-curve", Args: args, SLO: "p99.9<500us"}, "p99.9<500µs"},
		{Spec{Args: []string{"--name=j", "--filename=/x", "--ioengine=null", "--size=1m"}, Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}}, SLO: "p50<2ms"}, "p50<2ms"},
		{Spec{Args: []string{"--name=j", "--filename=/x", "--ioengine=null", "--size=1m"}}, ""},
	} {
		plan, err := NewPlan(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if plan.SLO != nil {
			got = plan.SLO.String()
		}
		if got != tc.want {
			t.Errorf("%+v: slo %q, want %q", tc.spec, got, tc.want)
		}
		if tc.want != "" && !strings.Contains(plan.Command(), "'--slo="+tc.want+"'") {
			t.Errorf("command %q lacks its objective", plan.Command())
		}
	}
	_, err := NewPlan(Spec{Preset: "qos-curve", Args: args, SLO: "p99>1ms"})
	if oe, ok := err.(*bench.OptionError); !ok || oe.Option != "slo" {
		t.Errorf("--slo p99>1ms: %v, want an option error on slo", err)
	}
}

func TestNewPlanJobFile(t *testing.T) {
	plan, err := NewPlan(Spec{JobFile: "[global]\nioengine=null\nsize=1m\n[a]\nrw=randread\n[b]\nstonewall\n", Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Name != "a" || plan.Repeat != 2 || len(plan.Base.Groups) != 2 {
		t.Errorf("name %q repeat %d groups %d", plan.Name, plan.Repeat, len(plan.Base.Groups))
	}
	want := []string{"--ioengine=null", "--size=1m", "--name=a", "--rw=randread", "--name=b", "--stonewall"}
	if !slices.Equal(plan.Args, want) {
		t.Errorf("args %q, want %q", plan.Args, want)
	}
}

func TestTakeFilenameOnlyGlobal(t *testing.T) {
	f, rest := takeFilename([]string{"--bs=4k", "--filename", "/dev/a", "--name=x", "--filename=/dev/b"})
	if f != "/dev/a" || !slices.Equal(rest, []string{"--bs=4k", "--name=x", "--filename=/dev/b"}) {
		t.Errorf("takeFilename = %q, %q", f, rest)
	}
}

// TestExecuteStoresSteps runs a two-step null-engine plan through the
// store, as `iolab run` does, and reads the steps and the status back.
func TestExecuteStoresSteps(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "iolab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plan, err := NewPlan(Spec{Args: []string{"--name=n", "--ioengine=null", "--size=4m", "--runtime=100ms", "--time_based"},
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}}})
	if err != nil {
		t.Fatal(err)
	}
	runner := &bench.Runner{Sys: system.FS{}}
	prep, err := PreparePlan(plan, runner, Options{Check: CheckExisting, Tags: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := prep.Record
	if _, err := store.CreateRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var started []int
	results, status, err := Execute(ctx, store, runner, rec.ID, prep, Hooks{PlanHooks: sweep.PlanHooks{
		StepStarted: func(st *sweep.Step, total int) { started = append(started, st.Seq) }}})
	if err != nil || status != db.StatusDone || len(results) != 2 || !slices.Equal(started, []int{0, 1}) {
		t.Fatalf("Execute: %v, status %s, %d results, started %v", err, status, len(results), started)
	}
	steps, err := store.Steps(ctx, rec.ID)
	if err != nil || len(steps) != 2 {
		t.Fatalf("stored steps: %d, %v", len(steps), err)
	}
	run, err := store.GetRun(ctx, rec.ID)
	if err != nil || run.Status != db.StatusDone {
		t.Errorf("stored run: %+v, %v", run, err)
	}
}

// TestProgressTicks checks that Progress reports the running step, the
// rate of completed I/Os and the time left of a time-based plan.
func TestProgressTicks(t *testing.T) {
	steps, ticks := progressOf(t, 50*time.Millisecond, 0, "--runtime=400ms", "--time_based")
	if len(ticks) < 3 {
		t.Fatalf("%d ticks over a 400 ms step at 50 ms", len(ticks))
	}
	busy := 0
	for _, tk := range ticks {
		if tk.Step != &steps[0] || tk.Total != 1 || !tk.LeftKnown || tk.Left > 400*time.Millisecond {
			t.Errorf("tick %+v", tk)
		}
		if tk.IOPS > 0 {
			busy++
		}
	}
	if busy == 0 {
		t.Error("no tick saw I/Os complete")
	}
}

// TestProgressPerJob: a step of unlike jobs (a 4 KiB reader beside a
// 1 MiB writer) is reported job by job, never as their sum; numjobs'
// clones, alike, are one job's rate and the step's.
func TestProgressPerJob(t *testing.T) {
	t.Run("unlike", func(t *testing.T) {
		_, ticks := progressOf(t, 50*time.Millisecond, 0, "--runtime=400ms", "--time_based", "--rw=randread", "--bs=4k",
			"--name=w", "--ioengine=null", "--size=4m", "--rw=write", "--bs=1m", "--runtime=400ms", "--time_based")
		busy := 0
		for _, tk := range ticks {
			if tk.Phase == PhasePrepare {
				continue
			}
			if tk.Summed || tk.IOPS != 0 {
				t.Errorf("tick summed unlike jobs: %+v", tk)
			}
			if len(tk.Jobs) != 2 || tk.Jobs[0].Name != "n" || tk.Jobs[1].Name != "w" {
				t.Fatalf("tick's jobs %+v: want n, then w", tk.Jobs)
			}
			if tk.Jobs[0].IOPS > 0 && tk.Jobs[1].IOPS > 0 {
				busy++
			}
			ev := ProgressEventOf(tk, false)
			if len(ev.Jobs) != 2 || ev.Jobs[0].Total || ev.Jobs[1].Total || ev.IOPS != 0 || ev.Summed {
				t.Errorf("event %+v: two jobs and no total", ev)
			}
			if txt := ev.IOPSText(); !strings.HasPrefix(txt, "n ") || !strings.Contains(txt, ", w ") {
				t.Errorf("IOPSText %q: each job's", txt)
			}
		}
		if busy == 0 {
			t.Errorf("no tick saw both jobs complete I/Os: %+v", ticks)
		}
	})
	t.Run("clones", func(t *testing.T) {
		_, ticks := progressOf(t, 50*time.Millisecond, 0, "--runtime=400ms", "--time_based", "--numjobs=2")
		busy := 0
		for _, tk := range ticks {
			if tk.Phase == PhasePrepare {
				continue
			}
			if !tk.Summed || len(tk.Jobs) != 1 || tk.Jobs[0].Name != "n" || tk.Jobs[0].IOPS != tk.IOPS {
				t.Errorf("tick %+v: one job, its clones' rate the step's", tk)
			}
			if tk.IOPS > 0 {
				busy++
			}
			if ev := ProgressEventOf(tk, false); len(ev.Jobs) != 0 || !ev.Summed || ev.IOPS != tk.IOPS {
				t.Errorf("event %+v: the step's IOPS, no jobs", ev)
			}
		}
		if busy == 0 {
			t.Error("no tick saw I/Os complete")
		}
	})
}

// TestProgressEventNamesAtMost16Jobs: four events a second name at most
// maxProgressJobs jobs and count the rest, so that an agent's events stay
// within what the dashboard takes.
func TestProgressEventNamesAtMost16Jobs(t *testing.T) {
	st := sweep.Step{}
	tk := Tick{Step: &st, Total: 1, Phase: PhaseMeasure}
	for i := range 20 {
		tk.Jobs = append(tk.Jobs, JobRate{Name: fmt.Sprintf("job%d", i), IOPS: float64(1000 * (i + 1))})
	}
	ev := ProgressEventOf(tk, false)
	if len(ev.Jobs) != maxProgressJobs || ev.More != 20-maxProgressJobs || ev.Jobs[15].Name != "job15" {
		t.Fatalf("%d jobs named (last %q), %d more; want %d, job15, %d", len(ev.Jobs), ev.Jobs[len(ev.Jobs)-1].Name, ev.More, maxProgressJobs, 20-maxProgressJobs)
	}
	if txt := ev.IOPSText(); !strings.HasPrefix(txt, "job0 1k IOPS, job1 2k IOPS,") || !strings.HasSuffix(txt, "job15 16k IOPS (and 4 more jobs)") {
		t.Errorf("IOPSText %q", txt)
	}
}

// progressOf runs the one step of a null job with args under Progress,
// ticking every, after a preparation of prepare without I/O, and returns
// the steps and the ticks.
func progressOf(t *testing.T, every, prepare time.Duration, args ...string) ([]sweep.Step, []Tick) {
	t.Helper()
	plan, err := NewPlan(Spec{Args: append([]string{"--name=n", "--ioengine=null", "--size=4m"}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	runner := &bench.Runner{Sys: system.FS{}}
	var mu sync.Mutex
	var ticks []Tick
	p := NewProgress(runner, steps, every, func(tk Tick) {
		mu.Lock()
		ticks = append(ticks, tk)
		mu.Unlock()
	})
	p.StepStarted(&steps[0])
	time.Sleep(prepare)
	if _, err := runner.Run(context.Background(), &steps[0].Config); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	mu.Lock()
	defer mu.Unlock()
	return steps, slices.Clone(ticks)
}

// TestExecuteStoreFailsMidRun: when saving a step fails (a full disk, say)
// the plan stops and the run is partial, not done, with the reason.
func TestExecuteStoreFailsMidRun(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "iolab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plan, err := NewPlan(Spec{Args: []string{"--name=n", "--ioengine=null", "--size=4m", "--runtime=50ms", "--time_based"},
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8"}}}})
	if err != nil {
		t.Fatal(err)
	}
	runner := &bench.Runner{Sys: system.FS{}}
	prep, err := PreparePlan(plan, runner, Options{Check: CheckExisting})
	if err != nil {
		t.Fatal(err)
	}
	rec := prep.Record
	if _, err := store.CreateRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	saved := 0
	_, status, err := Execute(ctx, store, runner, rec.ID, prep, Hooks{PlanHooks: sweep.PlanHooks{
		StepDone: func(*sweep.StepResult) error {
			if saved++; saved == 2 {
				return errors.New("database or disk is full")
			}
			return nil
		}}})
	if status != db.StatusPartial || err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("status %s, err %v; want partial with the store's error", status, err)
	}
	run, err := store.GetRun(ctx, rec.ID)
	if err != nil || run.Status != db.StatusPartial || !strings.Contains(run.Error, "disk is full") {
		t.Fatalf("stored run %s %q, %v", run.Status, run.Error, err)
	}
}
