package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/handlers/chart"
)

// StatDiffView is one statistical diff as the compare page and the
// reports show it (web/templates/statdiff.html).
type StatDiffView struct {
	A, B    string
	Summary string
	Axes    []string
	Jobs    bool // the rows name their job
	Lines   []summary.DiffLine
	Notes   []string // the rows' notes, each once; a row points at its own
	NoteOf  []int    // per line: 1 + the index of its note in Notes, 0 for none
	OnlyA   string
	OnlyB   string
	Holds   bool // some row holds over the table (Holm)
	Conf    float64
	// Lat says which latency the latency rows compare, and why;
	// LatKind is that kind.
	Lat     string
	LatKind summary.LatKind
	// ChangeHeading and ShiftHeading head the change and the
	// Hodges–Lehmann shift columns (summary's, as the CLI prints them).
	ChangeHeading, ShiftHeading string
}

// StatDiffs compares the runs (each after the first against the first)
// or, for one run, the values of its swept axis against base
// (summary.CompareSides), their latencies of kind lat ("": lat when
// they compare engines or hosts, else clat). The runs' steps must carry
// that kind's histograms.
func StatDiffs(runs []chart.LoadedRun, axis, base string, lat summary.LatKind) ([]*summary.Diff, error) {
	if len(runs) > MaxStatDiffRuns {
		return nil, &InputError{Field: "run", Msg: fmt.Sprintf("the statistical diff compares at most %d runs at once", MaxStatDiffRuns)}
	}
	sides := make([]summary.DiffSide, len(runs))
	for i, label := range chart.Names(runs) {
		sides[i] = summary.DiffSide{Label: label, Plan: &runs[i].Run.Plan, Steps: runs[i].Steps, Summary: runs[i].Summary,
			Host: cmp.Or(runs[i].Host, runs[i].Run.Hostname), Lat: lat}
	}
	return summary.CompareSides(sides, sweep.Axis(axis), base, summary.DiffConf)
}

// LatText says which latency a table shows, and what the default is.
func LatText(k summary.LatKind) string {
	return k.Title() + "; " + latDefault
}

// latDefault says what a diff compares when no kind is asked for.
const latDefault = "the default is lat (from submission) when engines or hosts are compared, clat otherwise, and the latency from the intended start for paced steps"

// diffLatText is LatText of a diff: summary.Diff.LatText, then the
// default.
func diffLatText(d *summary.Diff) string { return d.LatText() + "; " + latDefault }

// MaxStatDiffRuns bounds the diffs a page computes: each run after the
// first is a table.
const MaxStatDiffRuns = 8

// StatDiffViews writes diffs for a page.
func StatDiffViews(diffs []*summary.Diff) []StatDiffView {
	out := make([]StatDiffView, len(diffs))
	for i, d := range diffs {
		v := StatDiffView{A: d.A, B: d.B, Summary: d.Summary(), Lines: d.Lines(), Conf: 100 * d.Conf,
			ChangeHeading: summary.ChangeHeading, ShiftHeading: summary.ShiftHeading, Lat: diffLatText(d), LatKind: d.Kind()}
		for _, a := range d.Axes {
			v.Axes = append(v.Axes, string(a))
		}
		v.NoteOf = make([]int, len(v.Lines))
		for k, l := range v.Lines {
			v.Jobs = v.Jobs || l.Job != ""
			v.Holds = v.Holds || l.Holds
			if len(l.Notes) == 0 {
				continue
			}
			note := strings.Join(l.Notes, "; ")
			n := slices.Index(v.Notes, note)
			if n < 0 {
				v.Notes = append(v.Notes, note)
				n = len(v.Notes) - 1
			}
			v.NoteOf[k] = n + 1
		}
		v.OnlyA, v.OnlyB = strings.Join(d.OnlyA, ", "), strings.Join(d.OnlyB, ", ")
		out[i] = v
	}
	return out
}

// StatDiffCSV is the diffs' rows as one table (summary.DiffCSV).
func StatDiffCSV(diffs []*summary.Diff) *chart.Chart {
	axes := summary.DiffCSVAxes(diffs...)
	ch := &chart.Chart{Columns: summary.DiffCSVColumns(axes), Rows: [][]string{}}
	for _, d := range diffs {
		ch.Rows = append(ch.Rows, summary.DiffCSV(d, axes)...)
	}
	return ch
}
