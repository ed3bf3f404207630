package summary

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// WriteSummary prints the tables that end `iolab run`, in the style of the
// write-ups, choosing them by what the plan sweeps (Plan.Swept: a sweep of
// one value is no axis):
//
//   - IOPS, median (min–max) over the repeats, with rows for the first
//     swept of iodepth, numjobs, bs and rw (or else the first swept axis)
//     and a column for each combination of the other axes — IOPS per
//     iodepth × engine; with several jobs, a row for each job, and one
//     for their total when they are alike;
//   - when numjobs is swept, the aggregate throughput at each numjobs
//     value and its growth from the previous one;
//   - when the steps run more than one job, each job's mean latency and
//     bandwidth per combination — per scheduler, the fairness view.
//
// Failed steps show as "failed [n]", with footnote n giving the first line
// of their error, once per distinct error. Noisy figures (their repeats'
// CV above stats.NoisyCV) are marked ~ and figures with a disturbed
// repeat !, each mark explained under the tables.
func WriteSummary(w io.Writer, plan *sweep.Plan, results []sweep.StepResult) error {
	sweeps := plan.Swept()
	cells := Summarize(plan, results)
	if len(cells) == 0 {
		_, err := io.WriteString(w, "No steps ran.\n")
		return err
	}
	var b strings.Builder
	var notes summaryNotes
	repeats := 0
	var names []string
	for _, c := range cells {
		repeats = max(repeats, c.Repeats+c.Failed+c.Cancelled)
		if !slices.Contains(names, c.Name()) {
			names = append(names, c.Name())
		}
	}
	of := ""
	if repeats > 1 {
		of = fmt.Sprintf(", median (min–max) of %d repeats", repeats)
	}
	perJob := len(names) > 1

	onlyNumJobs := len(sweeps) == 1 && sweeps[0].Axis == sweep.AxisNumJobs
	if !onlyNumJobs {
		writeIOPSTable(&b, &notes, sweeps, cells, names, of)
	}
	if scaling := SummarizeScaling(plan, results); scaling != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		writeScalingTable(&b, &notes, sweeps, scaling, perJob, of)
	}
	if perJob {
		b.WriteString("\n")
		writeJobsTable(&b, &notes, sweeps, cells, of)
	}
	writeQoSTables(&b, plan, results) // qos.go
	var split strings.Builder
	if writeTimeSplitTable(&split, &notes, sweeps, results, of) { // tables_block.go
		b.WriteString("\n" + split.String())
	}
	notes.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeIOPSTable writes the cells' IOPS: with no axis but the row axis
// (rowAxis) swept, a row per cell with its bandwidth beside; else a grid
// of the row axis (and the job) by the other axes' values.
func writeIOPSTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, cells []SummaryCell, names []string, of string) {
	t := newIOPSTable(sweeps, names)
	fmt.Fprintf(b, "%s%s\n\n", t.title(), of)
	tw := newSummaryTable(b)
	if len(t.cols) == 0 {
		t.writeColumn(tw, notes, cells)
	} else {
		t.writeGrid(tw, notes, sweeps, cells)
	}
	tw.flush()
}

// iopsTable is the layout of the IOPS table: the axis down its rows, the
// axes across its columns, and the jobs when there are several.
type iopsTable struct {
	row    sweep.Axis
	cols   []sweep.Axis
	names  []string
	perJob bool
}

func newIOPSTable(sweeps []sweep.Sweep, names []string) *iopsTable {
	t := &iopsTable{row: rowAxis(sweeps), names: names, perJob: len(names) > 1}
	for _, s := range sweeps {
		if s.Axis != t.row {
			t.cols = append(t.cols, s.Axis)
		}
	}
	return t
}

// title says what the table holds and by which axes.
func (t *iopsTable) title() string {
	var axes []string
	if t.row != "" {
		axes = append(axes, string(t.row))
	}
	for _, a := range t.cols {
		axes = append(axes, string(a))
	}
	title := "IOPS"
	if len(t.cols) == 0 {
		title = "IOPS and bandwidth"
	}
	if t.perJob {
		title += " per job"
	}
	if len(axes) > 0 {
		title += " by " + strings.Join(axes, " × ")
	}
	return title
}

// lead is the header of the rows' leading cells: the row axis and the
// job.
func (t *iopsTable) lead() []string {
	var lead []string
	if t.row != "" {
		lead = append(lead, string(t.row))
	}
	if t.perJob {
		lead = append(lead, "job")
	}
	return lead
}

