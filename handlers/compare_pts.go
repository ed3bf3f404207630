package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/units"
	"iolab/handlers/chart"
)

// The compare page's PTS section: runs of the same SNIA PTS test side by
// side round by round, each run's tracking variables and every element of
// its matrix, with each run's steady-state outcome; and the statistical
// diff of such runs kept to each run's steady-state measurement window.
// The figures are sweep's (Plan.PTSSeries, Plan.PTSOutcome, StepFigures),
// read here only as far as the page shows them: the report's PTS
// analysis (bench/summary) is the whole of it.

// ptsCompareView is the PTS section of the compare page.
type ptsCompareView struct {
	Test     string // the test's title
	Saturate bool   // write saturation: no steady state, rounds until the writes
	Runs     []ptsRunOutcome
	// Labels name the runs' columns, Ratios the ratio columns (each run
	// after the first against the first).
	Labels, Ratios []string
	Tracking       []ptsTable
	// Axes head the element table's first columns, the matrix's options.
	Axes     []string
	Elements []ptsTable
	// Metric is what the element tables show of each element.
	Metric string
	CSV    string
}

// ptsRunOutcome is one run's steady-state outcome, as the page says it.
type ptsRunOutcome struct {
	Label   string
	ID      int64
	Rounds  int
	Reached bool
	// Round is the 1-based round steady state was reached at;
	// WindowFirst and WindowLast the window's rounds, 1-based (none when
	// fewer rounds than the window ran).
	Round                   int
	WindowFirst, WindowLast int
	Text                    string
}

// ptsTable is one tracking variable's or one element's values per round.
type ptsTable struct {
	Name   string
	Metric string   // a tracking variable's, as a heading says it
	Values []string // the element's axis values, in the matrix's order
	Rows   []ptsRow
}

// ptsRow is one round of a ptsTable.
type ptsRow struct {
	Round  int // 1-based
	Cells  []ptsCell
	Ratios []string
}

// ptsCell is one run's value at one round; Window says the round is in
// the run's steady-state measurement window.
type ptsCell struct {
	Text   string
	Value  string // the value in full, for the tests and the CSV
	Window bool
}

// ptsRun is what the section reads of one run.
type ptsRun struct {
	label   string
	id      int64
	spec    *pts.Spec
	test    *pts.Test
	series  [][]float64
	outcome pts.Outcome
	// elements are each element's value per round: key (the matrix's
	// values joined) → round → value.
	elements map[string]map[int]float64
	rounds   int
}

// ptsOf reads the runs as PTS runs: nil, "" when any is not one; nil and
// why when they are PTS runs of different tests.
func ptsOf(runs []chart.LoadedRun) ([]ptsRun, string) {
	if len(runs) < 2 {
		return nil, ""
	}
	labels := chart.Names(runs)
	out := make([]ptsRun, len(runs))
	for i := range runs {
		plan := &runs[i].Run.Plan
		if plan.PTS == nil {
			return nil, ""
		}
		t, err := pts.Lookup(plan.PTS.Test)
		if err != nil {
			return nil, ""
		}
		out[i] = ptsRun{label: labels[i], id: runs[i].Run.ID, spec: plan.PTS, test: t}
	}
	for _, r := range out[1:] {
		if r.test.Name != out[0].test.Name {
			var names []string
			for _, r := range out {
				names = append(names, r.label+" "+r.test.Name)
			}
			return nil, "The runs are PTS runs of different tests (" + strings.Join(names, ", ") + "): their rounds do not compare."
		}
	}
	for i := range out {
		r := &out[i]
		steps := runs[i].Steps
		r.series = runs[i].Run.Plan.PTSSeries(steps)
		r.outcome = runs[i].Run.Plan.PTSOutcome(steps)
		r.elements = map[string]map[int]float64{}
		metric := elementMetric(r.spec.Tracking(r.test))
		matrix := r.spec.Matrix(r.test)
		for k := range steps {
			st := &steps[k]
			r.rounds = max(r.rounds, st.Step.Repeat+1)
			if st.Status != sweep.StepDone || st.Result == nil {
				continue
			}
			v, ok := metric.of(sweep.StepFigures(st.Result))
			if !ok {
				continue
			}
			key := elementKey(matrix, &st.Step)
			if r.elements[key] == nil {
				r.elements[key] = map[int]float64{}
			}
			r.elements[key][st.Step.Repeat] = v
		}
	}
	return out, ""
}

