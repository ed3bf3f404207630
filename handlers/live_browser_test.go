package handlers

import (
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/launch"
	"iolab/db"
)

// liveSeen is what the run page shows at one moment of a live run.
type liveSeen struct {
	At     float64  `json:"at"`     // ms since the page loaded
	Status string   `json:"status"` // #run-status
	Step   string   `json:"step"`   // #live-step: "step 3/6 · iodepth=4"
	Title  string   `json:"title"`  // the live chart's title: which step it draws
	Points int      `json:"points"` // the live chart's points, all series
	Series []string `json:"series"` // the live chart's series
	Rows   int      `json:"rows"`   // steps in the steps table
	Header string   `json:"header"` // the steps table's heading
	IOPS   string   `json:"iops"`   // #live-iops
	Phase  string   `json:"phase"`  // #live-phase
}

// recordLive makes the page read itself into window.liveSeen at each
// change of its text (after each event it handles: the live chart is
// drawn with the text beside it) and every 100 ms, whatever the DevTools
// round trips cost on a loaded machine; the test takes what it recorded
// (takeLive) until the page reloads as a finished run's.
const recordLive = `(() => {
  const text = id => (document.getElementById(id) || {}).textContent || "";
  const read = () => {
    const c = window.iolabCharts && window.iolabCharts.live;
    const o = c ? c.getOption() : {series: [], title: [{}]};
    const steps = document.querySelectorAll('#run-steps tbody tr[class^="st-"]:not(.job-more)');
    const h = document.querySelector("#run-steps h2");
    return {at: performance.now(), status: text("run-status"), step: text("live-step"), title: (o.title[0] || {}).text || "",
      points: o.series.reduce((n, s) => n + (s.data || []).length, 0), series: o.series.map(s => s.name),
      rows: steps.length, header: h ? h.textContent : "", iops: text("live-iops"), phase: text("live-phase")};
  };
  window.liveSeen = [read()];
  new MutationObserver(() => window.liveSeen.push(read())).observe(document.body, {subtree: true, childList: true, characterData: true});
  setInterval(() => window.liveSeen.push(read()), 100);
  return true;
})()`

const takeLive = `window.liveSeen ? window.liveSeen.splice(0) : null`

