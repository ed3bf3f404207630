package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/handlers/chart"
)

// SchedTables is one run's scheduler tables on the compare page, from
// summary.Summarize, per job (and the total of alike jobs): IOPS and
// bandwidth per combination of the swept axes (the mixed-workload
// table), and each job's mean latency and bandwidth (the fairness
// table). Never a sum of unlike jobs.
type SchedTables struct {
	RunID int64
	Label string
	Rates *chart.Chart
	Jobs  *chart.Chart // nil when the steps run a single job
}

// NeedSchedTables reports whether the compare page shows the scheduler
// tables: some run sweeps schedulers, or the runs' schedulers differ.
func NeedSchedTables(runs []chart.LoadedRun) bool {
	var first string
	for i, r := range runs {
		if r.Run.Plan.SweepsAxis(sweep.AxisScheduler) {
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

// SchedulerTables builds each run's tables; with prefix, each row starts
// with the run's id (for the CSV, which holds every run).
func SchedulerTables(runs []chart.LoadedRun, prefix bool) []SchedTables {
	const mib = 1 << 20
	var out []SchedTables
	for i := range runs {
		r := &runs[i]
		var axes []sweep.Axis
		for _, s := range r.Run.Plan.Swept() {
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
		t := SchedTables{RunID: r.Run.ID, Label: fmt.Sprintf("run %d %s (%s, %s)", r.Run.ID, r.Run.Name, r.Run.Hostname, r.Run.Kernel)}
		cells := summary.SummarizeSteps(&r.Run.Plan, r.StepSummaries())
		t.Rates = &chart.Chart{Columns: append(slices.Clone(head), "job", "repeats", "failed",
			"iops_min", "iops_median", "iops_max", "iops_cv", "noisy", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s", "disturbed")}
		var names []string
		for _, c := range cells {
			if !slices.Contains(names, c.Name()) {
				names = append(names, c.Name())
			}
			row := append(lead(c.Axes), c.Name(), strconv.Itoa(c.Repeats), strconv.Itoa(c.Failed))
			if c.Repeats == 0 {
				row = append(row, "", "", "", "", "", "", "", "", "")
			} else {
				row = append(row, fmtFig(c.IOPS.Min), fmtFig(c.IOPS.Median), fmtFig(c.IOPS.Max), fmtCV(c.IOPS.CV), strconv.FormatBool(c.IOPS.Noisy()),
					fmtFig(c.BW.Min/mib), fmtFig(c.BW.Median/mib), fmtFig(c.BW.Max/mib), strconv.Itoa(c.Disturbed))
			}
			t.Rates.Rows = append(t.Rates.Rows, row)
		}
		if len(names) > 1 || prefix {
			t.Jobs = &chart.Chart{Columns: append(slices.Clone(head), "job", "repeats", "failed",
				"lat_mean_min_us", "lat_mean_median_us", "lat_mean_max_us", "lat_mean_cv", "noisy", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s")}
			for _, c := range cells {
				row := append(lead(c.Axes), c.Name(), strconv.Itoa(c.Repeats), strconv.Itoa(c.Failed))
				if c.Repeats == 0 {
					row = append(row, "", "", "", "", "", "", "", "")
				} else {
					row = append(row, fmtFig(c.LatMean.Min/1000), fmtFig(c.LatMean.Median/1000), fmtFig(c.LatMean.Max/1000),
						fmtCV(c.LatMean.CV), strconv.FormatBool(c.LatMean.Noisy()),
						fmtFig(c.BW.Min/mib), fmtFig(c.BW.Median/mib), fmtFig(c.BW.Max/mib))
				}
				t.Jobs.Rows = append(t.Jobs.Rows, row)
			}
		}
		out = append(out, t)
	}
	return out
}

// fmtCV writes a coefficient of variation to three places.
func fmtCV(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

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
