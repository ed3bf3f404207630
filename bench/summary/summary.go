package summary

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// SummaryCell is one combination of a plan's axis values, over its repeats.
type SummaryCell struct {
	// Axes are the combination, in the order of Plan.Sweeps; the repeat
	// index is not an axis.
	Axes []sweep.AxisValue `json:"axes"`
	// IOPS and BW (bytes/s) are each done repeat's totals: every job, reads
	// and writes.
	IOPS stats.Spread `json:"iops"`
	BW   stats.Spread `json:"bw"`
	// Repeats counts the done repeats IOPS and BW summarise; failed and
	// cancelled ones are counted apart and left out of them.
	Repeats   int `json:"repeats"`
	Failed    int `json:"failed,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	// Errors are the failed repeats' distinct errors, in step order.
	Errors []string `json:"errors,omitempty"`
}

// ScalingStep is a SummaryCell of a plan that sweeps numjobs, with the
// growth the scaling write-up reports at each step.
type ScalingStep struct {
	SummaryCell
	// Growth is the change of the median IOPS from the previous numjobs
	// value (the other axes alike), in percent; nil for the first value or
	// when either has no done repeat.
	Growth *float64 `json:"growth"`
}

// JobSummary is one job of one combination of axis values, over its
// repeats: the fairness view, where a writer and a reader share a disk.
// Clones of a job (numjobs) add up under the job's name.
type JobSummary struct {
	Axes []sweep.AxisValue `json:"axes"`
	Job  string            `json:"job"`
	// LatMean is, in nanoseconds, the job's mean total latency (fio's lat)
	// over reads and writes, weighted by their I/Os, in each repeat.
	LatMean   stats.Spread `json:"lat_mean_ns"`
	IOPS      stats.Spread `json:"iops"`
	BW        stats.Spread `json:"bw"` // bytes/s
	Repeats   int          `json:"repeats"`
	Failed    int          `json:"failed,omitempty"`
	Cancelled int          `json:"cancelled,omitempty"`
	Errors    []string     `json:"errors,omitempty"`
}

// Summarize groups a run's step results by their axis values and
// summarises each group's repeats, in the order of the plan's sweep values.
func Summarize(plan *sweep.Plan, results []sweep.StepResult) []SummaryCell {
	var cells []SummaryCell
	for _, g := range groupSteps(planSweeps(plan), results) {
		cell := SummaryCell{Axes: g.axes}
		var iops, bw []float64
		for _, r := range g.steps {
			switch status, err := stepOutcome(r); status {
			case sweep.StepDone:
				i, b := r.Result.Totals()
				iops, bw = append(iops, i), append(bw, b)
			case sweep.StepFailed:
				cell.Failed++
				cell.Errors = appendUnique(cell.Errors, err)
			default:
				cell.Cancelled++
			}
		}
		cell.Repeats = len(iops)
		cell.IOPS, cell.BW = stats.SpreadOf(iops), stats.SpreadOf(bw)
		cells = append(cells, cell)
	}
	return cells
}

// SummarizeScaling is Summarize for a plan that sweeps numjobs, ordered by
// the other axes and then numjobs, with the growth from one numjobs value
// to the next. It returns nil when the plan does not sweep numjobs.
func SummarizeScaling(plan *sweep.Plan, results []sweep.StepResult) []ScalingStep {
	sweeps := planSweeps(plan)
	nj := slices.IndexFunc(sweeps, func(s sweep.Sweep) bool { return s.Axis == sweep.AxisNumJobs })
	if nj < 0 {
		return nil
	}
	cells := Summarize(plan, results)
	// Summarize sorted by the sweep order; numjobs must vary fastest.
	order := sweepRanks(sweeps, results)
	numJobsLast := func(axes []sweep.AxisValue) []int {
		r := order.ranks(axes)
		n := r[nj]
		return append(slices.Delete(r, nj, nj+1), n)
	}
	slices.SortStableFunc(cells, func(a, b SummaryCell) int {
		return slices.Compare(numJobsLast(a.Axes), numJobsLast(b.Axes))
	})
	steps := make([]ScalingStep, len(cells))
	for i, c := range cells {
		steps[i].SummaryCell = c
		if i == 0 {
			continue
		}
		prev := cells[i-1]
		if !sameExcept(prev.Axes, c.Axes, sweep.AxisNumJobs) || prev.Repeats == 0 || c.Repeats == 0 || prev.IOPS.Median == 0 {
			continue
		}
		g := 100 * (c.IOPS.Median - prev.IOPS.Median) / prev.IOPS.Median
		steps[i].Growth = &g
	}
	return steps
}

// SummarizeJobs summarises each job of each combination of axis values
// separately. A failed or cancelled step counts against each job it was
// to run.
func SummarizeJobs(plan *sweep.Plan, results []sweep.StepResult) []JobSummary {
	var out []JobSummary
	for _, g := range groupSteps(planSweeps(plan), results) {
		var names []string
		type perJob struct {
			lat, iops, bw     []float64
			failed, cancelled int
			errors            []string
		}
		jobs := map[string]*perJob{}
		job := func(name string) *perJob {
			if jobs[name] == nil {
				jobs[name] = &perJob{}
				names = append(names, name)
			}
			return jobs[name]
		}
		for _, r := range g.steps {
			status, err := stepOutcome(r)
			if status != sweep.StepDone {
				for _, name := range stepJobNames(plan, r) {
					j := job(name)
					if status == sweep.StepFailed {
						j.failed++
						j.errors = appendUnique(j.errors, err)
					} else {
						j.cancelled++
					}
				}
				continue
			}
			for _, t := range jobTotals(r.Result) {
				j := job(t.name)
				j.lat = append(j.lat, t.lat.Mean)
				j.iops = append(j.iops, t.iops)
				j.bw = append(j.bw, t.bw)
			}
		}
		for _, name := range names {
			j := jobs[name]
			out = append(out, JobSummary{
				Axes: g.axes, Job: name,
				LatMean: stats.SpreadOf(j.lat), IOPS: stats.SpreadOf(j.iops), BW: stats.SpreadOf(j.bw),
				Repeats: len(j.lat), Failed: j.failed, Cancelled: j.cancelled, Errors: j.errors,
			})
		}
	}
	return out
}

// WriteSummary prints the tables that end `iolab run`, in the style of the
// write-ups, choosing them by what the plan sweeps:
//
//   - total IOPS, median (min–max) over the repeats, with rows for the
//     first swept of iodepth, numjobs, bs and rw (or else the first swept
//     axis) and a column for each combination of the other axes — IOPS per
//     iodepth × engine;
//   - when numjobs is swept, the aggregate throughput at each numjobs
//     value and its growth from the previous one;
//   - when the steps run more than one job, each job's mean latency and
//     bandwidth per combination — per scheduler, the fairness view.
//
// Failed steps show as "failed [n]", with footnote n giving the first line
// of their error, once per distinct error.
func WriteSummary(w io.Writer, plan *sweep.Plan, results []sweep.StepResult) error {
	sweeps := planSweeps(plan)
	cells := Summarize(plan, results)
	if len(cells) == 0 {
		_, err := io.WriteString(w, "No steps ran.\n")
		return err
	}
	var b strings.Builder
	var notes summaryNotes
	repeats := 0
	for _, c := range cells {
		repeats = max(repeats, c.Repeats+c.Failed+c.Cancelled)
	}
	of := ""
	if repeats > 1 {
		of = fmt.Sprintf(", median (min–max) of %d repeats", repeats)
	}

	onlyNumJobs := len(sweeps) == 1 && sweeps[0].Axis == sweep.AxisNumJobs
	if !onlyNumJobs {
		writeIOPSTable(&b, &notes, sweeps, cells, of)
	}
	if scaling := SummarizeScaling(plan, results); scaling != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		writeScalingTable(&b, &notes, sweeps, scaling, of)
	}
	jobs := SummarizeJobs(plan, results)
	if distinctJobs(jobs) > 1 {
		b.WriteString("\n")
		writeJobsTable(&b, &notes, sweeps, jobs, of)
	}
	notes.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeIOPSTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, cells []SummaryCell, of string) {
	row := rowAxis(sweeps)
	var cols []sweep.Axis
	for _, s := range sweeps {
		if s.Axis != row {
			cols = append(cols, s.Axis)
		}
	}
	names := []string{}
	if row != "" {
		names = append(names, string(row))
	}
	for _, a := range cols {
		names = append(names, string(a))
	}
	title := "Total IOPS"
	if len(cols) == 0 {
		title = "Total IOPS and bandwidth"
	}
	if len(names) > 0 {
		title += " by " + strings.Join(names, " × ")
	}
	fmt.Fprintf(b, "%s%s\n\n", title, of)

	tw := newSummaryTable(b)
	if len(cols) == 0 {
		// One column of figures: a row per cell, with bandwidth beside.
		var header []string
		if row != "" {
			header = append(header, string(row))
		}
		tw.row(append(header, "IOPS", "bandwidth")...)
		for _, c := range cells {
			var line []string
			if row != "" {
				line = append(line, axisValueOf(c.Axes, row))
			}
			iops, bw := cellText(notes, c, c.IOPS, units.Count), ""
			if c.Repeats > 0 {
				bw = spreadText(c.BW, c.Repeats, units.Rate)
			}
			tw.row(append(line, iops, bw)...)
		}
		tw.flush()
		return
	}

	// Rows and columns in the order the cells come (the sweep order);
	// a combination that did not run is "-".
	var rows, colKeys []string
	colLabel := map[string]string{}
	byKey := map[[2]string]SummaryCell{}
	for _, c := range cells {
		r := axisValueOf(c.Axes, row)
		var vals []string
		for _, a := range cols {
			vals = append(vals, axisValueOf(c.Axes, a))
		}
		k := strings.Join(vals, "\x00")
		if !slices.Contains(rows, r) {
			rows = append(rows, r)
		}
		if !slices.Contains(colKeys, k) {
			colKeys = append(colKeys, k)
			colLabel[k] = strings.Join(vals, "/")
		}
		byKey[[2]string{r, k}] = c
	}
	// Column order: sort by the sweep order of the column axes alone, since
	// the cells' order puts the row axis among them.
	order := sweepRanksOf(sweeps)
	slices.SortStableFunc(colKeys, func(x, y string) int {
		return slices.Compare(order.ranksOf(cols, strings.Split(x, "\x00")), order.ranksOf(cols, strings.Split(y, "\x00")))
	})
	slices.SortStableFunc(rows, func(x, y string) int {
		return slices.Compare(order.ranksOf([]sweep.Axis{row}, []string{x}), order.ranksOf([]sweep.Axis{row}, []string{y}))
	})
	header := []string{string(row)}
	for _, k := range colKeys {
		header = append(header, colLabel[k])
	}
	tw.row(header...)
	for _, r := range rows {
		line := []string{r}
		for _, k := range colKeys {
			c, ok := byKey[[2]string{r, k}]
			if !ok {
				line = append(line, "-")
				continue
			}
			line = append(line, cellText(notes, c, c.IOPS, units.Count))
		}
		tw.row(line...)
	}
	tw.flush()
}

func writeScalingTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, steps []ScalingStep, of string) {
	fmt.Fprintf(b, "Scaling with numjobs: total IOPS and bandwidth%s; growth of the median IOPS from the previous numjobs\n\n", of)
	var others []sweep.Axis
	for _, s := range sweeps {
		if s.Axis != sweep.AxisNumJobs {
			others = append(others, s.Axis)
		}
	}
	tw := newSummaryTable(b)
	var header []string
	for _, a := range others {
		header = append(header, string(a))
	}
	tw.row(append(header, "numjobs", "IOPS", "bandwidth", "growth")...)
	for i, s := range steps {
		var line []string
		for _, a := range others {
			v := axisValueOf(s.Axes, a)
			if i > 0 && sameExcept(steps[i-1].Axes, s.Axes, sweep.AxisNumJobs) {
				v = "" // the group's first row names it
			}
			line = append(line, v)
		}
		bw, growth := "", "-"
		if s.Repeats > 0 {
			bw = spreadText(s.BW, s.Repeats, units.Rate)
		}
		if s.Growth != nil {
			growth = fmt.Sprintf("%+.1f%%", *s.Growth)
		}
		tw.row(append(line, axisValueOf(s.Axes, sweep.AxisNumJobs), cellText(notes, s.SummaryCell, s.IOPS, units.Count), bw, growth)...)
	}
	tw.flush()
}

func writeJobsTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, jobs []JobSummary, of string) {
	fmt.Fprintf(b, "Per job: mean latency (lat, over reads and writes) and bandwidth%s\n\n", of)
	tw := newSummaryTable(b)
	var header []string
	for _, s := range sweeps {
		header = append(header, string(s.Axis))
	}
	tw.row(append(header, "job", "lat mean", "bandwidth")...)
	for i, j := range jobs {
		var line []string
		for _, s := range sweeps {
			v := axisValueOf(j.Axes, s.Axis)
			if i > 0 && slices.Equal(jobs[i-1].Axes, j.Axes) {
				v = ""
			}
			line = append(line, v)
		}
		c := SummaryCell{Repeats: j.Repeats, Failed: j.Failed, Cancelled: j.Cancelled, Errors: j.Errors}
		bw := ""
		if j.Repeats > 0 {
			bw = spreadText(j.BW, j.Repeats, units.Rate)
		}
		tw.row(append(line, j.Job, cellText(notes, c, j.LatMean, units.Nanos), bw)...)
	}
	tw.flush()
}

// cellText is a cell's figure as "median (min–max)", or why there is none:
// "failed [n]" with its footnote, "cancelled", or "-" (nothing ran). Failed
// or cancelled repeats beside done ones are counted after the figure.
func cellText(notes *summaryNotes, c SummaryCell, s stats.Spread, format func(float64) string) string {
	marks := notes.marks(c.Errors)
	if c.Repeats == 0 {
		switch {
		case c.Failed > 0:
			return "failed " + marks
		case c.Cancelled > 0:
			return "cancelled"
		}
		return "-"
	}
	t := spreadText(s, c.Repeats, format)
	if c.Failed > 0 {
		t += fmt.Sprintf(", %d failed %s", c.Failed, marks)
	}
	if c.Cancelled > 0 {
		t += fmt.Sprintf(", %d cancelled", c.Cancelled)
	}
	return t
}

func spreadText(s stats.Spread, n int, format func(float64) string) string {
	if n == 1 {
		return format(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", format(s.Median), format(s.Min), format(s.Max))
}

// summaryNotes number the distinct errors of failed steps by their first
// line, in the order the tables first show them.
type summaryNotes struct {
	lines []string
}

func (n *summaryNotes) marks(errors []string) string {
	var ids []string
	for _, e := range errors {
		line, _, _ := strings.Cut(e, "\n")
		i := slices.Index(n.lines, line)
		if i < 0 {
			n.lines = append(n.lines, line)
			i = len(n.lines) - 1
		}
		if id := strconv.Itoa(i + 1); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return "[" + strings.Join(ids, ",") + "]"
}

func (n *summaryNotes) write(b *strings.Builder) {
	if len(n.lines) > 0 {
		b.WriteString("\n")
	}
	for i, l := range n.lines {
		fmt.Fprintf(b, "[%d] %s\n", i+1, l)
	}
}

// summaryTable writes tab-separated rows aligned in columns two spaces apart.
type summaryTable struct{ tw *tabwriter.Writer }

func newSummaryTable(w io.Writer) summaryTable {
	return summaryTable{tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)}
}

func (t summaryTable) row(cells ...string) {
	// A trailing tab would pad the last column with spaces.
	io.WriteString(t.tw, strings.Join(cells, "\t")+"\n")
}

func (t summaryTable) flush() { t.tw.Flush() }

// rowAxis is the axis a summary's rows follow: the first swept of the
// ones with an order to them (iodepth, numjobs, bs, rw), else the first
// swept, else none.
func rowAxis(sweeps []sweep.Sweep) sweep.Axis {
	for _, a := range []sweep.Axis{sweep.AxisIODepth, sweep.AxisNumJobs, sweep.AxisBS, sweep.AxisRW} {
		if slices.ContainsFunc(sweeps, func(s sweep.Sweep) bool { return s.Axis == a }) {
			return a
		}
	}
	if len(sweeps) > 0 {
		return sweeps[0].Axis
	}
	return ""
}

func planSweeps(plan *sweep.Plan) []sweep.Sweep {
	if plan == nil {
		return nil
	}
	return plan.Sweeps
}

// stepGroup is the steps of one combination of axis values: its repeats.
type stepGroup struct {
	axes  []sweep.AxisValue
	steps []*sweep.StepResult // in Seq order
}

// groupSteps groups results by their values on the sweeps' axes, ordered
// by each axis's value order in its sweep (values a sweep does not list
// come after, in the order they appear).
func groupSteps(sweeps []sweep.Sweep, results []sweep.StepResult) []stepGroup {
	idx := make([]int, len(results))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(results[a].Step.Seq, results[b].Step.Seq) })
	var groups []stepGroup
	byKey := map[string]int{}
	for _, i := range idx {
		r := &results[i]
		axes := make([]sweep.AxisValue, len(sweeps))
		vals := make([]string, len(sweeps))
		for k, s := range sweeps {
			axes[k] = sweep.AxisValue{Axis: s.Axis, Value: r.Step.Value(s.Axis)}
			vals[k] = axes[k].Value
		}
		key := strings.Join(vals, "\x00")
		g, ok := byKey[key]
		if !ok {
			g = len(groups)
			byKey[key] = g
			groups = append(groups, stepGroup{axes: axes})
		}
		groups[g].steps = append(groups[g].steps, r)
	}
	order := sweepRanks(sweeps, results)
	slices.SortStableFunc(groups, func(a, b stepGroup) int {
		return slices.Compare(order.ranks(a.axes), order.ranks(b.axes))
	})
	return groups
}

// valueRanks orders each axis's values: as its sweep lists them, then
// the others in the order results show them.
type valueRanks map[sweep.Axis]map[string]int

func sweepRanksOf(sweeps []sweep.Sweep) valueRanks {
	r := valueRanks{}
	for _, s := range sweeps {
		r[s.Axis] = map[string]int{}
		for i, v := range s.Values {
			if _, dup := r[s.Axis][v]; !dup {
				r[s.Axis][v] = i
			}
		}
	}
	return r
}

func sweepRanks(sweeps []sweep.Sweep, results []sweep.StepResult) valueRanks {
	r := sweepRanksOf(sweeps)
	for _, s := range sweeps {
		m := r[s.Axis]
		for i := range results {
			v := results[i].Step.Value(s.Axis)
			if _, ok := m[v]; !ok {
				m[v] = len(s.Values) + len(m)
			}
		}
	}
	return r
}

func (r valueRanks) ranks(axes []sweep.AxisValue) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = r.rank(a.Axis, a.Value)
	}
	return out
}

func (r valueRanks) ranksOf(axes []sweep.Axis, vals []string) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = r.rank(a, vals[i])
	}
	return out
}

func (r valueRanks) rank(a sweep.Axis, v string) int {
	if i, ok := r[a][v]; ok {
		return i
	}
	return math.MaxInt
}

func axisValueOf(axes []sweep.AxisValue, a sweep.Axis) string {
	for _, v := range axes {
		if v.Axis == a {
			return v.Value
		}
	}
	return ""
}

// sameExcept reports whether x and y agree on every axis but skip.
func sameExcept(x, y []sweep.AxisValue, skip sweep.Axis) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Axis != skip && x[i] != y[i] {
			return false
		}
	}
	return true
}

// StepStatus is a step's outcome as the summaries count it: sweep.StepDone,
// StepFailed (whatever its status says, when a job in it failed or it left
// no result) or StepCancelled. Charts and tables that leave failed steps
// out of their numbers ask it, so that they count what the summaries count.
func StepStatus(r *sweep.StepResult) string {
	status, _ := stepOutcome(r)
	return status
}

// stepOutcome is a step's status for the summary and, when it failed, why. A
// step counts as failed when a job in it failed or it left no result,
// whatever its status says.
func stepOutcome(r *sweep.StepResult) (status, err string) {
	switch r.Status {
	case sweep.StepCancelled:
		return sweep.StepCancelled, ""
	case sweep.StepFailed:
		if r.Error == "" {
			return sweep.StepFailed, "step failed without an error message"
		}
		return sweep.StepFailed, r.Error
	}
	if r.Result == nil {
		return sweep.StepFailed, "step left no result"
	}
	for _, g := range r.Result.Groups {
		for i := range g.Jobs { // by index: a JobResult holds ~90 KB of histograms
			if j := &g.Jobs[i]; j.Error != "" {
				return sweep.StepFailed, j.Name + ": " + j.Error
			}
		}
	}
	return sweep.StepDone, ""
}

type jobTotal struct {
	name     string
	lat      hist.LatStat // over both directions and the job's clones
	iops, bw float64
}

// jobTotals adds up a step's results per job name, in the order the jobs
// come.
func jobTotals(res *bench.Result) []jobTotal {
	var out []jobTotal
	for _, g := range res.Groups {
		for i := range g.Jobs {
			r := &g.Jobs[i]
			k := slices.IndexFunc(out, func(t jobTotal) bool { return t.name == r.Name })
			if k < 0 {
				out = append(out, jobTotal{name: r.Name})
				k = len(out) - 1
			}
			t := &out[k]
			for d := range 2 {
				t.lat.Merge(&r.Dirs[d].Lat.Stat)
				t.iops += r.IOPS(d)
				t.bw += r.BW(d)
			}
		}
	}
	return out
}

// stepJobNames are the names of the jobs a step was to run: from its
// config, else from the plan's.
func stepJobNames(plan *sweep.Plan, r *sweep.StepResult) []string {
	var names []string
	add := func(cfg *bench.Config) {
		for _, g := range cfg.Groups {
			for _, j := range g.Jobs {
				if !slices.Contains(names, j.Name) {
					names = append(names, j.Name)
				}
			}
		}
	}
	add(&r.Step.Config)
	if len(names) == 0 && plan != nil {
		add(&plan.Base)
	}
	if len(names) == 0 && r.Result != nil {
		for _, t := range jobTotals(r.Result) {
			names = append(names, t.name)
		}
	}
	return names
}

func distinctJobs(jobs []JobSummary) int {
	var names []string
	for _, j := range jobs {
		if !slices.Contains(names, j.Job) {
			names = append(names, j.Job)
		}
	}
	return len(names)
}

// appendUnique appends s to list unless it is there already.
func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
