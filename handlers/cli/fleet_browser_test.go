package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/fioserver/fleettest"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

// fleetBrowser starts a headless Debian chromium with its own profile.
func fleetBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// screenshot leaves a full-page screenshot in $IOLAB_ARTIFACTS, when it
// is set (as handlers' browser tests: a screenshot is for a person).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("IOLAB_ARTIFACTS")
	if dir == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), shot, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", filepath.Join(dir, name))
}

// TestFleetFourHosts: two `fio --server`s and two `iolab agent`s, each on
// its own namespace host; one plan ticked for all four in the new-run
// form in headless chromium runs on each, and the group's page draws
// four series named by the hosts.
func TestFleetFourHosts(t *testing.T) {
	fleettest.NeedNamespaces(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	d := newFleetDash(t, agent.Timing{Poll: 2 * time.Second})
	for _, name := range []string{"fio-a", "fio-b"} {
		h := d.newHost(name)
		h.FioServer(t, fleettest.DefaultFioPort)
		d.addFio(name, h.Addr, fleettest.DataDir+"/f")
	}
	for _, name := range []string{"agent-a", "agent-b"} {
		d.newAgentHost(name)
	}
	hosts := []string{"agent-a", "agent-b", "fio-a", "fio-b"}
	d.checkHosts(hosts, nil)

	ctx := fleetBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(d.local+"/hosts"), chromedp.WaitVisible(`table#hosts`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "fleet-hosts.png")
	d.checkHostsPage(hosts)
	// The form says what each host offers, to pick a target every ticked
	// host allows.
	form := d.get("/runs/new")
	for _, h := range hosts {
		_, label, _ := strings.Cut(form, `value="`+h+`">`)
		label, _, _ = strings.Cut(label, "</label>")
		want := "offers files under " + fleettest.DataDir
		if strings.HasPrefix(h, "fio-") {
			want = "offers " + fleettest.DataDir + "/f"
		}
		if !strings.Contains(label, want) {
			t.Errorf("the form's %s says %q, not %q", h, label, want)
		}
	}
	fill := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(d.local + "/runs/new"),
		chromedp.WaitVisible(`fieldset#hosts`),
		chromedp.SetValue(`input[name=name]`, "four"),
		chromedp.SetValue(`input[name=target]`, fleettest.DataDir+"/f"),
		chromedp.SetValue(`input[name=size]`, "4m"),
		chromedp.SetValue(`select[name=rw]`, "randread"),
		chromedp.SetValue(`input[name=runtime]`, "1"),
		chromedp.SetValue(`input[name=iodepth]`, "1,8"),
		chromedp.SetValue(`input[name=ioengine]`, "libaio"),
	}
	for _, h := range hosts {
		fill = append(fill, chromedp.Click(`fieldset#hosts input[name=hosts][value="`+h+`"]`))
	}
	if err := chromedp.Do(ctx, fill...); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "fleet-new-run.png")
	if err := chromedp.Do(ctx, chromedp.Click(`form#new-run button[type=submit]`), chromedp.WaitVisible(`#group-runs`)); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	uid, ok := strings.CutPrefix(loc, d.local+"/groups/")
	if !ok {
		t.Fatalf("landed on %s, not a group's page", loc)
	}
	g, err := d.store.GetFleetRun(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	// Each host is running its own run on the Hosts page and in
	// /api/hosts while it runs it (the runs overlap, not all at once on a
	// loaded machine), and idle again once every run has ended: watched
	// from now, while the page is looked at, for on a loaded machine a
	// host's run may end before the page has been drawn.
	runOf := map[string]int64{}
	for _, m := range g.Members {
		runOf[m.HostName] = m.RunID
	}
	watched := make(chan error, 1)
	go func() {
		// d.call fails the test on a broken connection (Goexit): the
		// deferred send still lets the test goroutine go on.
		err := errors.New("the watch of /api/hosts stopped")
		defer func() { watched <- err }()
		err = d.watchRunning(runOf, 90*time.Second)
	}()
	// The page follows the runs as they go: some host's step and figure.
	live, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
  const cells = [...document.querySelectorAll('#group-runs td[data-col=progress]')].map(td => td.textContent).filter(s => s.startsWith("step "));
  return cells.length ? cells.join(" | ") : null;
})()`, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("the group's page showed no host's step: %v", err)
	}
	t.Logf("live: %s", live)
	screenshot(t, ctx, "fleet-group-live.png")
	if err := <-watched; err != nil {
		t.Error(err)
	}
	d.checkHosts(hosts, nil)
	var names []string
	for _, m := range g.Members {
		names = append(names, m.HostName)
		r := d.waitEnded(m.RunID, 90*time.Second)
		steps, done := d.stepsOnce(m.RunID)
		if r.Status != db.StatusDone || len(steps) != 2 || done != 2 {
			t.Fatalf("%s: run %d %s %q, %d steps, %d done", m.HostName, m.RunID, r.Status, r.Error, len(steps), done)
		}
		if r.Hostname != m.HostName {
			t.Errorf("%s: run %d recorded hostname %q", m.HostName, m.RunID, r.Hostname)
		}
		// Each host's run page leads back to the group.
		resp, err := http.Get(fmt.Sprintf("%s/runs/%d", d.local, m.RunID))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), `<a href="/groups/`+uid+`" id="run-group">`) {
			t.Errorf("run %d's page does not link its group", m.RunID)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, hosts) {
		t.Fatalf("group of %v, want %v", names, hosts)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(loc), chromedp.WaitVisible(`div.chart[data-kind=iops]`)); err != nil {
		t.Fatal(err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Poll[drawnSeries](`(() => {
  const c = window.iolabCharts && window.iolabCharts.iops;
  if (!c) return null;
  const o = c.getOption();
  return {categories: o.xAxis[0].data.map(String), series: o.series.map(s => s.data), names: o.series.map(s => s.name)};
})()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "fleet-group.png")
	got := slices.Clone(drawn.Names)
	slices.Sort(got)
	if !slices.Equal(got, hosts) || !slices.Equal(drawn.Categories, []string{"1", "8"}) {
		t.Fatalf("group chart: series %v over %v, want %v over iodepth 1, 8", drawn.Names, drawn.Categories, hosts)
	}
	for i, s := range drawn.Series {
		var boxes []json.RawMessage
		if err := json.Unmarshal(s, &boxes); err != nil || len(boxes) != 2 {
			t.Fatalf("series %s: %d boxes (%v)", drawn.Names[i], len(boxes), err)
		}
	}
	// The statistical diff compares the hosts by name, each against the
	// first, and the page says which hosts' setup it could not check.
	page, err := chromedp.Run(ctx, chromedp.Evaluate[groupPageText](`(() => ({
  diffs: [...document.querySelectorAll('section.stat-diff')].map(s => s.dataset.b + " against " + s.dataset.a),
  unchecked: [...document.querySelectorAll('#warnings li[data-field="not checked"]')].map(li => li.textContent),
}))()`))
	if err != nil {
		t.Fatal(err)
	}
	base := g.Members[0].HostName
	var want []string
	for _, m := range g.Members[1:] {
		want = append(want, m.HostName+" against "+base)
	}
	if !slices.Equal(page.Diffs, want) {
		t.Errorf("statistical diffs %q, want %q", page.Diffs, want)
	}
	if len(page.Unchecked) != 1 || !strings.Contains(page.Unchecked[0], "fio-a (run") || !strings.Contains(page.Unchecked[0], "fio-b (run") ||
		strings.Contains(page.Unchecked[0], "agent-") || !strings.Contains(page.Unchecked[0], "IOMMU mode") {
		t.Errorf("unchecked warnings %q", page.Unchecked)
	}
}

