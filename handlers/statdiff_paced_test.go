package handlers

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
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
