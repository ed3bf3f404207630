package db

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// Bounds on the numbers a step brought from elsewhere (an import, a push,
// an agent) may carry. Each is far above what any machine measures and
// far below what breaks a sum, a chart's axis or SQLite's int64: a number
// beyond one is a forged or corrupt document, refused with the field and
// the value named.
const (
	MaxJobIOPS = 100e6          // I/Os a second, per job (a merged result: per merged job)
	MaxIOBytes = 1 << 32        // bytes one I/O moves: fio's bs is an unsigned int
	MaxCount   = 1 << 60        // an I/O, byte, sample or histogram count
	MaxLatency = 24 * time.Hour // one I/O's latency
	MaxRuntime = 366 * 24 * time.Hour
	// MaxSummedTime bounds times summed over jobs or threads (CPU time,
	// a merged result's runtimes): 2^62 ns, 146 years.
	MaxSummedTime = time.Duration(1 << 62)
	MaxStepCPUPct = 100.0 // a share of the machine's CPU, in %
)

// CheckStepNumbers refuses a step whose figures are out of range:
// negative, not finite or absurd (above the bounds above), group ids
// beyond fio's (bench.MaxNumJobs), counts that wrap an int64. The error
// names the step, the job, the field and the value.
func CheckStepNumbers(res *sweep.StepResult) error {
	in := fmt.Sprintf("step %d", res.Step.Seq)
	for _, f := range []struct {
		what string
		v    float64
	}{
		{"cpu.user", res.CPU.User}, {"cpu.system", res.CPU.System}, {"cpu.irq", res.CPU.IRQ},
		{"cpu.softirq", res.CPU.SoftIRQ}, {"cpu.iowait", res.CPU.IOWait}, {"cpu.idle", res.CPU.Idle}, {"cpu.steal", res.CPU.Steal},
	} {
		if err := checkFloat(in, f.what, f.v, MaxStepCPUPct); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		what string
		v    time.Duration
	}{{"proc.user_ns", res.Proc.User}, {"proc.system_ns", res.Proc.System}} {
		if err := checkDuration(in, f.what, f.v, MaxSummedTime); err != nil {
			return err
		}
	}
	if res.Result == nil {
		return nil
	}
	for gi := range res.Result.Groups {
		g := &res.Result.Groups[gi]
		gin := fmt.Sprintf("%s group %d", in, gi)
		if g.ID < 0 || g.ID >= bench.MaxNumJobs {
			return fmt.Errorf("%s: id %d is not a group fio can have (0 to %d)", gin, g.ID, bench.MaxNumJobs-1)
		}
		for _, d := range g.Disks {
			din := fmt.Sprintf("%s disk %q", gin, d.Name)
			if err := checkFloat(din, "util", d.Util, 100); err != nil {
				return err
			}
			if err := checkFloat(din, "elapsed_ms", d.ElapsedMs, float64(MaxRuntime/time.Millisecond)); err != nil {
				return err
			}
			for _, c := range []struct {
				what string
				v    uint64
			}{{"read_ios", d.ReadIOs}, {"write_ios", d.WriteIOs}, {"read_sectors", d.ReadSectors}, {"write_sectors", d.WriteSectors},
				{"read_merges", d.ReadMerges}, {"write_merges", d.WriteMerges}, {"read_ticks", d.ReadTicks}, {"write_ticks", d.WriteTicks},
				{"io_ticks", d.IOTicks}, {"in_queue", d.InQueue}} {
				if err := checkCount(din, c.what, c.v); err != nil {
					return err
				}
			}
		}
		for ji := range g.Jobs {
			if err := checkJobNumbers(fmt.Sprintf("%s job %d (%q)", gin, ji, g.Jobs[ji].Name), &g.Jobs[ji]); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkJobNumbers(in string, j *bench.JobResult) error {
	if j.GroupID < 0 || j.GroupID >= bench.MaxNumJobs {
		return fmt.Errorf("%s: group_id %d is not a group fio can have (0 to %d)", in, j.GroupID, bench.MaxNumJobs-1)
	}
	if j.Jobs < 0 || j.Jobs > bench.MaxNumJobs {
		return fmt.Errorf("%s: jobs %d: a result merges 0 to %d jobs", in, j.Jobs, bench.MaxNumJobs)
	}
	merged := float64(max(j.Jobs, 1))
	for _, f := range []struct {
		what string
		v    time.Duration
		max  time.Duration
	}{
		{"runtime_ns", j.Runtime, MaxRuntime}, {"runtime_sum_ns", j.RuntimeSum, MaxSummedTime},
		{"interval_ns", j.Interval, MaxRuntime},
		{"usr_cpu_ns", j.UsrCPU, MaxSummedTime}, {"sys_cpu_ns", j.SysCPU, MaxSummedTime},
	} {
		if err := checkDuration(in, f.what, f.v, f.max); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		what string
		v    uint64
	}{{"ctx", j.Ctx}, {"minflt", j.MinFlt}, {"majflt", j.MajFlt}, {"total_err", j.TotalErr},
		{"moved_bytes[read]", j.Moved[bench.Read]}, {"moved_bytes[write]", j.Moved[bench.Write]}} {
		if err := checkCount(in, c.what, c.v); err != nil {
			return err
		}
	}
	for d, name := range []string{"read", "write", "trim"} {
		dr := &j.Dirs[d]
		for _, c := range []struct {
			what string
			v    uint64
		}{{"ios", dr.IOs}, {"bytes", dr.Bytes}, {"short", dr.Short}} {
			if err := checkCount(in, name+" "+c.what, c.v); err != nil {
				return err
			}
		}
		if iops := j.IOPS(d); iops > MaxJobIOPS*merged {
			return fmt.Errorf("%s: %s IOPS %.4g (%d I/Os in %s) is above %.0f million a job: not a measurement", in, name, iops, dr.IOs, j.Runtime, MaxJobIOPS/1e6)
		}
		if dr.Bytes/max(dr.IOs, 1) > MaxIOBytes {
			return fmt.Errorf("%s: %s bytes %d for %d I/Os: more than 4 GiB an I/O (fio's largest bs): not a measurement", in, name, dr.Bytes, dr.IOs)
		}
		for _, l := range []struct {
			what string
			lat  *hist.Lat
		}{{"slat", &dr.Slat}, {"clat", &dr.Clat}, {"lat", &dr.Lat}, {"intended_lat", &dr.Intended}} {
			if err := checkLat(in, name+" "+l.what, l.lat); err != nil {
				return err
			}
		}
		for _, p := range dr.Prios {
			if err := checkLat(in, fmt.Sprintf("%s prio %d lat", name, p.Prio), &p.Lat); err != nil {
				return err
			}
		}
	}
	for i, sm := range j.Samples {
		sin := fmt.Sprintf("%s sample %d", in, i)
		if err := checkDuration(sin, "at_ns", sm.At, MaxRuntime); err != nil {
			return err
		}
		for d, name := range []string{"read", "write", "trim"} {
			if err := checkCount(sin, name+" ios", sm.IOs[d]); err != nil {
				return err
			}
			if err := checkCount(sin, name+" bytes", sm.Bytes[d]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLat checks a latency's summary and histogram: latencies within
// MaxLatency, counts within MaxCount in all.
func checkLat(in, what string, l *hist.Lat) error {
	s := &l.Stat
	if err := checkCount(in, what+" n", s.N); err != nil {
		return err
	}
	// S is Welford's sum of squared deviations: its stddev is bounded.
	if math.IsNaN(s.S) || math.IsInf(s.S, 0) || s.S < 0 {
		return fmt.Errorf("%s: %s s (sum of squared deviations) is %v: not a number of ns²", in, what, s.S)
	}
	for _, v := range []struct {
		field string
		ns    float64
	}{{"min", float64(s.Min)}, {"max", float64(s.Max)}, {"mean", s.Mean}, {"stddev", math.Sqrt(s.S / float64(max(s.N, 1)))}} {
		if err := checkFloat(in, what+" "+v.field, v.ns, float64(MaxLatency)); err != nil {
			return err
		}
	}
	var total uint64
	for _, c := range l.Hist.Counts {
		total += min(c, MaxCount+1) // no wrap: 1856 buckets × 2^60 fits
	}
	if total > MaxCount {
		return fmt.Errorf("%s: %s histogram holds %d I/Os or more: at most %d", in, what, total, uint64(MaxCount))
	}
	return nil
}

func checkFloat(in, what string, v, limit float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s: %s is %v: not a number", in, what, v)
	case v < 0:
		return fmt.Errorf("%s: %s is %v: negative", in, what, v)
	case v > limit:
		return fmt.Errorf("%s: %s is %.4g: above %.4g, not a measurement", in, what, v, limit)
	}
	return nil
}

func checkDuration(in, what string, v, limit time.Duration) error {
	switch {
	case v < 0:
		return fmt.Errorf("%s: %s is %d: negative", in, what, int64(v))
	case v > limit:
		return fmt.Errorf("%s: %s is %s: above %s, not a measurement", in, what, v, limit)
	}
	return nil
}

func checkCount(in, what string, v uint64) error {
	if v > MaxCount {
		return fmt.Errorf("%s: %s is %d: above %d (2^60), not a measurement", in, what, v, uint64(MaxCount))
	}
	return nil
}

// planSteps refuses, one at a time as an import that stores each step as
// it decodes it meets them, steps that are not their plan's: more than
// the plan can have (every combination of its sweeps' values × its
// repeats, or × the auto-repeat cap), a seq twice or beyond that count, a
// repeat beyond the plan's, an axis the plan does not sweep or a value it
// does not take. Each refusal names the step, the field and the value.
type planSteps struct {
	plan           *sweep.Plan
	limit, repeats int
	seen           map[int]bool
}

// newPlanSteps starts the check of n steps (the count a document holds)
// against plan.
func newPlanSteps(plan *sweep.Plan, n int) (*planSteps, error) {
	limit, ok := plan.MaxSteps()
	if !ok {
		return nil, fmt.Errorf("the run's plan has too many steps to count")
	}
	if n > limit {
		return nil, fmt.Errorf("%d steps for a plan of %d (its sweeps' values × %d repeats): a run holds at most its plan's steps", n, limit, plan.MaxRepeats())
	}
	return &planSteps{plan: plan, limit: limit, repeats: max(plan.MaxRepeats(), 1), seen: map[int]bool{}}, nil
}

func (c *planSteps) check(st *sweep.Step) error {
	plan := c.plan
	if len(c.seen) >= c.limit {
		return fmt.Errorf("more than %d steps for a plan of %d: a run holds at most its plan's steps", c.limit, c.limit)
	}
	if st.Seq < 0 || st.Seq >= c.limit {
		return fmt.Errorf("step seq %d: the plan has steps 0 to %d", st.Seq, c.limit-1)
	}
	if c.seen[st.Seq] {
		return fmt.Errorf("two steps with seq %d", st.Seq)
	}
	c.seen[st.Seq] = true
	if st.Repeat < 0 || st.Repeat >= c.repeats {
		return fmt.Errorf("step %d: repeat %d: the plan repeats %d times (0 to %d)", st.Seq, st.Repeat, c.repeats, c.repeats-1)
	}
	var axes []sweep.Axis
	for _, av := range st.Axes {
		if slices.Contains(axes, av.Axis) {
			return fmt.Errorf("step %d: axis %s twice", st.Seq, av.Axis)
		}
		axes = append(axes, av.Axis)
		at := slices.IndexFunc(plan.Sweeps, func(sw sweep.Sweep) bool { return sw.Axis == av.Axis })
		if at < 0 {
			return fmt.Errorf("step %d: axis %s=%s: the plan does not sweep %s", st.Seq, av.Axis, av.Value, av.Axis)
		}
		if !slices.Contains(plan.Sweeps[at].Values, av.Value) {
			return fmt.Errorf("step %d: %s=%q is none of the plan's values (%s)", st.Seq, av.Axis, av.Value, strings.Join(plan.Sweeps[at].Values, ", "))
		}
	}
	return nil
}
