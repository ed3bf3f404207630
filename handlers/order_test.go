package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"iolab/bench/system"
)

// A run's page opens on the chart of what it sweeps, and a chart whose x
// axis would have one value is not drawn as one: the three write-ups'
// runs as a reader opens them.
func TestRunPageOrder(t *testing.T) {
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	fairness := seedFairnessLab(t, ts.store, host)
	scaling := seedScalingLab(t, ts.store, host)
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", host, 1)
	figure := regexp.MustCompile(`<figure class="chart-box" data-kind="([a-z]+)">\s*<figcaption><span class="chart-title">([^<]*)</span>`)
	for _, tc := range []struct {
		name   string
		id     int64
		first  []string          // the kinds first on the page, in order
		titles map[string]string // a kind's title
	}{
		// A scheduler sweep at one iodepth: fairness first; IOPS and
		// latency side by side by scheduler, at the reader's iodepth 1.
		{"fairness", fairness.ID, []string{"fairness", "iops", "latency"},
			map[string]string{"iops": "IOPS at iodepth 1", "latency": "Latency percentiles at iodepth 1"}},
		// A numjobs sweep: scaling first; IOPS and latency along numjobs.
		{"scaling", scaling.ID, []string{"scaling", "iops", "latency"},
			map[string]string{"iops": "IOPS vs numjobs", "latency": "Latency percentiles vs numjobs"}},
		// An iodepth × engine sweep: IOPS vs iodepth, as before.
		{"engines", engines.ID, []string{"iops", "latency", "distribution"},
			map[string]string{"iops": "IOPS vs iodepth", "latency": "Latency percentiles vs iodepth"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(t, http.MethodGet, fmt.Sprintf("/runs/%d", tc.id), "")
			if rec.Code != http.StatusOK {
				t.Fatalf("%d: %.300s", rec.Code, rec.Body)
			}
			var kinds []string
			titles := map[string]string{}
			for _, m := range figure.FindAllStringSubmatch(rec.Body.String(), -1) {
				kinds = append(kinds, m[1])
				titles[m[1]] = m[2]
			}
			if len(kinds) < len(tc.first) || !slices.Equal(kinds[:len(tc.first)], tc.first) {
				t.Errorf("charts in the order %q, want %q first", kinds, tc.first)
			}
			for k, want := range tc.titles {
				if titles[k] != want {
					t.Errorf("%s chart titled %q, want %q", k, titles[k], want)
				}
			}
		})
	}
}

// The run page says under a chart which series it leaves out and which
// picker draws them, and each chart's pickers' form carries the rest of
// the view for a browser without scripts.
func TestRunPageHiddenNote(t *testing.T) {
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab"}
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", host, 1)
	body := ts.do(t, http.MethodGet, fmt.Sprintf("/runs/%d?p=50&p=90&p=99", engines.ID), "").Body.String()
	_, lat, _ := strings.Cut(body, `data-kind="latency">`)
	lat, _, _ = strings.Cut(lat, "</figure>")
	if want := `<p class="chart-hidden" role="note">Not drawn (2 series of 3 lines at most, 6 in all): psync. Tick them under ioengine (and untick others) to draw them. Fewer percentiles leave room for more series.</p>`; !strings.Contains(lat, want) {
		t.Errorf("the latency chart does not say it leaves psync out:\n%s", lat)
	}
	_, iops, _ := strings.Cut(body, `data-kind="iops">`)
	iops, _, _ = strings.Cut(iops, "</figure>")
	if strings.Contains(iops, "chart-hidden") {
		t.Errorf("the IOPS chart draws every engine but has a note:\n%s", iops)
	}
	// The IOPS chart's form writes show=; it keeps p= as it is.
	for _, want := range []string{`<input type="hidden" name="p" value="50">`, `<input type="hidden" name="p" value="90">`, `<noscript><button type="submit">Draw</button></noscript>`} {
		if !strings.Contains(iops, want) {
			t.Errorf("the IOPS chart's pickers lack %s:\n%s", want, iops)
		}
	}
	if strings.Contains(iops, `type="hidden" name="show"`) {
		t.Errorf("the IOPS chart's form keeps the show= its own picker writes:\n%s", iops)
	}
}
