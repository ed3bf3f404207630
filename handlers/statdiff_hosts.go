package handlers

import (
	"fmt"
	"slices"

	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
	"iolab/handlers/chart"
)

// hostStats is the statistical difference between a group's hosts: for
// every step of the plan (its axes, repeats apart) and every job, each
// host's repeats against the first host's, by stats.Compare (the change
// as the ratio of the medians, its interval and Mann–Whitney's test at
// 95 %), for IOPS and p99 of latency kind Lat (lat, from submission,
// unless the page asks another: hosts are compared) — or, where both hosts
// paced every repeat of a job (rate, rate_iops) and the page did not ask
// a kind, p99 from each I/O's intended start, as the QoS curve and the
// compare page's diff compare paced steps.
type hostStats struct {
	Base string // the host the others are compared with
	Lat  summary.LatKind
	// Intended counts the rows compared from the intended start.
	Intended int
	Rows     []hostStatRow
	// TooFew: some comparison had too few repeats to tell either way.
	TooFew bool
	// MinRepeats is the fewest repeats per side that can tell at 95 %.
	MinRepeats int
}

// hostStatRow is one host, step and job against the base host.
type hostStatRow struct {
	Host, Step, Job     string
	BaseIOPS, IOPS      string // medians over repeats
	IOPSDiff, P99Diff   string // stats.Comparison.String()
	IOPSClass, P99Class string // "significant", "not-significant", "too-few"
	// P99Lat is the latency P99Diff compares: hostStats.Lat, or
	// summary.LatIntended for a paced job.
	P99Lat summary.LatKind
}

// repeats are one run's figures per step and job, over its done repeats.
type repeats struct {
	order []string // step keys in plan order
	iops  map[string]map[string][]float64
	p99   map[string]map[string][]float64
	// p99i is p99 from the intended start, of the repeats that were
	// paced.
	p99i map[string]map[string][]float64
	jobs map[string][]string
}

func repeatsOf(r *chart.LoadedRun, lat summary.LatKind) *repeats {
	out := &repeats{iops: map[string]map[string][]float64{}, p99: map[string]map[string][]float64{},
		p99i: map[string]map[string][]float64{}, jobs: map[string][]string{}}
	for i := range r.Steps {
		st := &r.Steps[i]
		if summary.StepStatus(st) != sweep.StepDone {
			continue
		}
		key := sweep.FormatAxes(st.Step.Axes) // "" when the plan sweeps nothing
		if _, ok := out.iops[key]; !ok {
			out.order = append(out.order, key)
			out.iops[key], out.p99[key], out.p99i[key] = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		}
		for _, j := range summary.FiguresOf(st).Jobs {
			if i := j.As(summary.LatIntended); !j.Total && i.IOs > 0 && i.P99 > 0 {
				out.p99i[key][j.Name] = append(out.p99i[key][j.Name], float64(i.P99))
			}
			j = j.As(lat)
			if j.Total {
				continue
			}
			if !slices.Contains(out.jobs[key], j.Name) {
				out.jobs[key] = append(out.jobs[key], j.Name)
			}
			out.iops[key][j.Name] = append(out.iops[key][j.Name], j.IOPS)
			if j.P99 > 0 {
				out.p99[key][j.Name] = append(out.p99[key][j.Name], float64(j.P99))
			}
		}
	}
	return out
}

// paced reports whether every repeat of job at step key with latency
// figures kept them from the intended start too.
func (r *repeats) paced(key, job string) bool {
	n := len(r.p99i[key][job])
	return n > 0 && n == len(r.p99[key][job])
}

// hostDiffs compares each host's runs with the first host's, on p99 of
// latency kind lat; when asked is false (the page picked no kind), jobs
// paced on both hosts compare p99 from the intended start instead. Nil
// for fewer than two runs.
func hostDiffs(runs []chart.LoadedRun, members []groupMemberView, lat summary.LatKind, asked bool) *hostStats {
	if len(runs) < 2 {
		return nil
	}
	name := func(i int) string {
		if i < len(members) {
			return members[i].Host
		}
		return fmt.Sprintf("run %d", runs[i].Run.ID)
	}
	out := &hostStats{Base: name(0), Lat: lat, MinRepeats: minRepeats(0.95)}
	base := repeatsOf(&runs[0], lat)
	for i := 1; i < len(runs); i++ {
		other := repeatsOf(&runs[i], lat)
		for _, key := range base.order {
			for _, job := range base.jobs[key] {
				b, o := base.iops[key][job], other.iops[key][job]
				if len(o) == 0 {
					continue
				}
				row := hostStatRow{Host: name(i), Step: key, Job: job,
					BaseIOPS: units.Count(stats.Median(b)), IOPS: units.Count(stats.Median(o))}
				c := stats.Compare(b, o, 0.95)
				row.IOPSDiff, row.IOPSClass = c.String(), verdictClass(c.Verdict)
				bp, op := base.p99[key][job], other.p99[key][job]
				row.P99Lat = lat
				if !asked && base.paced(key, job) && other.paced(key, job) {
					bp, op = base.p99i[key][job], other.p99i[key][job]
					row.P99Lat = summary.LatIntended
					out.Intended++
				}
				if len(bp) > 0 && len(op) > 0 {
					pc := stats.Compare(bp, op, 0.95)
					row.P99Diff, row.P99Class = pc.String(), verdictClass(pc.Verdict)
					out.TooFew = out.TooFew || pc.Verdict == stats.TooFew
				}
				out.TooFew = out.TooFew || c.Verdict == stats.TooFew
				out.Rows = append(out.Rows, row)
			}
		}
	}
	if key := base.order; len(key) == 1 && key[0] == "" {
		for i := range out.Rows {
			out.Rows[i].Step = "–"
		}
	}
	return out
}

func verdictClass(v stats.Verdict) string {
	switch v {
	case stats.Significant:
		return "significant"
	case stats.NotSignificant:
		return "not-significant"
	}
	return "too-few"
}

// minRepeats is the fewest repeats on each side with which two sets of
// repeats can differ significantly at conf: below it Compare says "too
// few repeats to tell" whatever the numbers.
func minRepeats(conf float64) int {
	for n := 1; n < 20; n++ {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = float64(i+1), float64(i+1000)
		}
		if stats.Compare(a, b, conf).Verdict == stats.Significant {
			return n
		}
	}
	return 20
}
