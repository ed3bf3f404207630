package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
)

// readerP99 is the foreground reader's clat p99 (µs) in each done repeat
// of run id, by scheduler: read from the store step by step, as a reader
// of the raw results would, not through any surface under test.
func readerP99(t *testing.T, store *db.Store, id int64) map[string][]float64 {
	t.Helper()
	e, err := store.Export(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for i := range e.Steps {
		st := &e.Steps[i]
		if summary.StepStatus(st) != sweep.StepDone {
			continue
		}
		for _, j := range summary.FiguresOf(st).Jobs {
			if j.Name == "fg-reader" && !j.Total {
				out[st.Step.Scheduler] = append(out[st.Step.Scheduler], float64(j.P99)/1e3)
			}
		}
	}
	return out
}

// medianRatio is B against A worked out by hand: B's median over A's,
// less one, as every surface must print it.
func medianRatio(a, b []float64) string {
	return stats.PercentText(stats.Median(b)/stats.Median(a) - 1)
}

// htmlRow is the row of an HTML table whose cells hold every one of
// cells; "" when none does.
func htmlRow(body string, cells ...string) string {
	for _, row := range strings.Split(body, "<tr")[1:] {
		row, _, _ = strings.Cut(row, "</tr>")
		if !slices.ContainsFunc(cells, func(c string) bool { return !strings.Contains(row, "<td>"+c+"</td>") }) {
			return row
		}
	}
	return ""
}

// htmlText is s as html/template writes it in text and attributes.
func htmlText(s string) string { return strings.ReplaceAll(s, "+", "&#43;") }

// TestOneChange: one change for one pair of sets on every surface. The
// fixture's two sets are bfq against none within the fairness run, and
// the run against its repeat; the figure is the foreground reader's clat
// p99 over 5 repeats a side. Worked out by hand as the ratio of the
// medians, it must read the same, named "median ratio" with n on each
// side, on the fairness chart (labels, tooltip, CSV), in the statistical
// diff (terminal table, CSV), on the compare page, in the report (HTML
// and Markdown) and on the group page's table between hosts. The
// fixture's Hodges–Lehmann shift reads otherwise, so a surface that
// printed it as the change fails.
func TestOneChange(t *testing.T) {
	ts := newTestServer(t, Config{})
	ctx := context.Background()
	f1 := seedFairness5(t, ts.store, "fairness")
	f2 := seedFairness5(t, ts.store, "fairness, its repeat")
	id1, id2 := strconv.FormatInt(f1.ID, 10), strconv.FormatInt(f2.ID, 10)
	p1, p2 := readerP99(t, ts.store, f1.ID), readerP99(t, ts.store, f2.ID)
	if len(p1["none"]) != 5 || len(p1["bfq"]) != 5 || len(p2["bfq"]) != 5 {
		t.Fatalf("fixture: %d, %d and %d repeats, want 5 each", len(p1["none"]), len(p1["bfq"]), len(p2["bfq"]))
	}
	const label = "median ratio, n=5 vs 5"
	sets := []struct {
		name      string
		a, b      []float64
		compare   string // the compare page's query
		point     []string
		reportIDs []int64
		opt       report.Options
	}{
		{"bfq against none", p1["none"], p1["bfq"], "run=" + id1, nil, []int64{f1.ID}, report.Options{Axis: "scheduler", Base: "none"}},
		{"run against its repeat", p1["bfq"], p2["bfq"], "run=" + id1 + "&run=" + id2, []string{"bfq"}, []int64{f1.ID, f2.ID}, report.Options{}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			want := medianRatio(set.a, set.b)
			if hl := stats.PercentText(stats.Compare(set.a, set.b, 0.95).Shift); hl == want {
				t.Fatalf("fixture: the HL shift %s reads as the median ratio: the test could not tell them apart", hl)
			}
			cells := append(append([]string(nil), set.point...), "fg-reader", "clat p99")
			checkHTML := func(t *testing.T, what, body string) {
				t.Helper()
				if !strings.Contains(body, "<th>"+summary.ChangeHeading+"</th>") || !strings.Contains(body, "<th>HL shift</th>") {
					t.Errorf("%s: no %q or HL shift heading", what, summary.ChangeHeading)
				}
				row := htmlRow(body, cells...)
				if cell := `title="` + label + `">` + htmlText(want) + "</td>"; !strings.Contains(row, cell) {
					t.Errorf("%s: reader p99 row %q lacks %q", what, row, cell)
				}
			}

			// The compare page, and the report's HTML and Markdown.
			checkHTML(t, "compare page", ts.do(t, "GET", "/compare?"+set.compare, "").Body.String())
			rep, err := report.Build(ctx, ts.store, set.reportIDs, set.opt)
			if err != nil {
				t.Fatal(err)
			}
			var html bytes.Buffer
			if err := rep.WriteHTML(&html); err != nil {
				t.Fatal(err)
			}
			checkHTML(t, "report HTML", html.String())
			dir := t.TempDir()
			if _, err := rep.WriteBundle(ctx, dir, report.BundleOptions{Chromium: "no-such-chromium"}); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			md := string(raw)
			if !strings.Contains(md, "| "+summary.ChangeHeading+" |") {
				t.Errorf("report Markdown: no %q heading", summary.ChangeHeading)
			}
			found := false
			for _, line := range strings.Split(md, "\n") {
				if strings.Contains(line, "| fg-reader | clat p99 |") && (set.point == nil || strings.HasPrefix(line, "| "+set.point[0]+" |")) {
					found = true
					if !strings.Contains(line, "| "+want+" |") {
						t.Errorf("report Markdown: %q lacks %q", line, want)
					}
				}
			}
			if !found {
				t.Error("report Markdown: no reader p99 row")
			}

			// The diff's CSV: the number whole, its statistic named.
			rows, err := csv.NewReader(ts.do(t, "GET", "/compare/export.csv?table=stats&"+set.compare, "").Body).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := func(name string) int { return slices.Index(rows[0], name) }
			found = false
			for _, r := range rows[1:] {
				if r[col("job")] != "fg-reader" || r[col("figure")] != "clat p99" || (set.point != nil && r[col("scheduler")] != set.point[0]) {
					continue
				}
				found = true
				v, _ := strconv.ParseFloat(r[col("change_pct")], 64)
				if got := stats.PercentText(v / 100); got != want || r[col("statistic")] != "median ratio" ||
					r[col("base_repeats")] != "5" || r[col("other_repeats")] != "5" {
					t.Errorf("diff CSV: %s (%q), want %s: %q", got, r[col("statistic")], want, r)
				}
			}
			if !found {
				t.Errorf("diff CSV: no reader p99 row in %q", rows)
			}

			// The terminal's table, as iolab compare prints it.
			var sides []summary.DiffSide
			for _, id := range set.reportIDs {
				e, err := ts.store.Export(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				sides = append(sides, summary.DiffSide{Label: "run " + strconv.FormatInt(id, 10), Plan: &e.Run.Plan, Steps: e.Steps})
			}
			diffs, err := summary.CompareSides(sides, sweep.Axis(set.opt.Axis), set.opt.Base, summary.DiffConf)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := summary.WriteDiff(&text, diffs[0]); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), summary.ChangeHeading) {
				t.Errorf("terminal table: no %q heading", summary.ChangeHeading)
			}
			for _, l := range diffs[0].Lines() {
				if l.Job == "fg-reader" && l.Metric == "clat p99" && (set.point == nil || l.Point[0] == set.point[0]) &&
					(l.Change != want || l.Stat != label) {
					t.Errorf("terminal table: %s (%s), want %s (%s)", l.Change, l.Stat, want, label)
				}
			}
		})
	}

	// Within a run: the fairness chart's labels, tooltip and CSV.
	t.Run("fairness chart", func(t *testing.T) {
		want := medianRatio(p1["none"], p1["bfq"])
		body := ts.do(t, "GET", "/api/charts?kind=fairness&run="+id1, "").Body.String()
		tooltip := `["vs none (` + label + `)","` + want + `",""]`
		if !strings.Contains(body, tooltip) {
			t.Errorf("fairness chart: no tooltip %s", tooltip)
		}
		if !strings.Contains(body, `p99\n`+want) {
			t.Errorf("fairness chart: no bar labelled %q", "p99 "+want)
		}
		if !strings.Contains(body, "change from none (median ratio)") {
			t.Error("fairness chart: the subtitle does not name the statistic")
		}
		rows, err := csv.NewReader(ts.do(t, "GET", "/charts/export.csv?kind=fairness&run="+id1, "").Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) int { return slices.Index(rows[0], name) }
		found := false
		for _, r := range rows[1:] {
			if r[col("job")] == "fg-reader" && slices.Contains(r, "bfq") {
				found = true
				v, _ := strconv.ParseFloat(r[col("clat_p99_change_pct")], 64)
				if got := stats.PercentText(v / 100); got != want || r[col("repeats")] != "5" {
					t.Errorf("fairness CSV: %s, want %s: %q", got, want, r)
				}
			}
		}
		if !found {
			t.Errorf("fairness CSV: no reader row under bfq in %q", rows)
		}
	})

	// The latency chart draws each side's merged histograms (of the
	// reader, the job it opens on), so its change is theirs, named as
	// such: never "median ratio".
	t.Run("latency chart", func(t *testing.T) {
		e, err := ts.store.Export(ctx, f1.ID)
		if err != nil {
			t.Fatal(err)
		}
		merged := map[string]*hist.Histogram{"none": new(hist.Histogram), "bfq": new(hist.Histogram)}
		for i := range e.Steps {
			st := &e.Steps[i]
			if summary.StepStatus(st) != sweep.StepDone {
				continue
			}
			for _, g := range st.Result.Groups {
				for _, j := range g.Jobs {
					if j.Name != "fg-reader" {
						continue // the chart opens on the first job
					}
					for d := range 2 {
						merged[st.Step.Scheduler].Merge(&j.Dirs[d].Clat.Hist)
					}
				}
			}
		}
		a, b := merged["none"].Percentiles([]float64{99})[0], merged["bfq"].Percentiles([]float64{99})[0]
		want := stats.PercentText(float64(b)/float64(a) - 1)
		body := ts.do(t, "GET", "/api/charts?kind=latency&run="+id1+"&p=99", "").Body.String()
		tooltip := `["vs none (merged-histogram ratio, n=5 vs 5)","` + want + `",""]`
		if !strings.Contains(body, tooltip) {
			t.Errorf("latency chart: no tooltip %s in %.3000s", tooltip, body)
		}
		if strings.Contains(body, "median ratio") || !strings.Contains(body, "change from none (merged-histogram ratio)") {
			t.Error("latency chart: the statistic is misnamed or not named in the subtitle")
		}
	})

	// Between hosts: the group page's table, the runs as two hosts.
	t.Run("group page", func(t *testing.T) {
		want := medianRatio(p1["bfq"], p2["bfq"])
		runs, err := ts.srv.loadRuns(ctx, []int64{f1.ID, f2.ID}, chart.Load(0, chart.On(chart.ComparePage)...))
		if err != nil {
			t.Fatal(err)
		}
		st := hostDiffs(runs, []groupMemberView{{Host: "lab-a"}, {Host: "lab-b"}})
		found := false
		for _, r := range st.Rows {
			if r.Job == "fg-reader" && strings.Contains(r.Step, "scheduler=bfq") {
				found = true
				if !strings.HasPrefix(r.P99Diff, want+" ") || !strings.Contains(r.P99Diff, "("+label) {
					t.Errorf("group page: %q, want %s (%s)", r.P99Diff, want, label)
				}
			}
		}
		if !found {
			t.Errorf("group page: no reader row at bfq in %+v", st.Rows)
		}
	})
}