// groupPageText is what the group page says of its hosts.
type groupPageText struct {
	Diffs     []string `json:"diffs"`
	Unchecked []string `json:"unchecked"`
}

// checkHosts checks /api/hosts: every host of names, with its kind, its
// address in its namespace, the hostname, kernel, CPU and devices it told
// (agents) or its probe said (fio servers), seen lately, and idle — or,
// for a host running[name] names, running that run.
func (d *fleetDash) checkHosts(names []string, running map[string]int64) []db.Host {
	d.t.Helper()
	var hs []db.Host
	if code, msg := d.call("GET", "/api/hosts", nil, &hs); code != http.StatusOK {
		d.t.Fatalf("GET /api/hosts: %d %s", code, msg)
	}
	here, err := system.FS{}.Host()
	if err != nil {
		d.t.Fatal(err)
	}
	var got []string
	for _, h := range hs {
		got = append(got, h.Name)
		ns := d.nsHost(h.Name)
		state, run := db.HostIdle, int64(0)
		if id, ok := running[h.Name]; ok {
			state, run = db.HostRunning, id
		}
		ok := h.Address == ns.Addr.String() && h.Hostname == h.Name && time.Since(h.LastSeen) < time.Minute && h.State == state && h.Run == run
		if strings.HasPrefix(h.Name, "agent-") {
			ok = ok && h.Kind == db.HostAgent && h.Kernel == here.KernelRelease && h.CPU == here.CPUModel && h.HasToken &&
				slices.Equal(h.Devices, []string{"files under " + fleettest.DataDir})
		} else {
			ok = ok && h.Kind == db.HostFio && h.Kernel == "" && strings.HasPrefix(h.Details.FioVersion, "fio-") &&
				slices.Equal(h.Devices, []string{fleettest.DataDir + "/f"})
		}
		if !ok {
			d.t.Errorf("/api/hosts: %s: %+v", h.Name, h)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		d.t.Fatalf("/api/hosts lists %v, want %v", got, names)
	}
	return hs
}

// watchRunning follows /api/hosts until every run of runs (host → run)
// has ended, and says what is wrong unless each host was seen running
// its own run and no host was seen running another's. It does not fail
// the test itself: it runs beside the browser's checks.
func (d *fleetDash) watchRunning(runs map[string]int64, within time.Duration) error {
	seen := map[string]bool{}
	deadline := time.Now().Add(within)
	for {
		var hs []db.Host
		if code, msg := d.call("GET", "/api/hosts", nil, &hs); code != http.StatusOK {
			return fmt.Errorf("GET /api/hosts: %d %s", code, msg)
		}
		for _, h := range hs {
			if h.State != db.HostRunning {
				continue
			}
			if h.Run != runs[h.Name] {
				return fmt.Errorf("%s is running run %d, its run is %d", h.Name, h.Run, runs[h.Name])
			}
			seen[h.Name] = true
		}
		ended := true
		for _, id := range runs {
			r, err := d.store.GetRun(context.Background(), id)
			if err != nil {
				return err
			}
			ended = ended && r.Status != db.StatusQueued && r.Status != db.StatusRunning
		}
		if ended {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runs %v not ended after %v", runs, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var never []string
	for h := range runs {
		if !seen[h] {
			never = append(never, h)
		}
	}
	if len(never) > 0 {
		slices.Sort(never)
		return fmt.Errorf("%s never seen running on /api/hosts", strings.Join(never, ", "))
	}
	return nil
}

// checkHostsPage checks that the Hosts page shows what /api/hosts says:
// each host's row with its state, address, kernel and CPUs (an agent's,
// or that a fio server does not report them), devices and last seen.
func (d *fleetDash) checkHostsPage(names []string) {
	d.t.Helper()
	resp, err := http.Get(d.local + "/hosts")
	if err != nil {
		d.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	here, err := system.FS{}.Host()
	if err != nil {
		d.t.Fatal(err)
	}
	rows := strings.Split(string(page), `<tr data-host="`)[1:]
	if len(rows) != len(names) {
		d.t.Fatalf("the Hosts page has %d host rows, want %d", len(rows), len(names))
	}
	for _, row := range rows {
		name, _, _ := strings.Cut(row, `"`)
		ns := d.nsHost(name)
		want := []string{`<span class="status s-idle">idle</span>`, "<td>" + ns.Addr.String() + "</td>", "<td>" + name + "</td>"}
		if strings.HasPrefix(name, "agent-") {
			want = append(want, `<td data-col="kernel">`+here.KernelRelease+"</td>", `<td data-col="cpu">`+here.CPU()+"</td>",
				"<code>files under "+fleettest.DataDir+"</code>", "Revoke token")
		} else {
			want = append(want, "not reported: fio's server tells only", "<code>"+fleettest.DataDir+"/f</code>", "fio-3")
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				d.t.Errorf("the Hosts page's row of %s lacks %q:\n%s", name, w, row)
			}
		}
		if strings.Contains(row, "never") {
			d.t.Errorf("the Hosts page says %s was never seen", name)
		}
	}
}

// drawnSeries is an echarts chart as the browser drew it.
type drawnSeries struct {
	Categories []string          `json:"categories"`
	Series     []json.RawMessage `json:"series"`
	Names      []string          `json:"names"`
}
