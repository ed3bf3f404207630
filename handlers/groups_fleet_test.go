package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
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

	"github.com/chromedp/chromedp"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers/report"
)

// fleetHost is one host of the seeded fleet: when its steps start after
// the group's, its reads a second and their median latency.
type fleetHost struct {
	name   string
	offset time.Duration
	iops   float64
	median time.Duration
}

// fleetHosts: rack-c starts 0.9 s late with half the others' IOPS and
// twice their latency, a straggler by StragglerRule.
var fleetHosts = []fleetHost{
	{"rack-a", 0, 20000, 100 * time.Microsecond},
	{"rack-b", 400 * time.Millisecond, 21000, 95 * time.Microsecond},
	{"rack-c", 900 * time.Millisecond, 10000, 200 * time.Microsecond},
}

const (
	fleetRuntime = 3 * time.Second
	fleetEvery   = 250 * time.Millisecond
)

// seedFleet stores a group of fleetHosts running one plan (iodepth 1 and
// 8), each step's reads at a steady rate in samples every 250 ms, and
// returns the group and, per step, one histogram of every host's reads.
func seedFleet(t testing.TB, store *db.Store) (string, []hist.Lat) {
	t.Helper()
	ctx := context.Background()
	plan := labPlan(t, "fleet", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring"}, 1,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "8"}})
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	all := make([]hist.Lat, len(steps))
	runs := map[string]*db.Run{}
	rng := rand.New(rand.NewPCG(28, 28))
	for _, h := range fleetHosts {
		host := system.HostInfo{Hostname: h.name, KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
		run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan, Host: host,
			Targets: []system.Target{{Path: "/dev/nvme1n1", Disk: "nvme1n1", Model: "Lab NVMe", Scheduler: "none"}}}
		if _, err := store.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		for i, st := range steps {
			start := t0.Add(time.Duration(i)*10*time.Second + h.offset)
			job := st.Config.Groups[0].Jobs[0]
			jr := bench.JobResult{Name: job.Name, Job: job, Start: start, Runtime: fleetRuntime, Jobs: 1, Interval: fleetEvery}
			n := uint64(h.iops * fleetRuntime.Seconds())
			dr := &jr.Dirs[bench.Read]
			for range n {
				ns := uint64(float64(h.median) * math.Exp(0.25*rng.NormFloat64()))
				dr.Clat.Add(ns)
				dr.Lat.Add(ns + 2000)
				all[i].Add(ns + 2000)
			}
			dr.IOs, dr.Bytes = n, n*4096
			for s := int64(1); s <= int64(fleetRuntime/fleetEvery); s++ {
				done := n * uint64(s) / uint64(fleetRuntime/fleetEvery)
				jr.Samples = append(jr.Samples, bench.Sample{At: time.Duration(s) * fleetEvery,
					IOs: bench.DirCounts{done}, Bytes: bench.DirCounts{done * 4096}})
			}
			res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(fleetRuntime),
				Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{Jobs: []bench.JobResult{jr}}}}}
			if err := store.SaveStep(ctx, run.ID, &res); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
			t.Fatal(err)
		}
		runs[h.name] = run
	}
	return seedGroup(t, store, "rack", runs, "rack-a", "rack-b", "rack-c"), all
}

