package chart

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// submitRun is libaio against io_uring at iodepth 1, as on zram: libaio
// submits synchronously (slat 4µs, clat 200ns), io_uring's submission is
// short and its completion long (slat 500ns, clat 3µs). Each I/O's lat is
// its slat + clat.
func submitRun(t *testing.T) LoadedRun {
	t.Helper()
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1"), sweepOf(sweep.AxisEngine, "libaio", "io_uring"))
	return testRun(4, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		l := testLoad{ios: 100, bs: 4096, slat: 4 * time.Microsecond, lat: 200 * time.Nanosecond}
		if s.Value(sweep.AxisEngine) == "io_uring" {
			l.slat, l.lat = 500*time.Nanosecond, 3*time.Microsecond
		}
		return sweeptest.Done(testJob("r", time.Second, l, testLoad{}))
	}))
}

// engineLat is what each engine's I/Os take in kind k.
func engineLat(engine string, k LatKind) time.Duration {
	slat, clat := 4*time.Microsecond, 200*time.Nanosecond
	if engine == "io_uring" {
		slat, clat = 500*time.Nanosecond, 3*time.Microsecond
	}
	switch k {
	case LatSlat:
		return slat
	case LatClat:
		return clat
	}
	return slat + clat
}

// The latency chart draws the kind asked for, lat by default when the
// series are engines, and names it in its subtitle, axis and columns.
func TestLatencyKinds(t *testing.T) {
	run := submitRun(t)
	for _, tc := range []struct {
		q    LatKind
		want LatKind
	}{{"", LatTotal}, {LatTotal, LatTotal}, {LatClat, LatClat}, {LatSlat, LatSlat}} {
		c := mustBuild(t, Query{Kind: Latency, Lat: tc.q, Percentiles: []float64{50}}, run)
		col := tc.want.Name() + "_p50_us"
		checkTable(t, c, []string{"job", "iodepth", "ioengine", "repeats", "failed", "ios", col, tc.want.Name() + "_p50_reliable"}, [][]string{
			{"r", "1", "libaio", "1", "0", "100", csvNum(usBucket(engineLat("libaio", tc.want))), "true"},
			{"r", "1", "io_uring", "1", "0", "100", csvNum(usBucket(engineLat("io_uring", tc.want))), "true"},
		})
		doc := checkOption(t, c)
		if !strings.Contains(doc.Title.Subtext, tc.want.Title()+" histograms") {
			t.Errorf("lat=%s: subtitle %q does not name %s", tc.q, doc.Title.Subtext, tc.want.Title())
		}
		if doc.YAxis[0].Name != tc.want.Name()+" (µs)" {
			t.Errorf("lat=%s: y axis %q", tc.q, doc.YAxis[0].Name)
		}
		if !slices.ContainsFunc(c.Pickers, func(p Picker) bool {
			return p.Param == "lat" && p.Single && len(p.Options) == 3 && slices.ContainsFunc(p.Options, func(o PickerOption) bool { return o.On && o.Value == string(tc.want) })
		}) {
			t.Errorf("lat=%s: pickers %+v do not offer the kinds with %s chosen", tc.q, c.Pickers, tc.want)
		}
	}
	// The fixture is the issue's: libaio's clat is 15× below io_uring's,
	// its lat above it.
	if engineLat("libaio", LatClat)*10 > engineLat("io_uring", LatClat) || engineLat("libaio", LatTotal) < engineLat("io_uring", LatTotal) {
		t.Fatal("the fixture does not tell lat from clat")
	}
}

// The distribution is of the kind asked for: every I/O in the bin of its
// latency of that kind.
func TestDistributionKinds(t *testing.T) {
	run := submitRun(t)
	for _, k := range []LatKind{"", LatTotal, LatClat, LatSlat} {
		want := cmp.Or(k, LatTotal)
		c := mustBuild(t, Query{Kind: Distribution, Lat: k}, run)
		col := slices.Index(c.Columns, want.Name()+"_us")
		if col < 0 {
			t.Fatalf("lat=%s: columns %q", k, c.Columns)
		}
		for _, engine := range []string{"libaio", "io_uring"} {
			ns := uint64(engineLat(engine, want))
			found := false
			for _, r := range c.Rows {
				if !slices.Contains(r, engine) || r[len(r)-1] != "100" {
					continue
				}
				found = true
				// The bin's middle is within the 9 % the bin spans.
				mid, err := strconv.ParseFloat(r[col], 64)
				if err != nil {
					t.Fatal(err)
				}
				mid *= 1000
				if mid < float64(ns)*0.9 || mid > float64(ns)*1.1 {
					t.Errorf("lat=%s %s: all I/Os at %vns, want %dns", k, engine, mid, ns)
				}
			}
			if !found {
				t.Errorf("lat=%s %s: no bin holds every I/O: %q", k, engine, c.Rows)
			}
		}
		if doc := checkOption(t, c); !strings.Contains(doc.Title.Subtext, want.Title()+" histograms") || doc.XAxis[0].Name != want.Name()+" (µs)" {
			t.Errorf("lat=%s: subtitle %q, x axis %q", k, doc.Title.Subtext, doc.XAxis[0].Name)
		}
	}
}