// ptsWindow is the rounds (0-based, inclusive) of the run's steady-state
// measurement window: the window that met the rule, or the last five
// rounds; ok false for write saturation, which has none, and for a run
// without a round measured.
func (r *ptsRun) window() (first, last int, ok bool) {
	if r.test.Saturate || len(r.outcome.Windows) == 0 || r.outcome.Rounds == 0 {
		return 0, 0, false
	}
	w := r.outcome.Windows[0]
	return w.First, w.First + len(w.Values) - 1, len(w.Values) > 0
}

func (r *ptsRun) inWindow(round int) bool {
	first, last, ok := r.window()
	return ok && round >= first && round <= last
}

// elementMetric is what the element tables show: the tracking variables'
// metric, a bandwidth as the element's reads and writes together (a
// throughput test's read elements have no write bandwidth).
type elementMetric []pts.Tracking

func (m elementMetric) name() string {
	if len(m) == 0 {
		return pts.MetricIOPS
	}
	switch m[0].Metric {
	case pts.MetricWriteBW, pts.MetricReadBW:
		return "bw"
	}
	return m[0].Metric
}

func (m elementMetric) label() string {
	if m.name() == "bw" {
		return "bandwidth (B/s), reads and writes"
	}
	return pts.MetricLabel(m.name())
}

func (m elementMetric) of(f pts.Figures) (float64, bool) {
	if m.name() == "bw" {
		return f.BW[0] + f.BW[1], f.BW[0]+f.BW[1] > 0
	}
	return f.Metric(m.name())
}

// elementKey is a step's element: its values of the matrix's options, in
// the matrix's order.
func elementKey(matrix []pts.Axis, st *sweep.Step) string {
	vals := make([]string, len(matrix))
	for i, a := range matrix {
		vals[i] = st.Value(sweep.Axis(a.Option))
	}
	return strings.Join(vals, "\x00")
}

// ptsCompare is the compare page's PTS section of runs; nil when they are
// not all runs of one PTS test, with why when they are PTS runs of
// different tests.
func ptsCompare(runs []chart.LoadedRun) (*ptsCompareView, string) {
	rs, why := ptsOf(runs)
	if rs == nil {
		return nil, why
	}
	first := rs[0]
	v := &ptsCompareView{Test: first.test.Title, Saturate: first.test.Saturate}
	for _, r := range rs {
		v.Labels = append(v.Labels, r.label)
		v.Runs = append(v.Runs, r.outcomeView())
	}
	for _, r := range rs[1:] {
		v.Ratios = append(v.Ratios, r.label+" / "+first.label)
	}
	rounds := 0
	for _, r := range rs {
		rounds = max(rounds, r.rounds)
	}
	for k, tr := range first.spec.Tracking(first.test) {
		tab := ptsTable{Name: tr.String(), Metric: pts.MetricLabel(tr.Metric)}
		for round := range rounds {
			tab.Rows = append(tab.Rows, ptsRowOf(rs, round, func(r *ptsRun) (float64, bool) {
				if k >= len(r.series) || round >= len(r.series[k]) {
					return 0, false
				}
				return r.series[k][round], true
			}))
		}
		v.Tracking = append(v.Tracking, tab)
	}
	matrix := first.spec.Matrix(first.test)
	for _, a := range matrix {
		v.Axes = append(v.Axes, a.Option)
	}
	v.Metric = elementMetric(first.spec.Tracking(first.test)).label()
	for _, vals := range combos(matrix) {
		key := strings.Join(vals, "\x00")
		tab := ptsTable{Values: vals}
		for round := range rounds {
			tab.Rows = append(tab.Rows, ptsRowOf(rs, round, func(r *ptsRun) (float64, bool) {
				x, ok := r.elements[key][round]
				return x, ok
			}))
		}
		v.Elements = append(v.Elements, tab)
	}
	return v, ""
}

// combos are the matrix's elements, the first axis varying slowest, as a
// plan's steps run them.
func combos(matrix []pts.Axis) [][]string {
	out := [][]string{{}}
	for _, a := range matrix {
		var next [][]string
		for _, c := range out {
			for _, x := range a.Values {
				next = append(next, append(slices.Clone(c), x))
			}
		}
		out = next
	}
	return out
}

// ptsRowOf is one round's row: each run's value from get, and each run
// after the first against the first.
func ptsRowOf(rs []ptsRun, round int, get func(*ptsRun) (float64, bool)) ptsRow {
	row := ptsRow{Round: round + 1}
	base, baseOK := get(&rs[0])
	for i := range rs {
		x, ok := get(&rs[i])
		c := ptsCell{Text: "–", Window: rs[i].inWindow(round)}
		if ok {
			c.Text, c.Value = units.Significant(x, 4), strconv.FormatFloat(x, 'g', -1, 64)
		}
		row.Cells = append(row.Cells, c)
		if i == 0 {
			continue
		}
		ratio := "–"
		if ok && baseOK && base != 0 {
			ratio = units.Significant(x/base, 3)
		}
		row.Ratios = append(row.Ratios, ratio)
	}
	return row
}

