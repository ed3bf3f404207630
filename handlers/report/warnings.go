package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
)

// Warning is one reason a comparison may not be fair: what differs
// between the runs (Field) and why it matters (Msg).
type Warning struct {
	Field string `json:"field"`
	Msg   string `json:"msg"`
}

// runSetup is what a run was measured with, as the comparison sees it:
// host, devices and plan, each as text ("" when unknown).
type runSetup struct {
	label                        string // "run 3"
	iommu, governor              string
	model, driver, ioPoll        string
	firmware                     string
	bs, rw, direct               string
	engineOpts                   string // hipri, sqpoll, fixedbufs used by a done step (the plan's before any step)
	runtime, ramp                time.Duration
	repeat                       int
	hipri                        bool // a done step used hipri (or, without steps, the plan does)
	engines, iodepths, numjobs   string
	hostname, kernel, cpu, sched string
	// rates are the rate_iops steps; slo the objective a QoS curve's
	// knee is found under ("" for a run without one).
	rates, slo string
}

// sweepOr is the plan's sweep values on a (joined), else def.
func sweepOr(p *sweep.Plan, a sweep.Axis, def string) string {
	for _, s := range p.Sweeps {
		if s.Axis == a && len(s.Values) > 0 {
			return strings.Join(s.Values, ", ")
		}
	}
	return def
}

func setupOf(rd *chart.LoadedRun) runSetup {
	r := &rd.Run
	s := runSetup{label: "run " + strconv.FormatInt(r.ID, 10), iommu: r.Host.IOMMU.Mode, governor: r.Host.Governor,
		hostname: r.Hostname, kernel: r.Kernel, cpu: r.Host.CPUModel, repeat: r.Plan.Repeat}
	if rd.Host != "" {
		s.label = rd.Host + " (" + s.label + ")"
	}
	if s.hostname == "" {
		s.hostname = r.Host.Hostname
	}
	if s.kernel == "" {
		s.kernel = r.Host.KernelRelease
	}
	var models, firmwares, drivers, polls, scheds []string
	for _, t := range r.Targets {
		models = appendNew(models, t.Model)
		firmwares = appendNew(firmwares, t.Firmware)
		drivers = appendNew(drivers, t.Driver)
		polls = appendNew(polls, strconv.FormatBool(t.IOPoll))
		scheds = appendNew(scheds, t.Scheduler)
	}
	s.model, s.driver, s.ioPoll = strings.Join(models, ", "), strings.Join(drivers, ", "), strings.Join(polls, ", ")
	s.firmware = strings.Join(firmwares, ", ")
	s.sched = sweepOr(&r.Plan, sweep.AxisScheduler, strings.Join(scheds, ", "))

	job := rd.BaseJob()
	var variants []string
	if job != nil {
		s.direct = strconv.FormatBool(job.Direct)
		s.runtime, s.ramp = job.Runtime, job.RampTime
		variants = append(variants, bench.EngineVariant(job))
	}
	if r.Plan.Runtime > 0 {
		s.runtime = r.Plan.Runtime
	}
	if r.Plan.RampTime > 0 {
		s.ramp = r.Plan.RampTime
	}
	// The swept values, else the base job's, through the axis table.
	s.bs = sweepOr(&r.Plan, sweep.AxisBS, rd.JobValue(sweep.AxisBS))
	s.rw = sweepOr(&r.Plan, sweep.AxisRW, rd.JobValue(sweep.AxisRW))
	s.iodepths = sweepOr(&r.Plan, sweep.AxisIODepth, rd.JobValue(sweep.AxisIODepth))
	s.numjobs = sweepOr(&r.Plan, sweep.AxisNumJobs, rd.JobValue(sweep.AxisNumJobs))
	s.rates = sweepOr(&r.Plan, sweep.AxisRateIOPS, rd.JobValue(sweep.AxisRateIOPS))
	if summary.QoSLoadAxis(&r.Plan) != "" {
		s.slo = summary.PlanSLO(&r.Plan).String()
	}
	for _, sw := range r.Plan.Sweeps {
		if sw.Axis == sweep.AxisEngine {
			variants = slices.Clone(sw.Values)
		}
	}
	// Steps say what really ran: an imported run may have no plan sweeps.
	// The engine options the warnings speak of are those of the done
	// steps: a hipri step that failed did no I/O, polled or not.
	var ran []string
	steps := rd.StepSummaries()
	for i := range steps {
		st := &steps[i]
		for j := range st.Step.Config.Jobs {
			v := bench.EngineVariant(&st.Step.Config.Jobs[j])
			variants = appendNew(variants, v)
			if summary.StatusOf(st) == sweep.StepDone {
				ran = appendNew(ran, v)
			}
		}
		if n := st.Step.Repeat + 1; n > s.repeat {
			s.repeat = n
		}
	}
	s.engines = strings.Join(variants, ", ")
	if len(steps) > 0 {
		// An engine the run left out (skipped as impossible, or every
		// step of it failed) is not one it compares: the table says so
		// rather than list it with those that ran.
		var out []string
		for _, v := range variants {
			if !slices.Contains(ran, v) {
				out = append(out, v)
			}
		}
		if len(out) > 0 {
			s.engines = strings.TrimPrefix(strings.Join(ran, ", ")+"; no step done: "+strings.Join(out, ", "), "; ")
		}
		variants = ran // "" when no step is done: nothing ran to compare
	}
	var opts []string
	for _, v := range variants {
		for _, o := range strings.Split(v, "+")[1:] {
			if o == "hipri" || o == "sqpoll" || o == "fixedbufs" {
				opts = appendNew(opts, o)
			}
		}
	}
	slices.Sort(opts)
	s.hipri = slices.Contains(opts, "hipri")
	s.engineOpts = strings.Join(opts, "+")
	if s.engineOpts == "" && len(variants) > 0 {
		s.engineOpts = "none"
	}
	return s
}

