package handlers

import (
	"context"
	"encoding/csv"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"

	"iolab/handlers/report"
)

// seedFairness5 is the fairness test on none and bfq with 5 repeats: bfq
// cuts the reader's latency to a quarter and the writer's bandwidth by a
// fifth. name changes the noise (seedLab's generator).
func seedFairness5(t *testing.T, store *db.Store, name string) *db.Run {
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, name, preset.Args("/dev/nvme1n1", nil), 5, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}})
	plan.Preset = preset.Name
	readerLat := map[string]float64{"none": 4000, "bfq": 1000}
	writerBW := map[string]float64{"none": 1900, "bfq": 1500}
	return seedLab(t, store, plan, system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0"}, func(st sweep.Step, job int, rng *rand.Rand) labStep {
		if st.Config.Groups[0].Jobs[job].RW == "randread" {
			lat := readerLat[st.Scheduler] * (1 + 0.08*rng.NormFloat64())
			return labStep{iops: 1e6 / lat, median: time.Duration(lat * 1e3), spread: 0.3}
		}
		iops := writerBW[st.Scheduler] * (1 + 0.04*rng.NormFloat64())
		return labStep{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25}
	})
}

// The compare page of one run compares its schedulers; of two runs, the
// second against the first; its CSV has every number; the run page links
// both the diff and the report, which downloads.
func TestStatDiffPages(t *testing.T) {
	ts := newTestServer(t, Config{})
	f1 := seedFairness5(t, ts.store, "fairness")
	f2 := seedFairness5(t, ts.store, "fairness again")
	id1, id2 := strconv.FormatInt(f1.ID, 10), strconv.FormatInt(f2.ID, 10)
	get := func(t *testing.T, path string, status int) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		ts.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != status {
			t.Fatalf("GET %s: status %d, want %d: %s", path, rec.Code, status, rec.Body.String())
		}
		return rec
	}
	contains := func(t *testing.T, body string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("lacks %q", w)
			}
		}
	}

	t.Run("one run's schedulers", func(t *testing.T) {
		body := get(t, "/compare?run="+id1, 200).Body.String()
		contains(t, body, `id="stat-diff"`, "bfq against none (the base)", `data-verdict="better"`, `data-verdict="worse"`,
			"still significant when every row of the table is taken together", `href="/report?run=`+id1+`"`)
		// The reader's IOPS row: better, about +300 %.
		i := strings.Index(body, "<td>fg-reader</td><td>IOPS</td>")
		if i < 0 {
			t.Fatal("no reader IOPS row")
		}
		row := body[strings.LastIndex(body[:i], "<tr"):][:600]
		if !strings.Contains(row, `data-verdict="better"`) || !strings.Contains(row, "&#43;3") {
			t.Errorf("reader IOPS row: %s", row)
		}
	})
	t.Run("a run against its repeat", func(t *testing.T) {
		body := get(t, "/compare?run="+id1+"&run="+id2, 200).Body.String()
		contains(t, body, "run "+id2+" against run "+id1+" (the base)", "no significant difference")
		if strings.Contains(body, "still significant when every row") {
			t.Error("a repeat of the same run has a difference that holds over the table")
		}
	})
	t.Run("csv", func(t *testing.T) {
		rec := get(t, "/compare/export.csv?table=stats&run="+id1, 200)
		rows, err := csv.NewReader(rec.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head := rows[0]
		col := func(name string) int {
			i := slices.Index(head, name)
			if i < 0 {
				t.Fatalf("no column %q in %q", name, head)
			}
			return i
		}
		if len(rows) != 1+2*4 {
			t.Fatalf("%d rows, want a header and 2 jobs × 4 figures", len(rows))
		}
		for _, r := range rows[1:] {
			if r[col("job")] == "fg-reader" && r[col("figure")] == "IOPS" {
				change, _ := strconv.ParseFloat(r[col("change_pct")], 64)
				if r[col("verdict")] != "significant" || r[col("better")] != "true" || change < 250 || change > 350 || r[col("base_repeats")] != "5" {
					t.Errorf("reader IOPS row %q", r)
				}
			}
		}
		get(t, "/compare/export.csv?table=stats&run="+id1+"&axis=iodepth", 400)
		get(t, "/compare/export.csv?table=stats&run="+id1+"&run="+id2+"&axis=scheduler", 400)
	})
	t.Run("run page", func(t *testing.T) {
		body := get(t, "/runs/"+id1, 200).Body.String()
		contains(t, body, `href="/report?run=`+id1+`"`, `href="/compare?run=`+id1+`#stat-diff"`, "statistical diff of its scheduler values")
	})
	t.Run("report download", func(t *testing.T) {
		rec := get(t, "/report?run="+id1+"&run="+id2, 200)
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="iolab-compare-`+id1+"-"+id2+`.html"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		contains(t, rec.Body.String(), "<svg", "Runs "+id1+", "+id2+" compared")
		get(t, "/report?run=999", 404)
		get(t, "/report", 400)
	})
}

