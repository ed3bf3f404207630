package cli

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/fioserver/fleettest"
	"iolab/db"
	"iolab/handlers/agent"
)

// TestFioServerLiveIOPS: while a fio server runs a step, its run's live
// view in the browser and its line in the group's API show fio's own
// IOPS and share done, from the server's status (a job paced at 2,000
// IOPS reads about 2k), not an estimate; the run then ends done.
func TestFioServerLiveIOPS(t *testing.T) {
	fleettest.NeedNamespaces(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	d := newFleetDash(t, agent.Timing{})
	h := d.newHost("fio-l")
	h.FioServer(t, fleettest.DefaultFioPort)
	d.addFio("fio-l", h.Addr, fleettest.DataDir+"/f")
	g := d.createGroup(map[string]any{"name": "live", "hosts": []string{"fio-l"},
		"options": map[string]any{"filename": fleettest.DataDir + "/f", "size": "4m", "rw": "randread", "bs": "4k", "ioengine": "psync",
			"rate_iops": 2000, "runtime": "10", "time_based": 1}})
	id := g.Runs[0].ID
	// The group's line, watched from the start: the first that has IOPS
	// past fio's first second (whose figure is of a part of a second).
	lines := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			var gv fioGroupView
			if code, _ := d.call("GET", "/api/groups/"+g.Group, nil, &gv); code == 200 && len(gv.Members) == 1 &&
				strings.Contains(gv.Members[0].Progress, "IOPS") && regexp.MustCompile(`running: [1-9]\d* %`).MatchString(gv.Members[0].Progress) {
				lines <- gv.Members[0].Progress
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		lines <- ""
	}()

	ctx := fleetBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", d.local, id))); err != nil {
		t.Fatal(err)
	}
	live, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
  const iops = document.getElementById("live-iops"), phase = document.getElementById("live-phase");
  return iops && iops.textContent.includes("fio's status") && /[1-9]\d* % of the step/.test(phase.textContent) ? phase.textContent + " · " + iops.textContent : null;
})()`, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("the run's page never showed fio's own IOPS: %v", err)
	}
	// About 2k: fio's figure of a second paced at 2,000 IOPS (a loaded
	// machine's paced job catches up after a stall).
	about2k := func(text, after string) bool {
		m := regexp.MustCompile(regexp.QuoteMeta(after) + `.*?(\d+(?:\.\d+)?)k IOPS`).FindStringSubmatch(text)
		if m == nil {
			return false
		}
		var k float64
		fmt.Sscan(m[1], &k)
		return k >= 1.4 && k <= 2.6
	}
	if !about2k(live, "% of the step") || !strings.HasSuffix(live, "IOPS (fio's status)") {
		t.Errorf("the run's live view: %q, want about 2k IOPS", live)
	}
	screenshot(t, ctx, "fio-live.png")
	line := <-lines
	if !about2k(line, "running: ") {
		t.Errorf("the group's line while it ran: %q, want its share and about 2k IOPS", line)
	}
	t.Logf("run page: %s; group: %s", live, line)
	if r := d.waitEnded(id, 60*time.Second); r.Status != db.StatusDone {
		t.Fatalf("run %s %q", r.Status, r.Error)
	}
}

// fioGroupView is GET /api/groups/UID as this test reads it.
type fioGroupView struct {
	Members []struct {
		Progress string `json:"progress"`
	} `json:"members"`
}
