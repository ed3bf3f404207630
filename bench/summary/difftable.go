package summary

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// DiffLine is one row of a diff as tables show it, its numbers written
// for people (three significant digits and units); the CSV keeps them
// whole (DiffCSV).
type DiffLine struct {
	Point       []string // the value of each of the diff's axes
	Job, Metric string
	// Base and Other are each side's median and its number of repeats:
	// "17.0 IOPS ×6".
	Base, Other string
	// Change is B against A, the ratio of the medians as stats.Change
	// writes it ("+241 %"), Interval its confidence interval ("+198 … +290
	// %"), Stat what it is and over how many repeats ("median ratio, n=6
	// vs 6"), Shift the Hodges–Lehmann shift, a column of its own, P the
	// test's p-value; "–" where there is none.
	Change, Interval, Stat, Shift, P string
	Verdict                          string
	// Class is how the verdict reads: "better", "worse" (significant),
	// "same" (no significant difference), "few" (too few repeats) or
	// "none" (a side without values).
	Class string
	Holds bool
	// Notes are the row's trust flags and, when too few repeats, how
	// many would do.
	Notes []string
}

// Lines writes the diff's rows for tables.
func (d *Diff) Lines() []DiffLine {
	out := make([]DiffLine, len(d.Rows))
	for i := range d.Rows {
		r := &d.Rows[i]
		l := DiffLine{Job: r.Job, Metric: r.Metric.Name, Verdict: r.Verdict(), Holds: r.Holds,
			Base: sideText(r.Metric, &r.A), Other: sideText(r.Metric, &r.B), Change: "–", Interval: "–", Stat: r.Cmp.Label(), Shift: "–", P: "–"}
		for _, v := range r.Point {
			l.Point = append(l.Point, units.Printable(v.Value))
		}
		switch {
		case len(r.A.Values) == 0 || len(r.B.Values) == 0:
			l.Class = "none"
		case r.Cmp.Verdict == stats.Significant && r.Better():
			l.Class = "better"
		case r.Cmp.Verdict == stats.Significant:
			l.Class = "worse"
		case r.Cmp.Verdict == stats.TooFew:
			l.Class = "few"
		default:
			l.Class = "same"
		}
		if l.Class != "none" && !math.IsNaN(r.Cmp.Rel) {
			l.Change = r.Cmp.Text()
			if r.Cmp.HasInterval() {
				l.Interval = pct(r.Cmp.Lo) + " … " + pct(r.Cmp.Hi)
			}
			l.Shift = stats.PercentText(r.Cmp.Shift)
			if r.Cmp.Verdict != stats.TooFew {
				l.P = units.Significant(r.Cmp.P, 2)
			}
		}
		if l.Class == "better" || l.Class == "worse" {
			l.Verdict += " (" + l.Class + ")"
		}
		if t := r.TooFewText(); t != "" {
			l.Notes = append(l.Notes, t)
		}
		l.Notes = append(l.Notes, r.Flags()...)
		out[i] = l
	}
	return out
}

// pct writes a relative change as every change is written
// (stats.PercentText): "+12.3 %", "−4.56 %", "+241 %".
func pct(v float64) string { return stats.PercentText(v) }

// sideText is a side's median with its unit and the repeats behind it.
func sideText(m DiffMetric, r *Repeats) string {
	if len(r.Values) == 0 {
		return "–"
	}
	return FormatMetric(m, r.Median()) + " ×" + strconv.Itoa(len(r.Values))
}

// ChangeHeading heads a diff's change column wherever the diff is shown,
// naming its statistic; ShiftHeading heads the Hodges–Lehmann shift's.
const (
	ChangeHeading = "change (" + string(stats.MedianRatio) + ")"
	ShiftHeading  = "HL shift"
)

// FormatMetric writes a value of m for people.
func FormatMetric(m DiffMetric, v float64) string {
	switch m.Unit {
	case "MiB/s":
		return units.Rate(v * (1 << 20))
	case "µs":
		return units.Nanos(v * 1e3)
	}
	return units.Count(v) + " IOPS"
}