// TestGroupFleetExports reads a seeded group's fleet through its JSON
// and CSV: the fleet's lat percentiles are those of one histogram of
// every host's reads, its IOPS every host's over the 2.1 s all three ran
// (rack-c started 0.9 s late), rack-c a straggler and no other host.
func TestGroupFleetExports(t *testing.T) {
	ts := newTestServer(t, Config{})
	uid, all := seedFleet(t, ts.store)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()

	resp, err := http.Get(hs.URL + "/api/groups/" + uid + "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc groupFleetJSON
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET fleet: %s, %v", resp.Status, err)
	}
	f := doc.Fleet
	if doc.UID != uid || !slices.Equal(doc.Hosts, []string{"rack-a", "rack-b", "rack-c"}) || len(f.Steps) != 2 || f.Stragglers != 2 || f.StragglerRule != summary.StragglerRule {
		t.Fatalf("fleet %s: hosts %v, %d steps, %d stragglers", doc.UID, doc.Hosts, len(f.Steps), f.Stragglers)
	}
	// Steady rates: the fleet did 51,000 reads a second while all three
	// ran, 2.1 s of rack-a's 3 s.
	var want float64
	for _, h := range fleetHosts {
		want += float64(uint64(h.iops*fleetRuntime.Seconds())) / fleetRuntime.Seconds()
	}
	for i, st := range f.Steps {
		j := st.Jobs[0]
		if st.Step != i+1 || j.Name != "reader" || !j.Aligned || j.Apart || math.Abs(j.Coverage-0.7) > 1e-9 || j.IntervalNS != fleetEvery {
			t.Errorf("step %d: %+v", st.Step, j)
		}
		if math.Abs(j.Fleet.IOPS-want) > 1e-6*want {
			t.Errorf("step %d: fleet IOPS %v, want %v", st.Step, j.Fleet.IOPS, want)
		}
		read := j.Fleet.Dirs["read"]
		if p := all[i].Percentiles(summary.FleetPercentiles); !slices.Equal(read.Lat.P, p) || read.Lat.N != all[i].Stat.N {
			t.Errorf("step %d: fleet lat %v of %d, want one histogram's %v of %d", st.Step, read.Lat.P, read.Lat.N, p, all[i].Stat.N)
		}
		for k, h := range j.Hosts {
			if (h.Straggler != "") != (h.Host == "rack-c") {
				t.Errorf("step %d: %s straggler %q", st.Step, h.Host, h.Straggler)
			}
			if own := h.Figures.Dirs["read"].IOPS; math.Abs(own-fleetHosts[k].iops) > 1 {
				t.Errorf("step %d: %s's own IOPS %v, want %v", st.Step, h.Host, own, fleetHosts[k].iops)
			}
		}
		// 0 to 3.9 s, every 250 ms; rack-c's line starts at its start.
		if len(j.Series) != 16 || j.Series[0].Hosts[2] != nil || j.Series[len(j.Series)-1].Hosts[0] != nil {
			t.Errorf("step %d: %d points, first %+v", st.Step, len(j.Series), j.Series[0])
		}
	}

	rows := fetchCSV(t, hs.URL+"/groups/"+uid+"/fleet.csv")
	if !slices.Equal(rows[0], summary.FleetColumns()) {
		t.Fatalf("CSV header %v", rows[0])
	}
	if len(rows) != 1+2*4 {
		t.Fatalf("%d CSV rows, want a header and 4 a step (the fleet, 3 hosts)", len(rows))
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	fleet := rows[1]
	if fleet[col("host")] != "fleet" || fleet[col("step")] != "1" || fleet[col("dir")] != "read" || fleet[col("aligned")] != "true" {
		t.Errorf("fleet row %v", fleet)
	}
	if iops, _ := strconv.ParseFloat(fleet[col("iops")], 64); math.Abs(iops-want) > 1e-6*want {
		t.Errorf("CSV fleet IOPS %v, want %v", iops, want)
	}
	p99 := all[0].Percentiles(summary.FleetPercentiles)[2]
	if fleet[col("lat_p99_ns")] != strconv.FormatUint(p99, 10) {
		t.Errorf("CSV fleet lat p99 %s, want %d", fleet[col("lat_p99_ns")], p99)
	}
	if c := rows[4]; c[col("host")] != "rack-c" || !strings.Contains(c[col("straggler")], "IOPS") {
		t.Errorf("rack-c's row %v: want it a straggler by its IOPS", c)
	}
	if a := rows[2]; a[col("host")] != "rack-a" || a[col("straggler")] != "" {
		t.Errorf("rack-a's row %v", a)
	}

	resp, err = http.Get(hs.URL + "/api/groups/nosuchgroup/fleet")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown group's fleet: %s, want 404", resp.Status)
	}
}

