package handlers

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
)

// A fairness run whose reader ran paced (rate_iops): the compare page's
// diff compares the reader's latency from the intended start, names it in
// its rows and its latency line; ?lat=clat compares clat.
func TestStatDiffPaced(t *testing.T) {
	ts := newTestServer(t, Config{})
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, "paced fairness", preset.Args("/dev/nvme1n1", nil), 5, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}})
	readerLat := map[string]float64{"none": 4000, "bfq": 1000}
	run := seedLab(t, ts.store, plan, system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0"}, func(st sweep.Step, job int, rng *rand.Rand) labStep {
		if st.Config.Groups[0].Jobs[job].RW == "randread" {
			lat := readerLat[st.Scheduler] * (1 + 0.08*rng.NormFloat64())
			return labStep{iops: 200, median: time.Duration(lat * 1e3), spread: 0.3, rate: 200}
		}
		iops := 1900 * (1 + 0.04*rng.NormFloat64())
		return labStep{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25}
	})
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		ts.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	id := strconv.FormatInt(run.ID, 10)
	body := get("/compare?run=" + id)
	// The reader (paced) on the intended start, the writer (not) on clat.
	for _, want := range []string{"<td>fg-reader</td><td>IOPS</td>", "<td>from intended start p99</td>", "<td>clat p99</td>",
		"Latency figures: lat from intended start where both sides&#39; steps were paced, as the QoS curve plots them (1 of 2 points and jobs), clat elsewhere"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	body = get("/compare?run=" + id + "&lat=clat")
	if strings.Contains(body, "from intended start") {
		t.Error("asked for clat, the page still compares the intended start")
	}
	if !strings.Contains(body, "Latency figures: clat;") {
		t.Error("asked for clat, the page does not say clat")
	}
}

// TestHostDiffPaced: on the group page's table between hosts, a job both
// hosts paced compares p99 from each I/O's intended start, as the compare
// page's diff does, unless the page picked a kind: here the second host's
// reader waited 4 ms behind its schedule at the same completion latency,
// which only the intended start shows.
func TestHostDiffPaced(t *testing.T) {
	ts := newTestServer(t, Config{})
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, "paced fleet", preset.Args("/dev/nvme1n1", nil), 5, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none"}})
	var ids []int64
	byHost := map[string]*db.Run{}
	for _, host := range []struct {
		name   string
		queued time.Duration
	}{{"lab-a", 0}, {"lab-b", 4 * time.Millisecond}} {
		run := seedLab(t, ts.store, plan, system.HostInfo{Hostname: host.name, KernelRelease: "6.12.0"}, func(st sweep.Step, job int, rng *rand.Rand) labStep {
			if st.Config.Groups[0].Jobs[job].RW == "randread" {
				return labStep{iops: 200, median: time.Duration(1000*(1+0.05*rng.NormFloat64())) * time.Microsecond, spread: 0.3, rate: 200, queued: host.queued}
			}
			iops := 1900 * (1 + 0.04*rng.NormFloat64())
			return labStep{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25}
		})
		ids = append(ids, run.ID)
		byHost[host.name] = run
	}
	runs, err := ts.srv.loadRuns(context.Background(), ids, chart.Load(0, chart.On(chart.ComparePage)...))
	if err != nil {
		t.Fatal(err)
	}
	members := []groupMemberView{{Host: "lab-a"}, {Host: "lab-b"}}
	rows := func(st *hostStats) map[string]hostStatRow {
		byJob := map[string]hostStatRow{}
		for _, r := range st.Rows {
			byJob[r.Job] = r
		}
		return byJob
	}
	def := hostDiffs(runs, members, summary.LatTotal, false)
	got := rows(def)
	if r := got["fg-reader"]; r.P99Lat != summary.LatIntended || r.P99Class != "significant" || !strings.HasPrefix(r.P99Diff, "+") {
		t.Errorf("the paced reader by default: %s %q (%s), want the intended start's p99, significantly up", r.P99Lat, r.P99Diff, r.P99Class)
	}
	if r := got["bg-writer"]; r.P99Lat != summary.LatTotal {
		t.Errorf("the unpaced writer compares %s, want lat", r.P99Lat)
	}
	if def.Intended != 1 {
		t.Errorf("%d rows from the intended start, want 1", def.Intended)
	}
	asked := rows(hostDiffs(runs, members, summary.LatTotal, true))
	if r := asked["fg-reader"]; r.P99Lat != summary.LatTotal || r.P99Class == "significant" {
		t.Errorf("asked for lat: the reader's %s %q (%s), want lat, no significant change", r.P99Lat, r.P99Diff, r.P99Class)
	}

	// The page marks the row and says why.
	uid := seedGroup(t, ts.store, "paced fleet", byHost, "lab-a", "lab-b")
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/groups/"+uid, nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("group page: %d %s", rec.Code, body)
	}
	for _, want := range []string{"(from intended start p99)", "its p99 is from each I/O's intended start, as the QoS curve plots it (1 of 2 rows, marked)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the group page lacks %q", want)
		}
	}
}
