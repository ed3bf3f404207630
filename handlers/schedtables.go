package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/handlers/chart"
)

// schedTables is one run's scheduler tables on the compare page, from
// summary.Summarize (total IOPS and bandwidth per combination of the swept
// axes: the mixed-workload table) and summary.SummarizeJobs (each job's mean
// latency and bandwidth: the fairness table).
type schedTables struct {
	RunID  int64
	Label  string
	Totals *chart.Chart
	Jobs   *chart.Chart // nil when the steps run a single job
}

// needSchedTables reports whether the compare page shows the scheduler
// tables: some run sweeps schedulers, or the runs' schedulers differ.
func needSchedTables(runs []chart.Run) bool {
	var first string
	for i, r := range runs {
		if slices.ContainsFunc(r.Run.Plan.Sweeps, func(s sweep.Sweep) bool { return s.Axis == sweep.AxisScheduler }) {
			return true
		}
		s := slices.Clone(r.Run.Schedulers)
		slices.Sort(s)
		key := strings.Join(s, ",")
		if i == 0 {
			first = key
		} else if key != first {
			return true
		}
	}
	return false
}

// schedulerTables builds each run's tables; with prefix, each row starts
// with the run's id (for the CSV, which holds every run).
func schedulerTables(runs []chart.Run, prefix bool) []schedTables {
	const mib = 1 << 20
	var out []schedTables
	for i := range runs {
		r := &runs[i]
		var axes []sweep.Axis
		for _, s := range r.Run.Plan.Sweeps {
			axes = append(axes, s.Axis)
		}
		if !slices.Contains(axes, sweep.AxisScheduler) {
			// A run that does not sweep schedulers ran on one (or none):
			// say which, so the tables compare across runs.
			axes = append([]sweep.Axis{sweep.AxisScheduler}, axes...)
		}
		axisVal := func(avs []sweep.AxisValue, a sweep.Axis) string {
			for _, av := range avs {
				if av.Axis == a {
					return av.Value
				}
			}
			if a == sweep.AxisScheduler {
				return strings.Join(r.Run.Schedulers, ",")
			}
			return ""
		}
		var head []string
		if prefix {
			head = append(head, "run")
		}
		for _, a := range axes {
			head = append(head, string(a))
		}
		lead := func(avs []sweep.AxisValue) []string {
			var row []string
			if prefix {
				row = append(row, strconv.FormatInt(r.Run.ID, 10))
			}
			for _, a := range axes {
				row = append(row, axisVal(avs, a))
			}
			return row
		}
		t := schedTables{RunID: r.Run.ID, Label: fmt.Sprintf("run %d %s (%s, %s)", r.Run.ID, r.Run.Name, r.Run.Hostname, r.Run.Kernel)}
		t.Totals = &chart.Chart{Columns: append(slices.Clone(head), "repeats", "failed",
			"iops_min", "iops_median", "iops_max", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s")}
		for _, c := range summary.Summarize(&r.Run.Plan, r.Steps) {
			row := append(lead(c.Axes), strconv.Itoa(c.Repeats), strconv.Itoa(c.Failed))
			if c.Repeats == 0 {
				row = append(row, "", "", "", "", "", "")
			} else {
				row = append(row, fmtFig(c.IOPS.Min), fmtFig(c.IOPS.Median), fmtFig(c.IOPS.Max),
					fmtFig(c.BW.Min/mib), fmtFig(c.BW.Median/mib), fmtFig(c.BW.Max/mib))
			}
			t.Totals.Rows = append(t.Totals.Rows, row)
		}
		jobs := summary.SummarizeJobs(&r.Run.Plan, r.Steps)
		var names []string
		for _, j := range jobs {
			if !slices.Contains(names, j.Job) {
				names = append(names, j.Job)
			}
		}
		if len(names) > 1 || prefix {
			t.Jobs = &chart.Chart{Columns: append(slices.Clone(head), "job", "repeats", "failed",
				"lat_mean_min_us", "lat_mean_median_us", "lat_mean_max_us", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s")}
			for _, j := range jobs {
				row := append(lead(j.Axes), j.Job, strconv.Itoa(j.Repeats), strconv.Itoa(j.Failed))
				if j.Repeats == 0 {
					row = append(row, "", "", "", "", "", "")
				} else {
					row = append(row, fmtFig(j.LatMean.Min/1000), fmtFig(j.LatMean.Median/1000), fmtFig(j.LatMean.Max/1000),
						fmtFig(j.BW.Min/mib), fmtFig(j.BW.Median/mib), fmtFig(j.BW.Max/mib))
				}
				t.Jobs.Rows = append(t.Jobs.Rows, row)
			}
		}
		out = append(out, t)
	}
	return out
}

// fmtFig rounds a table's figure to what is worth reading.
func fmtFig(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// schedulerCSV is every run's table of one kind (table=schedulers: totals,
// table=jobs: per job) in one CSV, a run column first.
func schedulerCSV(runs []chart.Run, jobs bool) *chart.Chart {
	out := &chart.Chart{}
	for _, t := range schedulerTables(runs, true) {
		src := t.Totals
		if jobs {
			src = t.Jobs
		}
		if src == nil {
			continue
		}
		out.Columns = src.Columns
		out.Rows = append(out.Rows, src.Rows...)
	}
	return out
}