// setupsOf is each run's setup.
func setupsOf(runs []chart.LoadedRun) []runSetup {
	setups := make([]runSetup, len(runs))
	for i := range runs {
		setups[i] = setupOf(&runs[i])
	}
	return setups
}

// differs lists "run N value" for each run when the known values
// (non-empty) are not all equal; nil when they are.
func differs(setups []runSetup, get func(*runSetup) string) []string {
	var known []string
	for i := range setups {
		known = appendNew(known, get(&setups[i]))
	}
	if len(known) < 2 {
		return nil
	}
	out := make([]string, len(setups))
	for i := range setups {
		v := get(&setups[i])
		if v == "" {
			v = "unknown"
		}
		out[i] = setups[i].label + " " + v
	}
	return out
}

// CompareWarnings says what differs between runs that can move their
// numbers besides what is being compared (kernel, engine, scheduler), and
// which runs cannot be judged on their own (a single repeat). Runs with
// nothing in doubt give none.
func CompareWarnings(runs []chart.LoadedRun) []Warning { return compareWarnings(runs, setupsOf(runs)) }

func compareWarnings(runs []chart.LoadedRun, setups []runSetup) []Warning {
	var out []Warning
	check := func(field string, get func(*runSetup) string, why string) {
		if d := differs(setups, get); d != nil {
			out = append(out, Warning{Field: field, Msg: fmt.Sprintf("%s differs (%s): %s", field, strings.Join(d, "; "), why)})
		}
	}
	if len(runs) > 1 {
		check("IOMMU mode", func(s *runSetup) string { return s.iommu },
			"DMA remapping costs time on every I/O — it moved IOPS by ~30 % between otherwise equal kernels, so part of the gap may be the IOMMU, not the kernel or engine.")
		check("device model", func(s *runSetup) string { return s.model },
			"different devices have different limits; the gap may be the hardware.")
		if differs(setups, func(s *runSetup) string { return s.model }) == nil {
			check("firmware", func(s *runSetup) string { return s.firmware },
				"the same device model on other firmware can differ in garbage collection, power states and queueing; the gap may be the firmware.")
		}
		check("device driver", func(s *runSetup) string { return s.driver },
			"the driver's submission and completion paths differ; the gap may be the driver.")
		check("block size", func(s *runSetup) string { return s.bs },
			"IOPS and latency scale with the I/O size; compare equal block sizes.")
		check("rw", func(s *runSetup) string { return s.rw },
			"reads, writes, random and sequential access load the device differently.")
		check("direct", func(s *runSetup) string { return s.direct },
			"buffered I/O goes through the page cache and measures memory as much as the device.")
		check("engine options", func(s *runSetup) string { return s.engineOpts },
			"hipri (polled completions), sqpoll (a kernel submission thread) and fixedbufs (registered buffers) each change IOPS and CPU cost by themselves.")
		check("CPU governor", func(s *runSetup) string { return s.governor },
			"a power-saving governor lowers clocks between I/Os, raising latency and lowering IOPS at low queue depths.")
		check("poll queues (io_poll)", func(s *runSetup) string { return s.ioPoll },
			"without poll queues hipri falls back to interrupts, so polled I/O is not what ran on every side.")
		for _, w := range []struct {
			field string
			get   func(*runSetup) time.Duration
			why   string
		}{
			{"runtime", func(s *runSetup) time.Duration { return s.runtime }, "short steps are noisier and may end before caches, SLC and garbage collection settle."},
			{"ramp time", func(s *runSetup) time.Duration { return s.ramp }, "without enough ramp the first, unsteady seconds are counted."},
		} {
			var lo, hi time.Duration
			var loRun, hiRun string
			for i := range setups {
				v := w.get(&setups[i])
				if v <= 0 {
					continue
				}
				if lo == 0 || v < lo {
					lo, loRun = v, setups[i].label
				}
				if v > hi {
					hi, hiRun = v, setups[i].label
				}
			}
			if lo > 0 && lo*2 < hi {
				out = append(out, Warning{Field: w.field, Msg: fmt.Sprintf("%s is much shorter in %s (%s) than in %s (%s): %s",
					w.field, loRun, lo, hiRun, hi, w.why)})
			}
		}
	}
	var single []string
	for i := range setups {
		if setups[i].repeat <= 1 {
			single = append(single, setups[i].label)
		}
	}
	if len(single) > 0 {
		out = append(out, Warning{Field: "repeats", Msg: fmt.Sprintf("a single repeat in %s: there is no spread to judge, so a difference may be noise.",
			strings.Join(single, ", "))})
	}
	for i := range setups {
		if setups[i].hipri && setups[i].ioPoll == "false" {
			out = append(out, Warning{Field: "poll queues (io_poll)", Msg: fmt.Sprintf("%s uses hipri but its device has no poll queues (io_poll off): its polled I/O fell back to interrupts.",
				setups[i].label)})
		}
	}
	return out
}

