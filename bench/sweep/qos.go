package sweep

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
)

// The QoS curve (issue 13): a rate_iops sweep in percentages of the
// maximum the same run measures first. --sweep rate_iops=10%..100% runs a
// probe step without a rate ("max"), then each percentage of the IOPS each
// job achieved in it; achieved IOPS, not the rate asked for, go along the
// chart's x axis.

// AxisRateIOPS is the rate_iops axis, which takes percentages.
const AxisRateIOPS Axis = "rate_iops"

// RateMax is the rate_iops value of the probe step: no rate at all.
const RateMax = "max"

// maxRatePercent bounds a relative rate: above the probe's maximum is
// allowed (to see past the knee), a hundred times it is not.
const maxRatePercent = 1000

// rateIOPSAxis is the rate_iops row of axisTable: fio's option, plus max
// and percentages of max.
func rateIOPSAxis() AxisSpec {
	spec := optionAxis(AxisRateIOPS, AxisSpec{Form: "rate_iops", Placeholder: "10%..100% (of a first unpaced step), or 1000,2000",
		Help: "cap each job's IOPS; N% is N percent of the IOPS a first step without a rate (max) achieved"})
	spec.Load = true
	apply, get := spec.apply, spec.get
	spec.apply = func(j *bench.Job, v string) ([]bench.Option, error) {
		if v == RateMax {
			j.RateIOPS = [2]int64{}
			return nil, nil
		}
		if _, ok, err := ParseRatePercent(v); ok || err != nil {
			// Set when the step runs, from its probe (ResolveRate).
			j.RateIOPS = [2]int64{}
			return nil, err
		}
		return apply(j, v)
	}
	spec.get = func(j *bench.Job) string {
		if j.RateIOPS == [2]int64{} {
			return "" // no rate: the form's field stays blank
		}
		return get(j)
	}
	spec.expand = expandRatePercents
	return spec
}

// ParseRatePercent reads a relative rate, "N%" with 0 < N ≤ 1000; ok is
// false when v is not written as a percentage at all.
func ParseRatePercent(v string) (pct float64, ok bool, err error) {
	s, found := strings.CutSuffix(strings.TrimSpace(v), "%")
	if !found {
		return 0, false, nil
	}
	pct, err = strconv.ParseFloat(s, 64)
	if err != nil || !(pct > 0 && pct <= maxRatePercent) || math.IsNaN(pct) {
		return 0, true, fmt.Errorf("%q: want a percentage of the probe's IOPS above 0%% and at most %d%%", v, maxRatePercent)
	}
	return pct, true, nil
}

// expandRatePercents expands A%..B% into the multiples of A up to B
// (10%..100% is 10%, 20%, … 100%); ok is false for anything else.
func expandRatePercents(v string) (out []string, ok bool, err error) {
	lo, hi, isRange := strings.Cut(v, "..")
	if !isRange {
		return nil, false, nil
	}
	a, okA, errA := ParseRatePercent(lo)
	b, okB, errB := ParseRatePercent(hi)
	if !okA || !okB || errA != nil || errB != nil || b < a {
		return nil, true, fmt.Errorf("range %s: want A%%..B%% with 0%% < A ≤ B ≤ %d%% (e.g. 10%%..100%%)", v, maxRatePercent)
	}
	n := int(math.Floor(b/a + 1e-9))
	if n > maxSweepValues {
		return nil, true, fmt.Errorf("range %s: %d values; at most %d", v, n, maxSweepValues)
	}
	for i := 1; i <= n; i++ {
		out = append(out, strconv.FormatFloat(a*float64(i), 'f', -1, 64)+"%")
	}
	return out, true, nil
}

// withProbe puts the probe step (max) first in a rate_iops sweep that
// has percentages and no max of its own.
func withProbe(sw Sweep) Sweep {
	if sw.Axis != AxisRateIOPS || slices.Contains(sw.Values, RateMax) {
		return sw
	}
	for _, v := range sw.Values {
		if _, ok, _ := ParseRatePercent(v); ok {
			sw.Values = append([]string{RateMax}, sw.Values...)
			break
		}
	}
	return sw
}