// WriteDiff prints a diff for the terminal: a title, the one-line
// summary, a row per figure of each job at each point, and what the
// marks mean.
func WriteDiff(w io.Writer, d *Diff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s against %s (the base): change = %s of the repeats (B's median over A's), its %g %% interval, the Hodges–Lehmann shift and Mann–Whitney p\n",
		units.Printable(d.B), units.Printable(d.A), stats.MedianRatio, 100*d.Conf)
	if d.Intended > 0 || len(d.Mixed) > 0 {
		b.WriteString("Latency: " + d.LatText() + "\n")
	}
	b.WriteString(d.Summary() + "\n\n")
	lines := d.Lines()
	jobs := false
	for _, l := range lines {
		jobs = jobs || l.Job != ""
	}
	t := newSummaryTable(&b)
	var head []string
	for _, a := range d.Axes {
		head = append(head, string(a))
	}
	if jobs {
		head = append(head, "job")
	}
	head = append(head, "figure", units.Printable(d.A), units.Printable(d.B), ChangeHeading, "interval", ShiftHeading, "p", "verdict")
	t.row(head...)
	var notes []string
	prev := ""
	for _, l := range lines {
		lead := append([]string(nil), l.Point...)
		if jobs {
			lead = append(lead, units.Printable(l.Job))
		}
		// A point's figures after its first leave its cells blank.
		if k := strings.Join(lead, "\x00"); k == prev {
			lead = make([]string, len(lead))
		} else {
			prev = k
		}
		verdict := l.Verdict
		if l.Holds {
			verdict += " *"
		}
		if len(l.Notes) > 0 {
			note := strings.Join(l.Notes, "; ")
			i := slices.Index(notes, note)
			if i < 0 {
				notes = append(notes, note)
				i = len(notes) - 1
			}
			verdict += fmt.Sprintf(" [%d]", i+1)
		}
		t.row(append(lead, l.Metric, l.Base, l.Other, l.Change, l.Interval, l.Shift, l.P, verdict)...)
	}
	t.flush()
	if len(d.OnlyA) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", units.Printable(d.A), units.Printable(strings.Join(d.OnlyA, ", ")))
	}
	if len(d.OnlyB) > 0 {
		fmt.Fprintf(&b, "\nonly in %s: %s\n", units.Printable(d.B), units.Printable(strings.Join(d.OnlyB, ", ")))
	}
	b.WriteString("\n")
	if slices.ContainsFunc(lines, func(l DiffLine) bool { return l.Holds }) {
		b.WriteString("*   still significant when every comparison of the table is taken together (Holm's correction)\n")
	}
	for i, n := range notes {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DiffCSVAxes are the axes of the diffs' rows, each once, for one CSV of
// them all.
func DiffCSVAxes(diffs ...*Diff) []sweep.Axis {
	var axes []sweep.Axis
	for _, d := range diffs {
		for _, a := range d.Axes {
			if !slices.Contains(axes, a) {
				axes = append(axes, a)
			}
		}
	}
	return axes
}

// DiffCSVColumns are the columns of diffs' CSV, with units, the points
// given by axes (DiffCSVAxes).
func DiffCSVColumns(axes []sweep.Axis) []string {
	cols := []string{"base", "other"}
	for _, a := range axes {
		cols = append(cols, string(a))
	}
	return append(cols, "job", "figure", "unit", "base_repeats", "base_median", "other_repeats", "other_median",
		"statistic", "change_pct", "ci_low_pct", "ci_high_pct", "confidence", "hl_shift_pct", "p", "verdict", "holds_over_table", "better", "flags")
}

// DiffCSV is a diff's rows for its CSV (DiffCSVColumns of axes): every
// number whole, "" where there is none.
func DiffCSV(d *Diff, axes []sweep.Axis) [][]string {
	g := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	var rows [][]string
	for i := range d.Rows {
		r := &d.Rows[i]
		row := []string{d.A, d.B}
		for _, a := range axes {
			v := ""
			if i := slices.Index(d.Axes, a); i >= 0 {
				v = r.Point[i].Value
			}
			row = append(row, v)
		}
		change, lo, hi, shift, p := math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if len(r.A.Values) > 0 && len(r.B.Values) > 0 {
			change, lo, hi, shift = r.Cmp.Percent(), 100*r.Cmp.Lo, 100*r.Cmp.Hi, 100*r.Cmp.Shift
			if r.Cmp.Verdict != stats.TooFew {
				p = r.Cmp.P
			}
		}
		better := ""
		if r.Cmp.Verdict == stats.Significant {
			better = strconv.FormatBool(r.Better())
		}
		flags := r.Flags()
		if t := r.TooFewText(); t != "" {
			flags = append([]string{t}, flags...)
		}
		rows = append(rows, append(row, r.Job, r.Metric.Name, r.Metric.Unit,
			strconv.Itoa(len(r.A.Values)), g(r.A.Median()), strconv.Itoa(len(r.B.Values)), g(r.B.Median()),
			string(r.Cmp.Stat), g(change), g(lo), g(hi), g(d.Conf), g(shift), g(p), r.Verdict(), strconv.FormatBool(r.Holds), better, strings.Join(flags, "; ")))
	}
	return rows
}
