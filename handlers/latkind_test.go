package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// A latency chart's page offers the latency kinds, its links and CSV keep
// the one chosen, and the CSV's columns name it and hold its figures as
// the store keeps them: the fairness run's reader has lat = clat + 2µs
// per I/O (at 4 ms, mostly in clat's bucket) and no slat.
func TestChartLatKind(t *testing.T) {
	ts := newTestServer(t, Config{})
	run := seedFairnessRun(t, ts.store)
	id := strconv.FormatInt(run.ID, 10)

	// Schedulers compared: clat by default, chosen in the picker.
	body := ts.do(t, http.MethodGet, "/charts?kind=fairness&run="+id, "").Body.String()
	for _, want := range []string{`data-param="lat"`, `<select name="lat"`, `<option value="total">lat (from submission)</option>`,
		`<option value="clat" selected>clat</option>`, `<option value="slat">slat</option>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the fairness chart's page lacks %s", want)
		}
	}

	// lat=total: the page's picker, its CSV link and the CSV say lat.
	rec := ts.do(t, http.MethodGet, "/charts?kind=fairness&lat=total&run="+id, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("lat=total: %d %.500s", rec.Code, rec.Body)
	}
	body = rec.Body.String()
	if !strings.Contains(body, `<option value="total" selected>`) || !strings.Contains(body, "lat=total") {
		t.Error("lat=total is not kept on the page or in its links")
	}
	csvOf := func(lat string) [][]string {
		v := url.Values{"kind": {"fairness"}, "run": {id}}
		if lat != "" {
			v.Set("lat", lat)
		}
		rec := ts.do(t, http.MethodGet, "/charts/export.csv?"+v.Encode(), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("CSV lat=%s: %d %.500s", lat, rec.Code, rec.Body)
		}
		return readCSV(t, rec.Body.String())
	}
	reader := func(rows [][]string, col string) string {
		i := -1
		for k, h := range rows[0] {
			if h == col {
				i = k
			}
		}
		if i < 0 {
			t.Fatalf("no column %s in %q", col, rows[0])
		}
		for _, r := range rows[1:] {
			if strings.Contains(strings.Join(r, ","), "fg-reader") {
				return r[i]
			}
		}
		t.Fatal("no reader row")
		return ""
	}
	clat, lat := reader(csvOf(""), "clat_p50_median_us"), reader(csvOf("total"), "lat_p50_median_us")
	c, _ := strconv.ParseFloat(clat, 64)
	l, _ := strconv.ParseFloat(lat, 64)
	if !(l >= c && c > 0) {
		t.Errorf("reader's p50: lat %s µs, clat %s µs; want lat at or above clat", lat, clat)
	}
	if s := reader(csvOf("slat"), "slat_p50_median_us"); s == clat || s != "0" {
		t.Errorf("reader's slat p50 %q, want 0: the run records no slat", s)
	}

	// A bad kind is refused, naming the parameter.
	if rec := ts.do(t, http.MethodGet, "/api/charts?kind=latency&lat=p99&run="+id, ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "lat") {
		t.Errorf("lat=p99: %d %.300s", rec.Code, rec.Body)
	}
}
