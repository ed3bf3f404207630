package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/db"
)

// The live phase of the load benchmark: the run is running again and its
// last steps land one by one (stored again, whole, as a runner stores a
// step that ends), while each endpoint of liveTargets is loaded as in the
// cached phase. A step changes the run's version, so every cached answer
// of it is built again: what the phase measures is the first request
// after a step lands (a probe sent as soon as the step is stored, with
// 32 clients waiting beside it) and the rate and p99 over the phase,
// rebuilds included.
var (
	dashLoadLive  = flag.Int("dashload.live", 4, "steps landing in the live phase, per endpoint (0: no live phase)")
	dashLoadEvery = flag.Duration("dashload.every", 2*time.Second, "time between steps landing in the live phase")
)

// liveResult is one endpoint's live phase.
type liveResult struct {
	loadResult
	firsts []time.Duration // each probe's, sent as a step landed
}

// liveTargets are the endpoints of the live phase: the run page, its
// first chart's page, JSON and CSV, the timeline's, the steps CSV and
// the document.
func liveTargets(all []loadTarget) []loadTarget {
	var out []loadTarget
	for _, tg := range all {
		if tg.plain || tg.path == "/" {
			continue
		}
		if strings.HasPrefix(tg.name, "chart") && !strings.HasSuffix(tg.name, " iops") && !strings.HasSuffix(tg.name, " timeline") {
			continue
		}
		out = append(out, tg)
	}
	return out
}

// loadLive runs the live phase on run (stored at dbPath, served at base).
// Its run is left done, its steps as they were.
func loadLive(t *testing.T, hc *http.Client, base, dbPath string, run *db.Run, targets []loadTarget, clients int, rss *serverRSS) []liveResult {
	ctx := context.Background()
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	steps, err := store.StepsFor(ctx, run.ID, db.LoadAll())
	if err != nil {
		t.Fatal(err)
	}
	var landing []sweep.StepResult
	for i := len(steps) - 1; i >= 0 && len(landing) < *dashLoadLive; i-- {
		if steps[i].Status == sweep.StepDone {
			landing = append(landing, steps[i])
		}
	}
	slices.Reverse(landing)
	if err := store.SetRunStatus(ctx, run.ID, db.StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
			t.Error(err)
		}
	}()
	var out []liveResult
	for _, tg := range targets {
		d := time.Duration(len(landing)) * *dashLoadEvery
		done := make(chan loadResult)
		rss.phase()
		go func() { done <- loadEndpoint(hc, base, tg, clients, d) }()
		var lr liveResult
		lastTag := ""
		for i := range landing {
			time.Sleep(*dashLoadEvery / 2)
			if err := store.SaveStep(ctx, run.ID, &landing[i]); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			next := time.After(*dashLoadEvery / 2)
			req, _ := http.NewRequest("GET", base+tg.path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lr.firsts = append(lr.firsts, time.Since(t0))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("%s after a step landed: %d %v", tg.path, resp.StatusCode, err)
				continue
			}
			// What was cached before the step is not served after it.
			tag := resp.Header.Get("ETag")
			if tag == "" || tag == lastTag {
				t.Errorf("%s: ETag %q after a step landed, %q before", tg.path, tag, lastTag)
			}
			<-next
			lastTag = tag
		}
		lr.loadResult = <-done
		lr.rss = rss.phase()
		out = append(out, lr)
	}
	return out
}

// liveTable writes the live phase's results.
func liveTable(results []liveResult, clients int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Live: the run running, a step landing every %v (%d per endpoint), %d clients\n\n", *dashLoadEvery, *dashLoadLive, clients)
	b.WriteString("| endpoint | first request after a step (median, max) | req/s | p50 | p99 | peak RSS | target | |\n|---|--:|--:|--:|--:|--:|---|---|\n")
	for _, r := range results {
		f := slices.Sorted(slices.Values(r.firsts))
		want, mark := "", ""
		if r.target.minRate > 0 {
			want = fmt.Sprintf("≥ %.0f/s", r.target.minRate)
			if r.target.maxP99 > 0 {
				want += fmt.Sprintf(", p99 < %v", r.target.maxP99)
			}
			mark = "ok"
			if !r.pass() {
				mark = "**missed**"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s, %s | %.0f | %s | %s | %d MiB | %s | %s |\n", shortPath(r.target.path), durText(f[len(f)/2]), durText(f[len(f)-1]),
			r.rate, durText(r.p50), durText(r.p99), r.rss>>20, want, mark)
	}
	return b.String()
}
