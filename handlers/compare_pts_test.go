package handlers

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/testdev"
	"iolab/db"

	"github.com/chromedp/chromedp"
)

// runPTS runs a scaled-down PTS iops test on dev (a 2×2 matrix, rounds
// of 300 ms, at most 6 rounds) through the launcher, stored in store, and
// returns its id.
func runPTS(t *testing.T, store *db.Store, dev string) int64 {
	t.Helper()
	ctx := context.Background()
	runner := &bench.Runner{Sys: system.FS{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	spec := launch.Spec{PTS: &pts.Spec{Test: "iops", MaxRounds: 6, WIPCLoops: -1},
		Args: []string{"--filename=" + dev, "--runtime=150ms", "--size=16m", "--bs=4k,64k", "--rwmixread=100,0", "--iodepth=8"}}
	prep, err := launch.Prepare(spec, runner, launch.Options{Check: launch.CheckTargets, Tags: []string{"pts"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateRun(ctx, prep.Record); err != nil {
		t.Fatal(err)
	}
	if _, status, err := launch.Execute(ctx, store, runner, prep.Record.ID, prep, launch.Hooks{}); err != nil || status != db.StatusDone {
		t.Fatalf("PTS run on %s: %s, %v", dev, status, err)
	}
	return prep.Record.ID
}

// storedPTS is a stored PTS run's figures as the test reads them from its
// steps itself: each element's IOPS (reads and writes, over the jobs) per
// round.
type storedPTS struct {
	rounds int
	iops   map[string]map[int]float64 // "rwmixread bs" → round → IOPS
}

func readStoredPTS(t *testing.T, store *db.Store, id int64) storedPTS {
	t.Helper()
	steps, err := store.StepsFor(context.Background(), id, db.StepLoad{})
	if err != nil {
		t.Fatal(err)
	}
	out := storedPTS{iops: map[string]map[int]float64{}}
	for _, st := range steps {
		out.rounds = max(out.rounds, st.Step.Repeat+1)
		if st.Status != sweep.StepDone || st.Result == nil {
			t.Fatalf("run %d step %d: %s", id, st.Step.Seq, st.Status)
		}
		var ios float64
		for _, g := range st.Result.Groups {
			for _, j := range g.Jobs {
				ios += float64(j.Dirs[bench.Read].IOs+j.Dirs[bench.Write].IOs) / j.Runtime.Seconds()
			}
		}
		el := st.Step.Value("rwmixread") + " " + st.Step.Value("bs")
		if out.iops[el] == nil {
			out.iops[el] = map[int]float64{}
		}
		out.iops[el][st.Step.Repeat] = ios
	}
	if len(steps) != 4*out.rounds {
		t.Fatalf("run %d: %d steps in %d rounds; want 4 a round", id, len(steps), out.rounds)
	}
	return out
}

// tracking is the run's tracking variable per round (4 KiB, 100 % write).
func (s storedPTS) tracking() []float64 {
	var out []float64
	for r := range s.rounds {
		out = append(out, s.iops["0 4k"][r])
	}
	return out
}

var (
	ptsRowRE   = regexp.MustCompile(`<tr data-round="(\d+)">(.*?)</tr>`)
	ptsElemRE  = regexp.MustCompile(`<tr data-element="([^"]*)" data-round="(\d+)">(.*?)</tr>`)
	ptsValueRE = regexp.MustCompile(`<td class="num( in-window)?" data-value="([^"]*)">`)
	ptsRunRE   = regexp.MustCompile(`<li data-run="(\d+)" data-reached="(\w+)" data-round="(\d+)" data-window="(\d+)-(\d+)">`)
)

// sameFigure says the page's full value is the stored figure.
func sameFigure(page string, want float64) bool {
	got, err := strconv.ParseFloat(page, 64)
	return err == nil && math.Abs(got-want) <= 1e-9*math.Abs(want)
}

// TestComparePTSRounds: two PTS iops runs on two loop devices compare
// round by round: the page's tracking table and every element's values
// are the stored steps' figures, each run's outcome and window are the
// specification's rule on them, and the statistical diff compares each
// run's window, not its transient rounds.
func TestComparePTSRounds(t *testing.T) {
	devA, devB := testdev.Loop(t, 32<<20), testdev.Loop(t, 32<<20)
	ts := newTestServer(t, Config{})
	idA, idB := runPTS(t, ts.store, devA), runPTS(t, ts.store, devB)
	stored := []storedPTS{readStoredPTS(t, ts.store, idA), readStoredPTS(t, ts.store, idB)}
	ids := []int64{idA, idB}
	url := "/compare?run=" + strconv.FormatInt(idA, 10) + "&run=" + strconv.FormatInt(idB, 10)

	rec := ts.do(t, "GET", url, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", url, rec.Code, rec.Body)
	}
	page := rec.Body.String()
	start, end := strings.Index(page, `<section id="pts">`), strings.Index(page, `id="stat-diff"`)
	if start < 0 || end < start {
		t.Fatalf("the compare page of two PTS runs has no PTS section before its statistical diff")
	}
	section := page[start:end]

	// Each run's outcome and window, by the rule on its stored rounds.
	windows := make([][2]int, 2) // 0-based, inclusive
	outcomes := ptsRunRE.FindAllStringSubmatch(section, -1)
	if len(outcomes) != 2 {
		t.Fatalf("%d outcomes on the page; want 2", len(outcomes))
	}
	for i, s := range stored {
		o := pts.Assess([][]float64{s.tracking()})
		w := o.Windows[0]
		windows[i] = [2]int{w.First, w.First + len(w.Values) - 1}
		m := outcomes[i]
		want := []string{strconv.FormatInt(ids[i], 10), strconv.FormatBool(o.Reached), "0",
			strconv.Itoa(windows[i][0] + 1), strconv.Itoa(windows[i][1] + 1)}
		if o.Reached {
			want[2] = strconv.Itoa(o.Round + 1)
		}
		if !slices.Equal(m[1:], want) {
			t.Errorf("run %d's outcome on the page: run, reached, round, window %q; the rule on its stored rounds gives %q", ids[i], m[1:], want)
		}
		t.Logf("run %d: %d rounds, reached %v, window rounds %d–%d, tracking %v", ids[i], s.rounds, o.Reached, windows[i][0]+1, windows[i][1]+1, s.tracking())
	}

	// The tracking variable's table: a row per round, each run's value
	// and window mark.
	rows := ptsRowRE.FindAllStringSubmatch(section, -1)
	if want := max(stored[0].rounds, stored[1].rounds); len(rows) != want {
		t.Fatalf("the tracking table has %d rounds; the runs ran %d and %d", len(rows), stored[0].rounds, stored[1].rounds)
	}
	for _, row := range rows {
		round, _ := strconv.Atoi(row[1])
		cells := ptsValueRE.FindAllStringSubmatch(row[2], -1)
		if len(cells) != 2 {
			t.Fatalf("round %d: %d values; want one per run", round, len(cells))
		}
		for i, s := range stored {
			r := round - 1
			if r >= s.rounds {
				continue
			}
			if want := s.iops["0 4k"][r]; !sameFigure(cells[i][2], want) {
				t.Errorf("round %d, run %d: the page says %s IOPS, its stored step %v", round, ids[i], cells[i][2], want)
			}
			if in := r >= windows[i][0] && r <= windows[i][1]; (cells[i][1] != "") != in {
				t.Errorf("round %d, run %d: marked in the window %v; its window is rounds %d–%d", round, ids[i], !in, windows[i][0]+1, windows[i][1]+1)
			}
		}
	}

	// Every element of the matrix, every round, both runs.
	elems := ptsElemRE.FindAllStringSubmatch(section, -1)
	if want := 4 * max(stored[0].rounds, stored[1].rounds); len(elems) != want {
		t.Fatalf("the element table has %d rows; want %d (4 elements × rounds)", len(elems), want)
	}
	seen := map[string]bool{}
	for _, e := range elems {
		round, _ := strconv.Atoi(e[2])
		seen[e[1]] = true
		cells := ptsValueRE.FindAllStringSubmatch(e[3], -1)
		for i, s := range stored {
			if round-1 >= s.rounds {
				continue
			}
			want, ok := s.iops[e[1]][round-1]
			if !ok || !sameFigure(cells[i][2], want) {
				t.Errorf("element %s round %d run %d: the page says %s IOPS, its stored step %v", e[1], round, ids[i], cells[i][2], want)
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("the element table shows %d elements; want the 2×2 matrix's 4", len(seen))
	}

	// The statistical diff compares the windows: each point's repeats
	// are its window's rounds, its median theirs.
	if !strings.Contains(page, `id="stat-diff-window"`) {
		t.Errorf("the page does not say the statistical diff compares the steady-state windows")
	}
	csvURL := "/compare/export.csv?run=" + strconv.FormatInt(idA, 10) + "&run=" + strconv.FormatInt(idB, 10) + "&table=stats"
	rec = ts.do(t, "GET", csvURL, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", csvURL, rec.Code, rec.Body)
	}
	table := readCSV(t, rec.Body.String())
	col := func(name string) int { return slices.Index(table[0], name) }
	checked := 0
	for _, row := range table[1:] {
		if row[col("figure")] != "IOPS" {
			continue
		}
		el := row[col("rwmixread")] + " " + row[col("bs")]
		for i, side := range []string{"base", "other"} {
			var window []float64
			for r := windows[i][0]; r <= windows[i][1]; r++ {
				window = append(window, stored[i].iops[el][r])
			}
			if n := row[col(side+"_repeats")]; n != strconv.Itoa(len(window)) {
				t.Errorf("%s, run %d: the diff counts %s repeats; its window holds %d rounds", el, ids[i], n, len(window))
			}
			if got := row[col(side+"_median")]; !sameFigure(got, stats.Median(window)) {
				t.Errorf("%s, run %d: the diff's median %s; its window's rounds' %v", el, ids[i], got, stats.Median(window))
			}
		}
		checked++
	}
	if checked != 4 {
		t.Errorf("the statistical diff has %d IOPS rows; want one per element (4)", checked)
	}

	// The section's CSV has every round of the tracking variable.
	rec = ts.do(t, "GET", strings.Replace(csvURL, "table=stats", "table=pts", 1), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("table=pts: %d %s", rec.Code, rec.Body)
	}
	ptsRows := readCSV(t, rec.Body.String())
	if len(ptsRows) != 1+5*max(stored[0].rounds, stored[1].rounds) {
		t.Errorf("table=pts has %d rows; want a header, then the tracking variable and 4 elements per round", len(ptsRows))
	}

	// One run alone has no rounds to compare with.
	if rec := ts.do(t, "GET", "/compare/export.csv?run="+strconv.FormatInt(idA, 10)+"&table=pts", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("table=pts of one run: %d; want 400", rec.Code)
	}

	// As a user sees it.
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("chromium is not installed: no screenshot")
		return
	}
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	ctx, cancel := browser(t, path)
	defer cancel()
	err = chromedp.Do(ctx, chromedp.Navigate(hs.URL+url), chromedp.WaitVisible(`#pts table.pts-tracking`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("pts").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, artifactsDir(t), "compare-pts.jpg", 90)
	for _, want := range []string{"Tracking variable: bs=4k rwmixread=0 iops", "steady state", "Every element of the matrix"} {
		if !strings.Contains(text, want) {
			t.Errorf("the browser shows no %q in the PTS section:\n%s", want, text)
		}
	}
}