// TestBrowserLiveView launches a plan of six 1 s steps of two unlike jobs
// (a 4 KiB reader beside a 1 MiB writer) from the dashboard's form and
// watches its page at the dashboard's own sampling (launch.LiveEvery).
// The run queues behind another on the same disk until the page follows
// it, so that its first step is not over before a loaded machine has
// drawn the page; its jobs are paced (rate_iops) so that they leave the
// browser the CPU a user's would have. Then:
// each finished step joins the steps table as it finishes, the live chart
// draws every step, and the live IOPS are each job's, never their sum,
// written as the static charts write numbers (48.2k, not 48,213).
func TestBrowserLiveView(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{ProgressEvery: launch.LiveEvery})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)

	// The run it queues behind, cancelled once the page listens.
	blocker := launchRun(t, ts, `{"options":{"filename":"blocker.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"60s","time_based":1}}`)
	waitStatus(t, ts.store, blocker, db.StatusRunning)
	jobfile := fmt.Sprintf("[global]\nfilename=%s\nsize=16m\nioengine=io_uring\nruntime=1\ntime_based\n\n"+
		"[reader]\nrw=randread\nbs=4k\nrate_iops=4000\n\n[writer]\nrw=write\nbs=1m\nrate_iops=100\n", filepath.Join(ts.dataDir, "live.dat"))
	ctx, cancel := browser(t, path)
	defer cancel()
	err = chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/runs/new"),
		chromedp.WaitVisible(`form#new-run`),
		chromedp.SetValue(`input[name=name]`, "live view"),
		chromedp.SetValue(`textarea[name=jobfile]`, jobfile),
		chromedp.SetValue(`input[name=iodepth]`, "1,2,4,8,16,32"),
		chromedp.Click(`form#new-run button[type=submit]`),
		chromedp.WaitVisible(`#live[data-stream=open]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	queued, err := chromedp.Run(ctx, chromedp.Text(`#live-queued`))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Queued: run %d is using", blocker); !strings.HasPrefix(queued, want) {
		t.Fatalf("the run page says %q, want %q…", queued, want)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](recordLive)); err != nil {
		t.Fatal(err)
	}
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", blocker), ""); rec.Code >= 300 {
		t.Fatalf("cancel run %d: %d %s", blocker, rec.Code, rec.Body)
	}
	const steps = 6
	var seen []liveSeen
	deadline := time.Now().Add(45 * time.Second)
	shot := false
	for ended := false; !ended; {
		time.Sleep(100 * time.Millisecond)
		batch, err := chromedp.Run(ctx, chromedp.Evaluate[[]liveSeen](takeLive))
		if err != nil {
			t.Fatal(err)
		}
		if batch == nil {
			break // the page reloaded as a finished run's
		}
		for _, s := range batch {
			if s.Status != db.StatusRunning && s.Status != db.StatusQueued {
				ended = true
				break
			}
			seen = append(seen, s)
		}
		if last := seen[len(seen)-1]; !shot && strings.HasPrefix(last.Title, "IOPS per interval · step 4/") && last.Points > 4 {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			writeArtifact(t, art, "live-view.png", png)
			shot = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end in 45 s; last seen %+v", seen[len(seen)-1])
		}
	}
	if len(seen) == 0 {
		t.Fatal("the run ended before its page was read")
	}

	// The live chart draws each step (four points a second draw a 1 s
	// step), and by then the table holds every step before it.
	drew := map[int]bool{}
	rowsAt := map[int]int{} // the most rows seen while step k was drawn
	for i, s := range seen {
		if i > 0 && s.Rows < seen[i-1].Rows {
			t.Errorf("the steps table shrank: %d rows, then %d", seen[i-1].Rows, s.Rows)
		}
		var k, total int
		if _, err := fmt.Sscanf(strings.TrimPrefix(s.Title, "IOPS per interval · "), "step %d/%d", &k, &total); err != nil {
			continue
		}
		if total != steps {
			t.Errorf("chart title %q: want %d steps", s.Title, steps)
		}
		if s.Points > 0 {
			drew[k] = true
		}
		rowsAt[k] = max(rowsAt[k], s.Rows)
	}
	for k := 1; k <= steps; k++ {
		if !drew[k] {
			t.Errorf("the live chart never drew step %d", k)
		}
		if k > 1 && rowsAt[k] < k-1 {
			t.Errorf("while step %d ran the steps table had %d of the %d steps before it", k, rowsAt[k], k-1)
		}
	}
	if last := seen[len(seen)-1]; last.Rows < steps-1 || !strings.Contains(last.Header, fmt.Sprintf("of %d", steps)) {
		t.Errorf("last seen before the run ended: %d rows, heading %q; want %d or more rows, before any reload", last.Rows, last.Header, steps-1)
	}

	// Two unlike jobs: two numbers, each the job's, as the static charts
	// write them, and a series each.
	rate := `\d+(\.\d+)?[kMG]? IOPS`
	perJob := regexp.MustCompile(`^reader ` + rate + `, writer ` + rate + `$`)
	both := 0
	for _, s := range seen {
		if !strings.HasPrefix(s.Phase, "measuring") && !strings.HasPrefix(s.Phase, "ramp") {
			continue
		}
		if strings.Contains(s.IOPS, "total") || strings.Contains(s.IOPS, ",0") || strings.Contains(s.IOPS, ",000") {
			t.Errorf("live IOPS %q: a total of unlike jobs, or not written as the charts write", s.IOPS)
		}
		if perJob.MatchString(s.IOPS) && len(s.Series) == 2 && s.Series[0] == "reader" && s.Series[1] == "writer" {
			both++
		}
	}
	if both == 0 {
		t.Errorf("never saw each job's live IOPS and series; seen %+v", seen[len(seen)-1])
	}
	if t.Failed() {
		for _, s := range seen {
			t.Logf("%+v", s)
		}
	}
}
