package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/joblog"
	"iolab/db"
)

// A dashboard run with write_lat_log: its latency timeline draws lat and
// slat from the stored per-I/O logs (each interval's I/Os, every logged
// I/O in one interval), lat at or above slat in every interval as each
// I/O's is; the picker offers them, and a run without the logs has them
// disabled and refused.
func TestLatencyTimelineFromLatLogs(t *testing.T) {
	ts := newTestServer(t, Config{})
	logged := launchRun(t, ts, `{"name":"latlogged","options":{"filename":"latlogged.dat","size":"1m","rw":"randread",
		"ioengine":"io_uring","runtime":"600ms","time_based":1,"rate_iops":"2000","write_lat_log":"latlogged"}}`)
	waitStatus(t, ts.store, logged, db.StatusDone)
	plain := launchRun(t, ts, `{"name":"plain","options":{"filename":"plain.dat","size":"1m","rw":"randread",
		"ioengine":"psync","runtime":"300ms","time_based":1}}`)
	waitStatus(t, ts.store, plain, db.StatusDone)

	type answer struct {
		Columns []string   `json:"columns"`
		Rows    [][]string `json:"rows"`
		Pickers []struct {
			Param   string `json:"param"`
			Options []struct {
				Value    string `json:"value"`
				Label    string `json:"label"`
				On       bool   `json:"on"`
				Disabled bool   `json:"disabled"`
			} `json:"options"`
		} `json:"pickers"`
	}
	get := func(id int64, lat string, status int) answer {
		t.Helper()
		u := fmt.Sprintf("/api/charts?kind=lattime&run=%d", id)
		if lat != "" {
			u += "&lat=" + lat
		}
		rec := ts.do(t, "GET", u, "")
		if rec.Code != status {
			t.Fatalf("%s: %d %.400s", u, rec.Code, rec.Body)
		}
		var a answer
		if status == 200 {
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
		} else if !strings.Contains(rec.Body.String(), "write_lat_log") {
			t.Errorf("%s refused without naming write_lat_log: %.400s", u, rec.Body)
		}
		return a
	}
	options := func(a answer) map[string]string {
		out := map[string]string{}
		for _, p := range a.Pickers {
			if p.Param == "lat" {
				for _, o := range p.Options {
					out[o.Value] = fmt.Sprintf("%s on=%v disabled=%v", o.Label, o.On, o.Disabled)
				}
			}
		}
		return out
	}
	// The paced run's intervals keep the latency from the intended start;
	// its logs give lat and slat.
	o := options(get(logged, "", 200))
	if o[""] != "from the intended start (kept per interval) on=true disabled=false" ||
		o["total"] != "lat (from submission), from the job's lat log on=false disabled=false" ||
		o["slat"] != "slat, from the job's slat log on=false disabled=false" || !strings.HasSuffix(o["clat"], "disabled=true") {
		t.Errorf("logged run's options %q", o)
	}
	col := func(a answer, name string) int {
		for i, c := range a.Columns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s in %q", name, a.Columns)
		return -1
	}
	lat, slat := get(logged, "total", 200), get(logged, "slat", 200)
	if len(lat.Rows) < 3 || len(lat.Rows) != len(slat.Rows) {
		t.Fatalf("lat rows %q, slat rows %q", lat.Rows, slat.Rows)
	}
	ios := 0
	for i, r := range lat.Rows {
		s := slat.Rows[i]
		if r[col(lat, "latency")] != "lat" || s[col(slat, "latency")] != "slat" || r[col(lat, "time_s")] != s[col(slat, "time_s")] {
			t.Fatalf("row %d: lat %q, slat %q", i, r, s)
		}
		for _, p := range []string{"p50_us", "p99_us", "max_us"} {
			l, _ := strconv.ParseFloat(r[col(lat, p)], 64)
			sl, _ := strconv.ParseFloat(s[col(slat, p)], 64)
			if !(l > 0) || l < sl {
				t.Errorf("interval %s: lat %s %v below slat's %v", r[col(lat, "time_s")], p, l, sl)
			}
		}
		n, _ := strconv.Atoi(r[col(lat, "ios")])
		ios += n
	}
	// Every I/O the stored lat log holds is in one interval.
	steps, err := ts.store.StepsFor(context.Background(), logged, db.LoadAll())
	if err != nil {
		t.Fatal(err)
	}
	var lines int64 = -1
	for _, l := range steps[0].Result.Groups[0].Jobs[0].Logs {
		if l.Kind == joblog.Lat {
			lines = l.Lines
		}
	}
	if int64(ios) != lines || lines < 100 {
		t.Errorf("intervals hold %d I/Os, the lat log %d lines", ios, lines)
	}

	// Without the logs: offered disabled, refused by URL.
	o = options(get(plain, "", 200))
	if o["clat"] != "clat on=true disabled=false" || o["total"] != "lat (from submission) — not kept per interval on=false disabled=true" {
		t.Errorf("plain run's options %q", o)
	}
	get(plain, "total", 400)
	get(plain, "slat", 400)
}