// outcomeView says the run's steady state as the page does.
func (r *ptsRun) outcomeView() ptsRunOutcome {
	o := ptsRunOutcome{Label: r.label, ID: r.id, Rounds: r.rounds, Reached: r.outcome.Reached}
	if r.test.Saturate {
		o.Text = fmt.Sprintf("%s of write saturation (no steady state: the rounds run until the writes reach %g× the capacity)",
			plural(r.rounds, "round"), r.spec.WSATTimes())
		return o
	}
	first, last, ok := r.window()
	if ok {
		o.WindowFirst, o.WindowLast = first+1, last+1
	}
	switch {
	case r.outcome.Reached:
		o.Round = r.outcome.Round + 1
		o.Text = fmt.Sprintf("steady state reached at round %d of %d (window: rounds %d–%d)", o.Round, r.spec.Rounds(), o.WindowFirst, o.WindowLast)
	case ok:
		o.Text = fmt.Sprintf("steady state not reached in %d rounds (window: the last rounds, %d–%d)", r.outcome.Rounds, o.WindowFirst, o.WindowLast)
	default:
		o.Text = fmt.Sprintf("steady state not reached: no round measured its tracking variable (%d rounds run)", r.rounds)
	}
	for k, tr := range r.spec.Tracking(r.test) {
		if k >= len(r.outcome.Windows) || !ok {
			break
		}
		w := &r.outcome.Windows[k]
		o.Text += fmt.Sprintf("; %s: window average %s, range %.1f %% of it (limit %g %%), fit excursion %.1f %% (limit %g %%)", tr,
			units.Significant(w.Average, 4), 100*w.RangePct(), 100*pts.RangeLimit, 100*w.ExcursionPct(), 100*pts.SlopeLimit)
	}
	return o
}

// ptsWindowed are the runs with each PTS run's steps kept to its
// steady-state measurement window, for the statistical diff: like
// compared with like, not transient rounds; and what the page says of
// it. The runs as given when they are not runs of one PTS test with a
// window.
func ptsWindowed(runs []chart.LoadedRun) ([]chart.LoadedRun, string) {
	rs, _ := ptsOf(runs)
	if rs == nil || rs[0].test.Saturate {
		return runs, ""
	}
	out := slices.Clone(runs)
	var says []string
	for i := range out {
		first, last, ok := rs[i].window()
		if !ok {
			return runs, ""
		}
		out[i].Steps = slices.DeleteFunc(slices.Clone(runs[i].Steps), func(st sweep.StepResult) bool {
			return st.Step.Repeat < first || st.Step.Repeat > last
		})
		out[i].Summary = nil
		says = append(says, fmt.Sprintf("%s rounds %d–%d", rs[i].label, first+1, last+1))
	}
	return out, "PTS runs: each run's rounds are compared over its steady-state measurement window (" + strings.Join(says, ", ") +
		"; the five rounds that met the rule, or the last five where none did), not over the transient rounds before it."
}

// ptsCSV is the section as one table: each tracking variable's and each
// element's value per round, a column per run and per ratio.
func ptsCSV(runs []chart.LoadedRun) (*chart.Chart, error) {
	v, why := ptsCompare(runs)
	if v == nil {
		if why == "" {
			why = "the runs are not all runs of one PTS test"
		}
		return nil, &ValidationError{Field: "run", Msg: "table=pts: " + why}
	}
	ch := &chart.Chart{Columns: []string{"table", "element", "metric", "round"}}
	for _, l := range v.Labels {
		ch.Columns = append(ch.Columns, l, l+" in window")
	}
	ch.Columns = append(ch.Columns, v.Ratios...)
	add := func(table, element, metric string, rows []ptsRow) {
		for _, row := range rows {
			line := []string{table, element, metric, strconv.Itoa(row.Round)}
			for _, c := range row.Cells {
				line = append(line, c.Value, strconv.FormatBool(c.Window))
			}
			ch.Rows = append(ch.Rows, append(line, row.Ratios...))
		}
	}
	for _, t := range v.Tracking {
		add("tracking", t.Name, "", t.Rows)
	}
	for _, t := range v.Elements {
		var parts []string
		for i, a := range v.Axes {
			parts = append(parts, a+"="+t.Values[i])
		}
		add("element", strings.Join(parts, " "), v.Metric, t.Rows)
	}
	return ch, nil
}

// plural is n things: "1 round", "6 rounds".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