// ResolveRate sets a relative rate step's rate_iops from its probe: the
// last step done before it, among results, with the same values on every
// other axis and rate_iops=max. Each job gets the percentage of the IOPS
// it achieved there, per direction (a group_reporting group's, shared
// among its jobs). A step without a relative rate is left as it is.
func ResolveRate(st *Step, results []StepResult) error {
	v := st.Value(AxisRateIOPS)
	pct, ok, err := ParseRatePercent(v)
	if !ok || err != nil {
		return err
	}
	var probe *StepResult
	for i := len(results) - 1; i >= 0; i-- {
		if isProbeOf(&results[i].Step, st) {
			probe = &results[i]
			break
		}
	}
	if probe == nil || probe.Status != StepDone || probe.Result == nil {
		return fmt.Errorf("rate_iops=%s: its probe step (rate_iops=max, %s) did not succeed: no maximum to take %s of", v, fmtAxes(otherAxes(st.Axes)), v)
	}
	if len(probe.Result.Groups) != len(st.Config.Groups) {
		return fmt.Errorf("rate_iops=%s: the probe step has %d groups, this one %d", v, len(probe.Result.Groups), len(st.Config.Groups))
	}
	for g := range st.Config.Groups {
		jobs, res := st.Config.Groups[g].Jobs, probe.Result.Groups[g].Jobs
		for i := range jobs {
			var r *bench.JobResult
			share := 1.0
			switch {
			case len(res) == len(jobs):
				r = &res[i]
			case len(res) == 1:
				r, share = &res[0], 1/float64(len(jobs))
			default:
				return fmt.Errorf("rate_iops=%s: the probe step has %d results in group %d for %d jobs", v, len(res), g, len(jobs))
			}
			var rate [2]int64
			for d := range 2 {
				if iops := r.IOPS(d) * share; iops > 0 {
					rate[d] = max(int64(math.Round(iops*pct/100)), 1)
				}
			}
			if rate == [2]int64{} {
				return fmt.Errorf("rate_iops=%s: job %s did no I/O in the probe step", v, jobs[i].Name)
			}
			j := &jobs[i]
			value := strconv.FormatInt(rate[bench.Read], 10) + "," + strconv.FormatInt(rate[bench.Write], 10)
			if err := fio.ApplyOption(j, "rate_iops", value); err != nil {
				return fmt.Errorf("rate_iops=%s: job %s: %w", v, j.Name, err)
			}
			j.Options = j.Options[:len(j.Options)-1]
			j.Options = setOption(j.Options, "rate_iops", value)
			if err := fio.FinishJob(j); err != nil {
				return fmt.Errorf("rate_iops=%s: job %s: %w", v, j.Name, err)
			}
		}
	}
	return nil
}

// isProbeOf reports whether step p is the probe of relative rate step st.
func isProbeOf(p, st *Step) bool {
	if p.Value(AxisRateIOPS) != RateMax {
		return false
	}
	return slices.Equal(otherAxes(p.Axes), otherAxes(st.Axes))
}

// otherAxes are a step's axis values but rate_iops.
func otherAxes(avs []AxisValue) []AxisValue {
	return slices.DeleteFunc(slices.Clone(avs), func(av AxisValue) bool { return av.Axis == AxisRateIOPS })
}

// SLO is a latency objective: percentile P of a job's latency stays below
// Max, as --slo p99<1ms writes it.
type SLO struct {
	Percentile float64       `json:"percentile"`
	Max        time.Duration `json:"max_ns"`
}

// DefaultSLO is the QoS curve's objective when none is given.
var DefaultSLO = SLO{Percentile: 99, Max: time.Millisecond}

var sloPattern = regexp.MustCompile(`^p(\d{1,3}(?:\.\d{1,4})?)\s*<\s*([0-9.]+)\s*(ns|us|µs|ms|s)$`)

// ParseSLO reads an objective such as p99<1ms, p99.9<500us or p50 < 2ms:
// a percentile above 0 and below 100, and a latency from 1µs to 60s.
func ParseSLO(s string) (SLO, error) {
	bad := func(why string) (SLO, error) {
		return SLO{}, &bench.OptionError{Option: "slo", Value: s, Msg: fmt.Sprintf("--slo %q: %s; write it as pPERCENTILE<LATENCY, e.g. p99<1ms or p99.9<500us", s, why)}
	}
	m := sloPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return bad("not an objective")
	}
	p, err := strconv.ParseFloat(m[1], 64)
	if err != nil || p <= 0 || p >= 100 {
		return bad("the percentile must be above 0 and below 100")
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.IsNaN(v) {
		return bad("the latency is not a number")
	}
	unit := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}[m[3]]
	ns := v * unit
	if ns < 1e3 || ns > 60e9 {
		return bad("the latency must be from 1µs to 60s")
	}
	return SLO{Percentile: p, Max: time.Duration(math.Round(ns))}, nil
}

// String writes the objective as ParseSLO reads it.
func (o SLO) String() string {
	return "p" + strconv.FormatFloat(o.Percentile, 'f', -1, 64) + "<" + o.Max.String()
}

// SweepOnly reports whether v, on axis a, is a value only a sweep takes
// (a percentage of the probe, max, a range of percentages): a form that
// sets single values as options must make it a sweep.
func (a *AxisSpec) SweepOnly(v string) bool {
	if a.Name != AxisRateIOPS {
		return false
	}
	_, pct, _ := ParseRatePercent(v)
	return pct || v == RateMax || strings.Contains(v, "..")
}