// EnvDiff is one line of the environment and plan differences: a field
// and each run's value.
type EnvDiff struct {
	Field  string   `json:"field"`
	Values []string `json:"values"`
}

// EnvDiffs lists the environment and plan fields whose values are not the
// same in every run.
func EnvDiffs(runs []chart.LoadedRun) []EnvDiff {
	setups := setupsOf(runs)
	dur := func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return d.String()
	}
	fields := []struct {
		name string
		get  func(*chart.LoadedRun, *runSetup) string
	}{
		{"host", func(_ *chart.LoadedRun, s *runSetup) string { return s.hostname }},
		{"kernel", func(_ *chart.LoadedRun, s *runSetup) string { return s.kernel }},
		{"kernel version", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.KernelVersion }},
		{"arch", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.Arch }},
		{"CPU", func(_ *chart.LoadedRun, s *runSetup) string { return system.Known(s.cpu) }},
		{"CPUs", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.CPUs() }},
		{"memory", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.Memory() }},
		{"kernel command line", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.Cmdline }},
		{"IOMMU mode", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Host.IOMMUMode() }},
		{"CPU governor", func(_ *chart.LoadedRun, s *runSetup) string { return s.governor }},
		{"target", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Target }},
		{"device model", func(_ *chart.LoadedRun, s *runSetup) string { return s.model }},
		{"firmware", func(_ *chart.LoadedRun, s *runSetup) string { return s.firmware }},
		{"driver", func(_ *chart.LoadedRun, s *runSetup) string { return s.driver }},
		{"scheduler", func(_ *chart.LoadedRun, s *runSetup) string { return s.sched }},
		{"io_poll", func(_ *chart.LoadedRun, s *runSetup) string { return s.ioPoll }},
		{"preset", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Plan.Preset }},
		{"source", func(r *chart.LoadedRun, _ *runSetup) string { return r.Run.Source }},
		{"block size", func(_ *chart.LoadedRun, s *runSetup) string { return s.bs }},
		{"rw", func(_ *chart.LoadedRun, s *runSetup) string { return s.rw }},
		{"direct", func(_ *chart.LoadedRun, s *runSetup) string { return s.direct }},
		{"engines", func(_ *chart.LoadedRun, s *runSetup) string { return s.engines }},
		{"engine options", func(_ *chart.LoadedRun, s *runSetup) string { return s.engineOpts }},
		{"iodepth", func(_ *chart.LoadedRun, s *runSetup) string { return s.iodepths }},
		{"numjobs", func(_ *chart.LoadedRun, s *runSetup) string { return s.numjobs }},
		{"rate_iops", func(_ *chart.LoadedRun, s *runSetup) string { return s.rates }},
		{"QoS objective", func(_ *chart.LoadedRun, s *runSetup) string { return s.slo }},
		{"runtime", func(_ *chart.LoadedRun, s *runSetup) string { return dur(s.runtime) }},
		{"ramp time", func(_ *chart.LoadedRun, s *runSetup) string { return dur(s.ramp) }},
		{"repeats", func(_ *chart.LoadedRun, s *runSetup) string { return itoaNZ(s.repeat) }},
		{"discard before steps", func(r *chart.LoadedRun, _ *runSetup) string { return strconv.FormatBool(r.Run.Plan.Discard) }},
		{"drop caches before steps", func(r *chart.LoadedRun, _ *runSetup) string { return strconv.FormatBool(r.Run.Plan.DropCaches) }},
	}
	var out []EnvDiff
	for _, f := range fields {
		vals := make([]string, len(runs))
		same := true
		for i := range runs {
			vals[i] = f.get(&runs[i], &setups[i])
			if vals[i] != vals[0] {
				same = false
			}
		}
		if same {
			continue
		}
		for i := range vals {
			if vals[i] == "" {
				vals[i] = "–"
			}
		}
		out = append(out, EnvDiff{Field: f.name, Values: vals})
	}
	return out
}