// fleetDrawn is what the browser drew of the fleet: its chart's series
// and the table's rows.
type fleetDrawn struct {
	Series     []string `json:"series"`
	Points     []int    `json:"points"`
	Rows       []string `json:"rows"`
	Stragglers []string `json:"stragglers"`
}

const readFleet = `(() => {
  const c = window.iolabCharts && window.iolabCharts.fleet;
  const o = c ? c.getOption() : {series: []};
  return {
    series: o.series.map(s => s.name),
    points: o.series.map(s => s.data.length),
    rows: [...document.querySelectorAll("#fleet-table tr[data-host]")].map(r => r.dataset.host),
    stragglers: [...document.querySelectorAll("#fleet-table tr.straggler-row")].map(r => r.dataset.host),
  };
})()`

// TestBrowserGroupFleet opens a seeded group of three hosts in headless
// chromium: the fleet's chart draws the fleet and each host, readable,
// the table has the fleet's row and each host's per step, rack-c marked;
// the page is left as testdata/artifacts/group-fleet.png.
func TestBrowserGroupFleet(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	uid, _ := seedFleet(t, ts.store)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	ctx, cancel := browser(t, path)
	defer cancel()
	got, err := readPage(ctx, hs.URL+"/groups/"+uid, []string{"rack-a", "rack-b", "rack-c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got.Violations {
		t.Errorf("unreadable: %s", v)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[fleetDrawn](readFleet))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(drawn.Series, []string{"fleet", "rack-a", "rack-b", "rack-c (straggler)"}) || !slices.Equal(drawn.Points, []int{16, 16, 16, 16}) {
		t.Errorf("fleet chart: series %v of %v points", drawn.Series, drawn.Points)
	}
	want := []string{"fleet", "rack-a", "rack-b", "rack-c", "fleet", "rack-a", "rack-b", "rack-c"}
	if !slices.Equal(drawn.Rows, want) || !slices.Equal(drawn.Stragglers, []string{"rack-c", "rack-c"}) {
		t.Errorf("fleet table: rows %v, stragglers %v", drawn.Rows, drawn.Stragglers)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(`#fleet`))
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, artifactsDir(t), "group-fleet.png", shot)
}