// The fairness chart compares schedulers, not engines: clat by default,
// and the kind asked for otherwise.
func TestFairnessKinds(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	run := testRun(8, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		w := testJob("bg-writer", time.Second, testLoad{}, testLoad{ios: 100, bs: 1 << 20, slat: 40 * time.Microsecond, lat: 20 * time.Millisecond})
		r := testJob("fg-reader", time.Second, testLoad{ios: 1000, bs: 4096, slat: 2 * time.Microsecond, lat: 100 * time.Microsecond}, testLoad{})
		return sweeptest.Done(w, r)
	}))
	for _, tc := range []struct {
		q, want LatKind
		reader  time.Duration
	}{{"", LatClat, 100 * time.Microsecond}, {LatTotal, LatTotal, 102 * time.Microsecond}, {LatSlat, LatSlat, 2 * time.Microsecond}} {
		c := mustBuild(t, Query{Kind: Fairness, Lat: tc.q}, run)
		col := slices.Index(c.Columns, tc.want.Name()+"_p50_median_us")
		if col < 0 || !slices.Contains(c.Columns, tc.want.Name()+"_p99_change_pct") {
			t.Fatalf("lat=%s: columns %q", tc.q, c.Columns)
		}
		for _, r := range c.Rows {
			if r[1] == "fg-reader" && r[col] != csvNum(usBucket(tc.reader)) {
				t.Errorf("lat=%s: reader's p50 %s, want %s", tc.q, r[col], csvNum(usBucket(tc.reader)))
			}
		}
		if doc := checkOption(t, c); !strings.Contains(doc.Title.Subtext, tc.want.Title()) || doc.YAxis[0].Name != "bg-writer · "+tc.want.Name()+" (µs)" {
			t.Errorf("lat=%s: subtitle %q, y axis %q", tc.q, doc.Title.Subtext, doc.YAxis[0].Name)
		}
	}
}

// lat is the default when engines or hosts are compared, clat otherwise.
func TestLatKindDefault(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	steps := func() []sweep.StepResult {
		return sweeptest.Steps(plan, func(sweep.Step) sweep.StepResult {
			return sweeptest.Done(testJob("r", time.Second, testLoad{ios: 100, bs: 4096, slat: time.Microsecond, lat: 10 * time.Microsecond}, testLoad{}))
		})
	}
	kindOf := func(runs ...LoadedRun) string {
		c := mustBuild(t, Query{Kind: Latency, Percentiles: []float64{50}}, runs...)
		for _, col := range c.Columns {
			if k, ok := strings.CutSuffix(col, "_p50_us"); ok {
				return k
			}
		}
		t.Fatalf("columns %q", c.Columns)
		return ""
	}
	a, b := testRun(1, plan, steps()), testRun(2, plan, steps())
	if k := kindOf(a); k != "clat" {
		t.Errorf("one run of one engine: %s, want clat", k)
	}
	a.Run.Hostname, b.Run.Hostname = "lab-a", "lab-a"
	if k := kindOf(a, b); k != "clat" {
		t.Errorf("two runs on one host: %s, want clat", k)
	}
	b.Run.Hostname = "lab-b"
	if k := kindOf(a, b); k != "lat" {
		t.Errorf("two hosts compared: %s, want lat", k)
	}
	if k := kindOf(submitRun(t)); k != "lat" {
		t.Errorf("engines compared: %s, want lat", k)
	}
}

// lat= round-trips through a chart's URL for the latency kinds, is left
// out of the others' and refuses what is not a kind.
func TestQueryLat(t *testing.T) {
	for _, k := range summary.LatKinds {
		q, err := ParseQuery(url.Values{"kind": {"latency"}, "lat": {string(k)}})
		if err != nil || q.Lat != k {
			t.Fatalf("lat=%s: %+v %v", k, q, err)
		}
		if back, err := ParseQuery(q.Values()); err != nil || back.Lat != k || q.Values().Get("lat") != string(k) {
			t.Errorf("lat=%s does not round-trip: %v %v", k, q.Values(), err)
		}
	}
	if q, err := ParseQuery(url.Values{"kind": {"iops"}, "lat": {"clat"}}); err != nil || q.Lat != "" {
		t.Errorf("iops with lat=clat: %+v %v, want lat= left out", q, err)
	}
	_, err := ParseQuery(url.Values{"kind": {"latency"}, "lat": {"p99"}})
	if qe, ok := err.(*QueryError); !ok || qe.Field != "lat" || !strings.Contains(qe.Msg, "clat") {
		t.Errorf("lat=p99: %v", err)
	}
}