// appendNew appends the values not yet in list, leaving out "".
func appendNew(list []string, vals ...string) []string {
	for _, v := range vals {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

func itoaNZ(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// GroupWarnings are CompareWarnings for one plan's runs on several hosts,
// and the I/O scheduler: on a group's page the hosts are compared, so a
// scheduler that differs between them (not swept by the plan) is one
// more cause of a gap.
func GroupWarnings(runs []chart.LoadedRun) []Warning {
	setups := setupsOf(runs)
	out := compareWarnings(runs, setups)
	if d := differs(setups, func(s *runSetup) string { return s.sched }); d != nil {
		out = append(out, Warning{Field: "scheduler", Msg: fmt.Sprintf("scheduler differs (%s): each scheduler queues, merges and dispatches I/O its own way; the gap may be the scheduler, not the host.", strings.Join(d, "; "))})
	}
	return append(out, uncheckedWarnings(runs, setups)...)
}

// checked are the facts of a host the group's warnings compare, each
// with how a run shows it did not record it. Those warnings stay silent
// where one side is unknown, so a host that records none of them (a fio
// server's run: fio's probe says only hostname, OS, architecture and fio
// version) would look as comparable as any.
var checked = []struct {
	name    string
	unknown func(*chart.LoadedRun, *runSetup) bool
}{
	{"IOMMU mode", func(_ *chart.LoadedRun, s *runSetup) bool { return s.iommu == "" }},
	// A device without a model or firmware revision (virtio, loop) has
	// none to record; a run without targets recorded no device at all.
	{"device model", func(r *chart.LoadedRun, _ *runSetup) bool { return len(r.Run.Targets) == 0 }},
	{"firmware", func(r *chart.LoadedRun, _ *runSetup) bool { return len(r.Run.Targets) == 0 }},
	{"scheduler", func(_ *chart.LoadedRun, s *runSetup) bool { return s.sched == "" }},
	// A host without cpufreq records no governor either: only a run that
	// recorded no environment (no kernel) does not know it.
	{"CPU governor", func(r *chart.LoadedRun, _ *runSetup) bool { return r.Run.Host.KernelRelease == "" }},
}

// uncheckedWarnings name, for each set of hosts that lack the same of
// the checked facts, which facts no warning could compare.
func uncheckedWarnings(runs []chart.LoadedRun, setups []runSetup) []Warning {
	if len(runs) < 2 {
		return nil
	}
	var keys []string
	lacking := map[string][]int{}
	for i := range runs {
		var missing []string
		for _, c := range checked {
			if c.unknown(&runs[i], &setups[i]) {
				missing = append(missing, c.name)
			}
		}
		if len(missing) == 0 {
			continue
		}
		k := strings.Join(missing, ", ")
		if _, ok := lacking[k]; !ok {
			keys = append(keys, k)
		}
		lacking[k] = append(lacking[k], i)
	}
	var out []Warning
	for _, k := range keys {
		var labels []string
		fio := true
		for _, i := range lacking[k] {
			labels = append(labels, setups[i].label)
			fio = fio && runs[i].Run.Source == db.SourceFio
		}
		why := "not recorded"
		if fio {
			why = "a fio server reports only its hostname, OS, architecture and fio version"
		}
		out = append(out, Warning{Field: "not checked", Msg: fmt.Sprintf("%s unknown for %s (%s): no warning here can tell whether they differ from the other hosts', so a gap may come from any of them.",
			k, strings.Join(labels, ", "), why)})
	}
	return out
}