// The bundle: report.html, README.md pointing at each chart's image and
// CSV, every file it names there; without chromium, SVGs and a reason.
// With chromium, each chart's PNG is drawn at twice the chart's size.
func TestReportBundle(t *testing.T) {
	ts := newTestServer(t, Config{})
	f1 := seedFairness5(t, ts.store, "fairness")
	rep, err := report.Build(context.Background(), ts.store, []int64{f1.ID}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := rep.WriteBundle(context.Background(), dir, report.BundleOptions{Chromium: "no-such-chromium"})
	if err != nil {
		t.Fatal(err)
	}
	if b.NoPNG == "" {
		t.Error("no chromium, yet no reason for the missing PNGs")
	}
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"report.html", "stat-diff.csv", "run-" + strconv.FormatInt(f1.ID, 10) + "-steps.csv"}, b.Files...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("bundle lacks %s", f)
		}
		if f != "README.md" && !strings.Contains(string(md), "("+f+")") && !strings.HasSuffix(f, ".csv") {
			t.Errorf("README.md does not link %s", f)
		}
	}
	svgs := filesWith(b.Files, ".svg")
	for _, f := range svgs {
		if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(f, ".svg")+".csv")); err != nil {
			t.Errorf("chart %s: no CSV", f)
		}
	}
	if len(svgs) < 3 || !strings.Contains(string(md), "![") || !strings.Contains(string(md), "| fg-reader | IOPS |") {
		t.Errorf("%d charts; README.md:\n%s", len(svgs), md)
	}

	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	dir = t.TempDir()
	if b, err = rep.WriteBundle(context.Background(), dir, report.BundleOptions{Chromium: path}); err != nil {
		t.Fatal(err)
	}
	if b.NoPNG != "" {
		t.Fatalf("chromium drew no PNG: %s", b.NoPNG)
	}
	pngs := filesWith(b.Files, ".png")
	if len(pngs) == 0 || len(pngs) != len(svgs) {
		t.Fatalf("%d PNGs for %d SVGs", len(pngs), len(svgs))
	}
	f, err := os.Open(filepath.Join(dir, pngs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := img.Bounds().Size(); s.X != 2*report.ChartWidth || s.Y != 2*report.ChartHeight {
		t.Errorf("PNG %v, want twice %d×%d", s, report.ChartWidth, report.ChartHeight)
	}
	// Not a blank page: the chart's lines are darker than the background.
	dark := 0
	for y := 0; y < img.Bounds().Dy(); y += 4 {
		for x := 0; x < img.Bounds().Dx(); x += 4 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 200 {
		t.Errorf("PNG has %d dark pixels of a sample: blank?", dark)
	}
}

func filesWith(files []string, ext string) []string {
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, ext) {
			out = append(out, f)
		}
	}
	return out
}