// TestGroupFleetReport: a report of a group's runs has the fleet's
// table and chart (drawn as SVG), and its bundle the fleet's CSV; a
// report of runs of no group has neither.
func TestGroupFleetReport(t *testing.T) {
	ts := newTestServer(t, Config{})
	uid, all := seedFleet(t, ts.store)
	ctx := context.Background()
	g, err := ts.store.GetFleetRun(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range g.Members {
		ids = append(ids, m.RunID)
	}
	rep, err := report.Build(ctx, ts.store, ids, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	writeArtifact(t, artifactsDir(t), "group-fleet-report.html", html.Bytes())
	p99 := units.Nanos(float64(all[0].Percentiles(summary.FleetPercentiles)[2]))
	for _, want := range []string{`<h2 id="fleet">`, `id="fleet-table"`, `data-host="rack-c"`, `class=" straggler-row"`, `data-kind="fleet"`, "Fleet IOPS over time, step 1", p99} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not have %q", want)
		}
	}
	dir := t.TempDir()
	b, err := rep.WriteBundle(ctx, dir, report.BundleOptions{Chromium: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Files, "fleet.csv") {
		t.Fatalf("bundle %v: no fleet.csv", b.Files)
	}
	data, err := os.ReadFile(filepath.Join(dir, "fleet.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(rows) != 9 || !slices.Equal(rows[0], summary.FleetColumns()) {
		t.Errorf("fleet.csv: %d rows, %v", len(rows), err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Fleet: the hosts as one system", "| **fleet** | read | 153k | 51k |", "| rack-c | read |", "[fleet.csv](fleet.csv)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the bundle's README.md does not have %q", want)
		}
	}
	// Two of the group's runs are still a group; a run alone is not.
	if rep, err := report.Build(ctx, ts.store, ids[:1], report.Options{}); err != nil || rep.Fleet != nil {
		t.Errorf("a report of one run: fleet %v, %v", rep.Fleet, err)
	}
	if rep, err := report.Build(ctx, ts.store, ids[:2], report.Options{}); err != nil || rep.Fleet == nil || len(rep.Fleet.Steps[0].Jobs[0].Rows) != 3 {
		t.Errorf("a report of two of the group's runs: %v", err)
	}
}

// TestImportFioClientsAsGroup: fio's client output of three servers
// imports as a group of one run per server, whose fleet is fio's own "All
// clients" (the same reads and IOPS), with percentiles from the servers'
// histograms merged; importing it again finds the same group, and the
// import form goes to the group's page.
func TestImportFioClientsAsGroup(t *testing.T) {
	data, err := os.ReadFile("../bench/fio/testdata/client/client-three.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{})
	rec := ts.do(t, http.MethodPost, "/api/import?name=three", string(data))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/import: %d %s", rec.Code, rec.Body)
	}
	var created importedRun
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if created.Group == "" || created.URL != "/groups/"+created.Group || rec.Header().Get("Location") != created.URL {
		t.Fatalf("import %+v, Location %q: want a group", created, rec.Header().Get("Location"))
	}
	rec = ts.do(t, http.MethodGet, "/api/groups/"+created.Group+"/fleet", "")
	var doc groupFleetJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("fleet: %d %v", rec.Code, err)
	}
	if doc.Name != "three" || !slices.Equal(doc.Hosts, []string{"10.213.241.2", "10.213.243.2", "10.213.242.2"}) || len(doc.Fleet.Steps) != 1 {
		t.Fatalf("group %q of %v, %d steps", doc.Name, doc.Hosts, len(doc.Fleet.Steps))
	}
	j := doc.Fleet.Steps[0].Jobs[0]
	read := j.Fleet.Dirs["read"]
	// fio's "All clients": 77042 reads, 76965.034965 IOPS.
	if read.IOs != 77042 || math.Abs(j.Fleet.IOPS-76965.034965) > 1e-5 || j.Aligned || j.Apart {
		t.Errorf("fleet %d reads, %v IOPS (aligned %v, apart %v); fio's All clients 77042, 76965.034965", read.IOs, j.Fleet.IOPS, j.Aligned, j.Apart)
	}
	// fio's json+ prints clat's bins (lat's only with lat_percentiles):
	// clat's percentiles are one histogram of the servers' bins; lat has
	// none, and the page shows clat's.
	var one hist.Lat
	reps, err := fio.ParseReports(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range reps[0].ClientStats[:3] {
		h, err := hist.HistogramFromBins(e.Read.Clat.Bins)
		if err != nil || len(e.Read.Lat.Bins) != 0 {
			t.Fatalf("bins: %v, %d of lat", err, len(e.Read.Lat.Bins))
		}
		one.Hist.Merge(&h)
		one.Stat.N += e.Read.Clat.N
	}
	if want := one.Percentiles(summary.FleetPercentiles); !slices.Equal(read.Clat.P, want) || slices.ContainsFunc(read.Lat.P, func(p uint64) bool { return p != 0 }) {
		t.Errorf("fleet clat percentiles %v, lat %v; want one histogram's %v, and none of lat", read.Clat.P, read.Lat.P, want)
	}
	page := ts.do(t, http.MethodGet, created.URL, "").Body.String()
	if !strings.Contains(page, "percentiles of clat") || strings.Contains(page, "percentiles of lat") {
		t.Error("the group page does not say its percentiles are clat's")
	}
	again := ts.do(t, http.MethodPost, "/api/import", string(data))
	var second importedRun
	if err := json.Unmarshal(again.Body.Bytes(), &second); err != nil || again.Code != http.StatusOK || second.Group != created.Group || !second.Existing {
		t.Errorf("import again: %d %+v, want 200 and group %s", again.Code, second, created.Group)
	}
	form := postImportForm(t, ts, data, nil)
	if form.Code != http.StatusSeeOther || form.Header().Get("Location") != created.URL {
		t.Errorf("the import form: %d to %q, want 303 to %s", form.Code, form.Header().Get("Location"), created.URL)
	}
}
