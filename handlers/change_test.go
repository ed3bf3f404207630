package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
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
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
)

// figureRepeats are one job's values of a figure in each done repeat of
// run id, by key (the step's scheduler, engine, …): read from the store
// step by step, as a reader of the raw results would, not through any
// surface under test.
func figureRepeats(t *testing.T, store *db.Store, id int64, job string, key func(sweep.Step) string, figure func(summary.JobFigures) float64) map[string][]float64 {
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
			if j.Name == job && !j.Total {
				out[key(st.Step)] = append(out[key(st.Step)], figure(j))
			}
		}
	}
	return out
}

// mergedP99 is job's clat p99 (ns) from the histograms of all its done
// repeats merged, by key, worked out from the stored steps.
func mergedP99(t *testing.T, store *db.Store, id int64, job string, key func(sweep.Step) string) map[string]float64 {
	t.Helper()
	e, err := store.Export(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	merged := map[string]*hist.Histogram{}
	for i := range e.Steps {
		st := &e.Steps[i]
		if summary.StepStatus(st) != sweep.StepDone {
			continue
		}
		k := key(st.Step)
		if merged[k] == nil {
			merged[k] = new(hist.Histogram)
		}
		for _, g := range st.Result.Groups {
			for _, j := range g.Jobs {
				for d := 0; j.Name == job && d < 2; d++ {
					merged[k].Merge(&j.Dirs[d].Clat.Hist)
				}
			}
		}
	}
	out := map[string]float64{}
	for k, h := range merged {
		out[k] = float64(h.Percentiles([]float64{99})[0])
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

// changeSet is one pair of sets of repeats and where the statistical
// diff shows their change.
type changeSet struct {
	name      string
	a, b      []float64
	compare   string // the compare page's query
	reportIDs []int64
	opt       report.Options
	// axes and point are the diff's axes and the row's values on them;
	// job and figure the rest of the row's key.
	axes, point []string
	job, figure string
	// other is how the diff names B: the tables after its heading, the
	// CSV's rows with it as "other", are this pair's.
	other string
}

// TestOneChange: one change for one pair of sets on every surface. The
// fixture's pairs are bfq against none within the fairness run, the run
// against its repeat (the reader's clat p99, 5 repeats a side), and
// io_uring against libaio within an engines run (IOPS at iodepth 4, 3
// repeats a side). Worked out by hand as the ratio of the medians, each
// must read the same, named "median ratio" with n on each side, in the
// statistical diff (terminal table, CSV), on the compare page, in the
// report (HTML and Markdown), on the fairness chart (labels, tooltip,
// CSV) and on the group page's table between hosts; the latency chart,
// which draws merged histograms, names its own ratio. The fixture's
// Hodges–Lehmann shifts read otherwise, so a surface that printed one as
// the change fails.
func TestOneChange(t *testing.T) {
	ts := newTestServer(t, Config{})
	ctx := context.Background()
	f1 := seedFairness5(t, ts.store, "fairness")
	f2 := seedFairness5(t, ts.store, "fairness, its repeat")
	eng := seedEnginesLab(t, ts.store, "engines", system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0"}, 1)
	id1, id2, idE := strconv.FormatInt(f1.ID, 10), strconv.FormatInt(f2.ID, 10), strconv.FormatInt(eng.ID, 10)
	scheduler := func(st sweep.Step) string { return st.Scheduler }
	p99 := func(j summary.JobFigures) float64 { return float64(j.P99) / 1e3 }
	p1 := figureRepeats(t, ts.store, f1.ID, "fg-reader", scheduler, p99)
	p2 := figureRepeats(t, ts.store, f2.ID, "fg-reader", scheduler, p99)
	engineAt := func(st sweep.Step) string { return st.Value(sweep.AxisEngine) + "@" + st.Value(sweep.AxisIODepth) }
	iops := figureRepeats(t, ts.store, eng.ID, "randwrite", engineAt, func(j summary.JobFigures) float64 { return j.IOPS })
	if len(p1["none"]) != 5 || len(p1["bfq"]) != 5 || len(p2["bfq"]) != 5 || len(iops["libaio@4"]) != 3 || len(iops["io_uring@4"]) != 3 {
		t.Fatalf("fixture: %d, %d, %d, %d and %d repeats, want 5, 5, 5, 3 and 3", len(p1["none"]), len(p1["bfq"]), len(p2["bfq"]),
			len(iops["libaio@4"]), len(iops["io_uring@4"]))
	}
	sets := []changeSet{
		{name: "bfq against none", a: p1["none"], b: p1["bfq"], compare: "run=" + id1, reportIDs: []int64{f1.ID},
			opt: report.Options{Axis: "scheduler", Base: "none"}, job: "fg-reader", figure: "clat p99", other: "bfq"},
		{name: "run against its repeat", a: p1["bfq"], b: p2["bfq"], compare: "run=" + id1 + "&run=" + id2, reportIDs: []int64{f1.ID, f2.ID},
			axes: []string{"scheduler"}, point: []string{"bfq"}, job: "fg-reader", figure: "clat p99", other: "run " + id2},
		{name: "io_uring against libaio", a: iops["libaio@4"], b: iops["io_uring@4"], compare: "run=" + idE + "&axis=ioengine&base=libaio",
			reportIDs: []int64{eng.ID}, opt: report.Options{Axis: "ioengine", Base: "libaio"},
			axes: []string{"iodepth"}, point: []string{"4"}, job: "randwrite", figure: "IOPS", other: "io_uring"},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) { checkDiffChange(t, ts, set) })
	}
	label := "median ratio, n=5 vs 5"

	// Within a run: the fairness chart's labels, tooltip and CSV.
	t.Run("fairness chart", func(t *testing.T) {
		want := medianRatio(p1["none"], p1["bfq"])
		body := ts.do(t, "GET", "/api/charts?kind=fairness&run="+id1, "").Body.String()
		tooltip := `["vs none (` + label + `)","` + want + `",""]`
		if !strings.Contains(body, tooltip) {
			t.Errorf("fairness chart: no tooltip %s", tooltip)
		}
		if !strings.Contains(body, `"bfq\np99 `+want+`"`) {
			t.Errorf("fairness chart: bfq is not labelled with the p99's change %q", want)
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
		for _, c := range []struct {
			chart, base, at string
			merged          map[string]float64
			n               int
		}{
			{"/api/charts?kind=latency&p=99&run=" + id1, "none", "bfq", mergedP99(t, ts.store, f1.ID, "fg-reader", scheduler), 5},
			// Engines compared draw lat by default; mergedP99 is clat's.
			{"/api/charts?kind=latency&p=99&lat=clat&run=" + idE, "libaio", "io_uring@4", mergedP99(t, ts.store, eng.ID, "randwrite", engineAt), 3},
		} {
			base := c.base
			if strings.Contains(c.at, "@") {
				base += "@" + strings.Split(c.at, "@")[1]
			}
			want := stats.PercentText(c.merged[c.at]/c.merged[base] - 1)
			body := ts.do(t, "GET", c.chart, "").Body.String()
			tooltip := fmt.Sprintf(`["p99 vs %s (merged-histogram ratio, n=%d vs %d)","%s",""]`, c.base, c.n, c.n, want)
			if !strings.Contains(body, tooltip) {
				t.Errorf("latency chart %s: no tooltip %s", c.chart, tooltip)
			}
			if strings.Contains(body, "median ratio") || !strings.Contains(body, "change from "+c.base+" (merged-histogram ratio)") {
				t.Errorf("latency chart %s: the statistic is misnamed or not named in the subtitle", c.chart)
			}
		}
	})

	// Between hosts: the group page's table, the runs as two hosts.
	t.Run("group page", func(t *testing.T) {
		want := medianRatio(p1["bfq"], p2["bfq"])
		runs, err := ts.srv.loadRuns(ctx, []int64{f1.ID, f2.ID}, chart.Load(0, chart.On(chart.ComparePage)...))
		if err != nil {
			t.Fatal(err)
		}
		st := hostDiffs(runs, []groupMemberView{{Host: "lab-a"}, {Host: "lab-b"}}, summary.LatClat, true) // the figure every surface gives here: clat p99
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

// checkDiffChange checks set's change, worked out by hand, on the
// surfaces of the statistical diff: the compare page and its CSV, the
// report's HTML and Markdown, and the terminal's table.
func checkDiffChange(t *testing.T, ts *testServer, set changeSet) {
	ctx := context.Background()
	want := medianRatio(set.a, set.b)
	label := fmt.Sprintf("median ratio, n=%d vs %d", len(set.a), len(set.b))
	if hl := stats.PercentText(stats.Compare(set.a, set.b, 0.95).Shift); hl == want {
		t.Fatalf("fixture: the HL shift %s reads as the median ratio: the test could not tell them apart", hl)
	}
	key := append(append([]string(nil), set.point...), set.job, set.figure)
	checkHTML := func(what, body string) {
		t.Helper()
		if !strings.Contains(body, "<th>"+summary.ChangeHeading+"</th>") || !strings.Contains(body, "<th>HL shift</th>") {
			t.Errorf("%s: no %q or HL shift heading", what, summary.ChangeHeading)
		}
		_, body, _ = strings.Cut(body, ` data-b="`+set.other+`"`)
		body, _, _ = strings.Cut(body, "</section>")
		row := htmlRow(body, key...)
		if cell := `title="` + label + `">` + htmlText(want) + "</td>"; !strings.Contains(row, cell) {
			t.Errorf("%s: row %q lacks %q", what, row, cell)
		}
	}

	// The compare page, and the report's HTML and Markdown.
	checkHTML("compare page", ts.do(t, "GET", "/compare?"+set.compare, "").Body.String())
	rep, err := report.Build(ctx, ts.store, set.reportIDs, set.opt)
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	checkHTML("report HTML", html.String())
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
	_, md, _ = strings.Cut(md, "### "+strings.ReplaceAll(set.other, "_", `\_`)+" against ")
	md, _, _ = strings.Cut(md, "\n### ")
	prefix := "| " + strings.Join(key, " | ") + " |"
	found := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, prefix) {
			found = true
			if !strings.Contains(line, "| "+want+" |") {
				t.Errorf("report Markdown: %q lacks %q", line, want)
			}
		}
	}
	if !found {
		t.Errorf("report Markdown: no row %q", prefix)
	}

	// The diff's CSV: the number whole, its statistic and repeats named.
	rows, err := csv.NewReader(ts.do(t, "GET", "/compare/export.csv?table=stats&"+set.compare, "").Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	found = false
	for _, r := range rows[1:] {
		if r[col("other")] != set.other || r[col("job")] != set.job || r[col("figure")] != set.figure ||
			slices.ContainsFunc(set.axes, func(a string) bool { return r[col(a)] != set.point[slices.Index(set.axes, a)] }) {
			continue
		}
		found = true
		v, _ := strconv.ParseFloat(r[col("change_pct")], 64)
		if got := stats.PercentText(v / 100); got != want || r[col("statistic")] != "median ratio" ||
			r[col("base_repeats")] != strconv.Itoa(len(set.a)) || r[col("other_repeats")] != strconv.Itoa(len(set.b)) {
			t.Errorf("diff CSV: %s (%q), want %s: %q", got, r[col("statistic")], want, r)
		}
	}
	if !found {
		t.Errorf("diff CSV: no row %q in %q", key, rows)
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
	found = false
	for _, l := range diffs[0].Lines() {
		if l.Job == set.job && l.Metric == set.figure && slices.Equal(l.Point, set.point) {
			found = true
			if l.Change != want || l.Stat != label {
				t.Errorf("terminal table: %s (%s), want %s (%s)", l.Change, l.Stat, want, label)
			}
		}
	}
	if !found {
		t.Errorf("terminal table: no row %q", key)
	}
}