// leadOf is a row's leading cells: the row axis's value r and the job,
// the value left blank under a row (prev) that names it already.
func (t *iopsTable) leadOf(prev *[2]string, r, name string) []string {
	var line []string
	if t.row != "" {
		v := r
		if prev != nil && prev[0] == r {
			v = ""
		}
		line = append(line, v)
	}
	if t.perJob {
		line = append(line, name)
	}
	return line
}

// writeColumn writes one column of figures: a row per cell, with
// bandwidth beside.
func (t *iopsTable) writeColumn(tw summaryTable, notes *summaryNotes, cells []SummaryCell) {
	tw.row(append(t.lead(), "IOPS", "bandwidth")...)
	var prev *[2]string
	for _, c := range cells {
		r := axisValueOf(c.Axes, t.row)
		iops, bw := cellText(notes, c, c.IOPS, units.Count), ""
		if c.Repeats > 0 {
			bw = spreadText(notes, c.BW, c.Repeats, units.Rate)
		}
		tw.row(append(t.leadOf(prev, r, c.Name()), iops, bw)...)
		prev = &[2]string{r, c.Name()}
	}
}

// iopsRowKey is a row of the grid: the row axis's value and the job.
type iopsRowKey struct{ value, job string }

// writeGrid writes the grid: rows and columns in the order the cells
// come (the sweep order); a combination that did not run is "-".
func (t *iopsTable) writeGrid(tw summaryTable, notes *summaryNotes, sweeps []sweep.Sweep, cells []SummaryCell) {
	var rows []iopsRowKey
	var colKeys []string
	colLabel := map[string]string{}
	byKey := map[iopsRowKey]map[string]SummaryCell{}
	for _, c := range cells {
		r := iopsRowKey{axisValueOf(c.Axes, t.row), c.Name()}
		var vals []string
		for _, a := range t.cols {
			vals = append(vals, axisValueOf(c.Axes, a))
		}
		k := strings.Join(vals, "\x00")
		if !slices.Contains(rows, r) {
			rows = append(rows, r)
			byKey[r] = map[string]SummaryCell{}
		}
		if !slices.Contains(colKeys, k) {
			colKeys = append(colKeys, k)
			colLabel[k] = strings.Join(vals, "/")
		}
		byKey[r][k] = c
	}
	t.sortGrid(sweeps, rows, colKeys)
	header := t.lead()
	for _, k := range colKeys {
		header = append(header, colLabel[k])
	}
	tw.row(header...)
	var prev *[2]string
	for _, r := range rows {
		line := t.leadOf(prev, r.value, r.job)
		prev = &[2]string{r.value, r.job}
		for _, k := range colKeys {
			c, ok := byKey[r][k]
			if !ok {
				line = append(line, "-")
				continue
			}
			line = append(line, cellText(notes, c, c.IOPS, units.Count))
		}
		tw.row(line...)
	}
}

// sortGrid orders the grid's columns by the sweep order of the column
// axes alone, since the cells' order puts the row axis among them; rows
// by the row axis, then the job.
func (t *iopsTable) sortGrid(sweeps []sweep.Sweep, rows []iopsRowKey, colKeys []string) {
	order := sweepRanksOf(sweeps)
	slices.SortStableFunc(colKeys, func(x, y string) int {
		return slices.Compare(order.ranksOf(t.cols, strings.Split(x, "\x00")), order.ranksOf(t.cols, strings.Split(y, "\x00")))
	})
	slices.SortStableFunc(rows, func(x, y iopsRowKey) int {
		return slices.Compare(
			[]int{order.rank(t.row, x.value), slices.Index(t.names, x.job)},
			[]int{order.rank(t.row, y.value), slices.Index(t.names, y.job)})
	})
}

func writeScalingTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, steps []ScalingStep, perJob bool, of string) {
	what := "total IOPS and bandwidth"
	if perJob {
		what = "each job's IOPS and bandwidth (its clones added up)"
	}
	fmt.Fprintf(b, "Scaling with numjobs: %s%s; growth of the median IOPS from the previous numjobs\n\n", what, of)
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
	if perJob {
		header = append(header, "job")
	}
	tw.row(append(header, "numjobs", "IOPS", "bandwidth", "growth")...)
	for i, s := range steps {
		sameGroup := i > 0 && sameExcept(steps[i-1].Axes, s.Axes, sweep.AxisNumJobs)
		var line []string
		for _, a := range others {
			v := axisValueOf(s.Axes, a)
			if sameGroup {
				v = "" // the group's first row names it
			}
			line = append(line, v)
		}
		if perJob {
			name := s.Name()
			if sameGroup && steps[i-1].Name() == name {
				name = ""
			}
			line = append(line, name)
		}
		bw, growth := "", "-"
		if s.Repeats > 0 {
			bw = spreadText(notes, s.BW, s.Repeats, units.Rate)
		}
		if s.Growth != nil {
			growth = fmt.Sprintf("%+.1f%%", *s.Growth)
		}
		tw.row(append(line, axisValueOf(s.Axes, sweep.AxisNumJobs), cellText(notes, s.SummaryCell, s.IOPS, units.Count), bw, growth)...)
	}
	tw.flush()
}

func writeJobsTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, cells []SummaryCell, of string) {
	fmt.Fprintf(b, "Per job: mean latency (lat, over reads and writes) and bandwidth%s\n\n", of)
	tw := newSummaryTable(b)
	var header []string
	for _, s := range sweeps {
		header = append(header, string(s.Axis))
	}
	tw.row(append(header, "job", "lat mean", "bandwidth")...)
	for i, c := range cells {
		var line []string
		for _, s := range sweeps {
			v := axisValueOf(c.Axes, s.Axis)
			if i > 0 && slices.Equal(cells[i-1].Axes, c.Axes) {
				v = ""
			}
			line = append(line, v)
		}
		bw := ""
		if c.Repeats > 0 {
			bw = spreadText(notes, c.BW, c.Repeats, units.Rate)
		}
		tw.row(append(line, c.Name(), cellText(notes, c, c.LatMean, units.Nanos), bw)...)
	}
	tw.flush()
}

// cellText is a cell's figure as "median (min–max)", marked when noisy or
// disturbed, or why there is none: "failed [n]" with its footnote,
// "cancelled", or "-" (nothing ran). Failed or cancelled repeats beside
// done ones are counted after the figure.
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
	t := spreadText(notes, s, c.Repeats, format)
	if c.Disturbed > 0 {
		t += " " + notes.flag(markDisturbed)
	}
	if c.Failed > 0 {
		t += fmt.Sprintf(", %d failed %s", c.Failed, marks)
	}
	if c.Cancelled > 0 {
		t += fmt.Sprintf(", %d cancelled", c.Cancelled)
	}
	return t
}

// spreadText is "median (min–max)", the median alone for one repeat,
// marked ~ when the repeats are noisy.
func spreadText(notes *summaryNotes, s stats.Spread, n int, format func(float64) string) string {
	if n == 1 {
		return format(s.Median)
	}
	t := fmt.Sprintf("%s (%s–%s)", format(s.Median), format(s.Min), format(s.Max))
	if s.Noisy() {
		t += " " + notes.flag(markNoisy)
	}
	return t
}

// The marks a table's figures may carry, each explained under the tables
// when used.
const (
	markNoisy     = "~"
	markDisturbed = "!"
)

var markLegend = map[string]string{
	markNoisy: fmt.Sprintf("noisy: the repeats disagree (their coefficient of variation is above %.0f %%); read the range, not the median",
		100*stats.NoisyCV),
	markDisturbed: "disturbed: another process did I/O on the device during a repeat (the steps' notes say which)",
	markFewOneToOne: fmt.Sprintf("few timed: under %.0f %% of the job's I/Os were timed in the block layer (one-to-one onto a request, or split with every piece seen; the rest merged or unmatched); its parts describe those alone",
		100*MinOneToOne),
}

// summaryNotes number the distinct errors of failed steps by their first
// line, in the order the tables first show them, and keep the marks the
// tables used.
type summaryNotes struct {
	lines []string
	flags []string
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

// flag returns mark, noting that its legend is needed.
func (n *summaryNotes) flag(mark string) string {
	if !slices.Contains(n.flags, mark) {
		n.flags = append(n.flags, mark)
	}
	return mark
}

func (n *summaryNotes) write(b *strings.Builder) {
	if len(n.lines) > 0 || len(n.flags) > 0 {
		b.WriteString("\n")
	}
	for _, m := range []string{markNoisy, markDisturbed, markFewOneToOne} {
		if slices.Contains(n.flags, m) {
			fmt.Fprintf(b, "%s   %s\n", m, markLegend[m])
		}
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
