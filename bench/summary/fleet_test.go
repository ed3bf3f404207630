package summary

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// fleetStep is one host's done step seq holding jobs.
func fleetStep(seq int, jobs ...bench.JobResult) StepView {
	r := sweep.StepResult{Step: sweep.Step{Seq: seq}, Status: sweep.StepDone,
		Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: jobs}}}}
	return StepViewOf(&r)
}

var t0 = time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)

// TestFleetPercentilesAreOneHistograms is issue 28's test: the fleet's
// percentiles of a step are those of one histogram of every host's I/Os,
// to fio's bucket — the hosts' histograms merged, as fio's group_reporting
// merges jobs — and not an average of the hosts' percentiles.
func TestFleetPercentilesAreOneHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	// Three hosts of unlike latencies: fast, slow, and fast with a tail.
	draw := []func() uint64{
		func() uint64 { return 80_000 + uint64(rng.ExpFloat64()*20_000) },
		func() uint64 { return 300_000 + uint64(rng.NormFloat64()*10_000) },
		func() uint64 {
			if rng.IntN(50) == 0 {
				return 5_000_000 + uint64(rng.ExpFloat64()*1e6)
			}
			return 90_000 + uint64(rng.ExpFloat64()*5_000)
		},
	}
	var (
		hosts    []FleetHost
		oneClat  [2]hist.Lat // every host's I/Os, in one histogram per direction
		oneLat   [2]hist.Lat
		ownClat  [3]hist.Lat // each host's reads, apart
		writerIO uint64
	)
	for h, name := range []string{"a", "b", "c"} {
		reader := bench.JobResult{Name: "reader", Start: t0, Runtime: 10 * time.Second}
		writer := bench.JobResult{Name: "writer", Start: t0, Runtime: 10 * time.Second}
		for range 4000 + 1000*h {
			ns := draw[h]()
			for _, r := range []*bench.JobResult{&reader} {
				r.Dirs[bench.Read].Clat.Add(ns)
				r.Dirs[bench.Read].Lat.Add(ns + 700)
				r.Dirs[bench.Read].IOs++
				r.Dirs[bench.Read].Bytes += 4096
			}
			oneClat[bench.Read].Add(ns)
			oneLat[bench.Read].Add(ns + 700)
			ownClat[h].Add(ns)
		}
		// A writer beside the reader: unlike jobs, never merged.
		for range 500 {
			writer.Dirs[bench.Write].Clat.Add(2_000_000)
			writer.Dirs[bench.Write].Lat.Add(2_000_000)
			writer.Dirs[bench.Write].IOs++
			writerIO++
		}
		hosts = append(hosts, FleetHost{Name: name, Steps: []StepView{fleetStep(0, reader, writer)}})
	}
	f := FleetOf(hosts)
	if len(f.Steps) != 1 || len(f.Steps[0].Jobs) != 2 || !slices.Equal(f.Steps[0].Hosts, []string{"a", "b", "c"}) {
		t.Fatalf("steps %+v", f.Steps)
	}
	reader := f.Steps[0].Jobs[0]
	if reader.Name != "reader" || len(reader.Hosts) != 3 {
		t.Fatalf("job %s on %d hosts, want reader on 3", reader.Name, len(reader.Hosts))
	}
	got := reader.Fleet.Dirs[bench.Read]
	for _, k := range []struct {
		name string
		got  FleetLat
		want *hist.Lat
	}{{"clat", got.Clat, &oneClat[bench.Read]}, {"lat", got.Lat, &oneLat[bench.Read]}} {
		want := k.want.Percentiles(FleetPercentiles)
		if !slices.Equal(k.got.Pcts, want) {
			t.Errorf("%s percentiles %v, want one histogram's %v", k.name, k.got.Pcts, want)
		}
		if k.got.Stat.N != k.want.Stat.N || k.got.Stat.Min != k.want.Stat.Min || k.got.Stat.Max != k.want.Stat.Max ||
			math.Abs(k.got.Stat.Mean-k.want.Stat.Mean) > 1e-9*k.want.Stat.Mean {
			t.Errorf("%s stat %+v, want %+v", k.name, k.got.Stat, k.want.Stat)
		}
		// Every percentile of fio's list, not just the fleet's four: the
		// merged histogram is the one histogram, bucket for bucket.
		var merged hist.Histogram
		for _, h := range hosts {
			h.Steps[0].Result.Groups[0].Jobs[0].Dirs[bench.Read].Clat.Hist.AddTo(&merged)
		}
		if merged != oneClat[bench.Read].Hist {
			t.Error("the hosts' clat buckets added up are not one histogram of every I/O")
		}
	}
	// Each host's own percentiles are its own histogram's.
	var mean99 float64
	for h := range reader.Hosts {
		own := reader.Hosts[h].Figures.Dirs[bench.Read].Clat.Pcts
		if want := ownClat[h].Percentiles(FleetPercentiles); !slices.Equal(own, want) {
			t.Errorf("host %s: clat percentiles %v, want %v", reader.Hosts[h].Host, own, want)
		}
		mean99 += float64(own[p99Index]) / 3
	}
	// An average of the hosts' p99s is another number: the test tells
	// the two apart.
	if p99 := float64(got.Clat.P(p99Index)); math.Abs(p99-mean99) < 0.1*p99 {
		t.Errorf("merged p99 %.0f is within 10 %% of the hosts' average p99 %.0f: the fixture cannot tell them apart", p99, mean99)
	}
	writer := f.Steps[0].Jobs[1]
	if writer.Name != "writer" || writer.Fleet.Dirs[bench.Write].IOs != writerIO || writer.Fleet.Dirs[bench.Read].IOs != 0 ||
		writer.Fleet.Dirs[bench.Write].Clat.P(0) != hist.BucketValue(hist.BucketIndex(2_000_000)) {
		t.Errorf("writer %+v: want only the writers' %d writes", writer.Fleet.Dirs, writerIO)
	}
	if reader.Fleet.Dirs[bench.Read].IOs != oneClat[bench.Read].Stat.N || reader.Fleet.Dirs[bench.Write].IOs != 0 {
		t.Errorf("reader's I/Os %d/%d, want %d reads and no writes", reader.Fleet.Dirs[bench.Read].IOs, reader.Fleet.Dirs[bench.Write].IOs, oneClat[bench.Read].Stat.N)
	}
}

// steadyJob is a job on the wall clock from start: reads at iops[k] I/Os
// a second in its k-th interval of one second.
func steadyJob(start time.Time, iops ...uint64) bench.JobResult {
	j := bench.JobResult{Name: "reader", Start: start, Interval: time.Second, Runtime: time.Duration(len(iops)) * time.Second}
	for k, n := range iops {
		j.Dirs[bench.Read].IOs += n
		j.Dirs[bench.Read].Bytes += n * 4096
		j.Samples = append(j.Samples, bench.Sample{At: time.Duration(k+1) * time.Second,
			IOs: bench.DirCounts{j.Dirs[bench.Read].IOs}, Bytes: bench.DirCounts{j.Dirs[bench.Read].Bytes}})
	}
	for range 100 {
		j.Dirs[bench.Read].Clat.Add(100_000)
		j.Dirs[bench.Read].Lat.Add(100_000)
	}
	return j
}

func constant(n uint64, k int) []uint64 { return slices.Repeat([]uint64{n}, k) }

// TestFleetTimeAlignment: hosts that start at different times are summed
// over the wall-clock time in which all of them ran, their intervals split
// where they straddle the fleet's; hosts that never ran together have no
// fleet IOPS.
func TestFleetTimeAlignment(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want)) }
	t.Run("staggered starts", func(t *testing.T) {
		// a: 1000/s from 0 to 10 s; b: 2000/s from 0.5 s to 10.5 s;
		// c: 4000/s from 2 s to 12 s. All three ran from 2 s to 10 s.
		f := FleetOf([]FleetHost{
			{Name: "a", Steps: []StepView{fleetStep(0, steadyJob(t0, constant(1000, 10)...))}},
			{Name: "b", Steps: []StepView{fleetStep(0, steadyJob(t0.Add(500*time.Millisecond), constant(2000, 10)...))}},
			{Name: "c", Steps: []StepView{fleetStep(0, steadyJob(t0.Add(2*time.Second), constant(4000, 10)...))}},
		})
		j := f.Steps[0].Jobs[0]
		ft := j.Time
		if !ft.Aligned || ft.Apart || !ft.Start.Equal(t0.Add(2*time.Second)) || !ft.End.Equal(t0.Add(10*time.Second)) || !near(ft.Coverage, 0.8) {
			t.Fatalf("time %+v: want aligned, 2 s to 10 s, coverage 0.8", ft)
		}
		if !near(j.Fleet.IOPS, 7000) || !near(j.Fleet.Dirs[bench.Read].BW, 7000*4096) {
			t.Errorf("fleet %v IOPS, %v B/s; want 7000 and 7000×4 KiB", j.Fleet.IOPS, j.Fleet.Dirs[bench.Read].BW)
		}
		// A plain sum of the hosts' own figures is the same here (steady
		// rates); the series says how it went over time.
		if len(ft.Series) != 12 {
			t.Fatalf("%d points, want 12 (0 to 12 s)", len(ft.Series))
		}
		wantFleet := []float64{2000, 3000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 5000, 4000}
		for k, p := range ft.Series {
			if !near(p.Fleet, wantFleet[k]) || p.At != time.Duration(k+1)*time.Second {
				t.Errorf("point %d: %v at %v, want %v at %v", k, p.Fleet, p.At, wantFleet[k], time.Duration(k+1)*time.Second)
			}
		}
		// b ran half of the first second (shown: 2000/s); c none of it.
		if p := ft.Series[0]; p.Hosts[0] == nil || !near(*p.Hosts[0], 1000) || p.Hosts[1] == nil || !near(*p.Hosts[1], 2000) || p.Hosts[2] != nil {
			t.Errorf("first point's hosts %v", p.Hosts)
		}
	})
	t.Run("intervals split", func(t *testing.T) {
		// b's rate changes each second, its seconds half a second off
		// a's: both ran from 0 s to 4 s; b did 100 (half of 200) + 200 +
		// 400 + 800 + 800 (half of 1600) I/Os there, a 4 × 1000.
		f := FleetOf([]FleetHost{
			{Name: "a", Steps: []StepView{fleetStep(0, steadyJob(t0, constant(1000, 4)...))}},
			{Name: "b", Steps: []StepView{fleetStep(0, steadyJob(t0.Add(-500*time.Millisecond), 200, 200, 400, 800, 1600))}},
		})
		j := f.Steps[0].Jobs[0]
		want := (4000 + 100 + 200 + 400 + 800 + 800) / 4.0
		if !j.Time.Aligned || !near(j.Fleet.IOPS, want) {
			t.Errorf("fleet %v IOPS, want %v", j.Fleet.IOPS, want)
		}
		// The first fleet interval (-0.5 s to 0.5 s): b's 100 + 100, a's
		// half second's 500.
		if p := j.Time.Series[0]; !near(p.Fleet, 700) {
			t.Errorf("first interval %v, want 700", p.Fleet)
		}
	})
	t.Run("one after another", func(t *testing.T) {
		f := FleetOf([]FleetHost{
			{Name: "a", Steps: []StepView{fleetStep(0, steadyJob(t0, constant(1000, 5)...))}},
			{Name: "b", Steps: []StepView{fleetStep(0, steadyJob(t0.Add(5*time.Second), constant(1000, 5)...))}},
		})
		j := f.Steps[0].Jobs[0]
		if !j.Time.Apart || j.Fleet.IOPS != 0 || j.Fleet.Dirs[bench.Read].BW != 0 {
			t.Errorf("time %+v, fleet IOPS %v: want apart, no fleet IOPS", j.Time, j.Fleet.IOPS)
		}
		if n := j.Fleet.Dirs[bench.Read].Lat.Stat.N; n != 200 {
			t.Errorf("merged lat N %d, want both hosts' 200", n)
		}
	})
	t.Run("no samples", func(t *testing.T) {
		// fio's output imported: "All clients"' rule, every host's I/Os
		// over the longest window.
		a, b := steadyJob(t0, constant(1000, 4)...), steadyJob(t0, constant(500, 5)...)
		a.Samples, b.Samples = nil, nil
		f := FleetOf([]FleetHost{{Name: "a", Steps: []StepView{fleetStep(0, a)}}, {Name: "b", Steps: []StepView{fleetStep(0, b)}}})
		j := f.Steps[0].Jobs[0]
		if j.Time.Aligned || j.Time.Apart || !near(j.Fleet.IOPS, (4000+2500)/5.0) || j.Time.Series != nil {
			t.Errorf("time %+v, IOPS %v: want not aligned, %v", j.Time, j.Fleet.IOPS, (4000+2500)/5.0)
		}
	})
	t.Run("a host without the step", func(t *testing.T) {
		failed := fleetStep(0, steadyJob(t0, 1000))
		failed.Status = sweep.StepFailed
		f := FleetOf([]FleetHost{
			{Name: "a", Steps: []StepView{fleetStep(0, steadyJob(t0, 1000, 1000)), fleetStep(1, steadyJob(t0, 1000))}},
			{Name: "b", Steps: []StepView{failed}},
		})
		if len(f.Steps) != 2 || !slices.Equal(f.Steps[0].Missing, []string{"b"}) || !slices.Equal(f.Steps[1].Missing, []string{"b"}) {
			t.Fatalf("steps %+v: want b missing from both", f.Steps)
		}
		if j := f.Steps[0].Jobs[0]; len(j.Hosts) != 1 || !near(j.Fleet.IOPS, 1000) {
			t.Errorf("step 1: %d hosts, %v IOPS; want a's alone", len(j.Hosts), j.Fleet.IOPS)
		}
	})
}

// hostsAt is one step on hosts doing iops[i] reads a second with
// latency lat[i] (n[i] I/Os of it).
func hostsAt(iops []uint64, lat []uint64, n []int) []FleetHost {
	var out []FleetHost
	for i := range iops {
		j := steadyJob(t0, constant(iops[i], 10)...)
		j.Dirs[bench.Read].Clat, j.Dirs[bench.Read].Lat = hist.Lat{}, hist.Lat{}
		for range n[i] {
			j.Dirs[bench.Read].Clat.Add(lat[i])
			j.Dirs[bench.Read].Lat.Add(lat[i])
		}
		out = append(out, FleetHost{Name: string(rune('a' + i)), Steps: []StepView{fleetStep(0, j)}})
	}
	return out
}

// TestStragglers checks StragglerRule on both sides of each of its
// bounds.
func TestStragglers(t *testing.T) {
	us := uint64(time.Microsecond)
	many := []int{2000, 2000, 2000, 2000}
	for _, c := range []struct {
		name string
		iops []uint64
		lat  []uint64
		n    []int
		want []string // "" not flagged, else a word of the reason
	}{
		{"alike", []uint64{1000, 1010, 990, 1005}, []uint64{100 * us, 102 * us, 99 * us, 101 * us}, many, []string{"", "", "", ""}},
		{"IOPS below 80 % of the lowest other", []uint64{1000, 1000, 950, 750}, []uint64{100 * us, 100 * us, 100 * us, 100 * us}, many, []string{"", "", "", "IOPS"}},
		{"IOPS at 85 % of the lowest other", []uint64{1000, 1000, 950, 810}, []uint64{100 * us, 100 * us, 100 * us, 100 * us}, many, []string{"", "", "", ""}},
		{"p99 above 150 % of the highest other", []uint64{1000, 1000, 1000, 1000}, []uint64{100 * us, 110 * us, 100 * us, 170 * us}, many, []string{"", "", "", "p99"}},
		{"p99 at 130 % of the highest other", []uint64{1000, 1000, 1000, 1000}, []uint64{100 * us, 110 * us, 100 * us, 143 * us}, many, []string{"", "", "", ""}},
		{"p99 of too few I/Os", []uint64{1000, 1000, 1000, 1000}, []uint64{100 * us, 100 * us, 100 * us, 400 * us}, []int{2000, 2000, 2000, 500}, []string{"", "", "", ""}},
		{"both", []uint64{1000, 1000, 1000, 500}, []uint64{100 * us, 100 * us, 100 * us, 400 * us}, many, []string{"", "", "", "IOPS"}},
		{"two hosts: no range", []uint64{1000, 300}, []uint64{100 * us, 900 * us}, many[:2], []string{"", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := FleetOf(hostsAt(c.iops, c.lat, c.n))
			j := f.Steps[0].Jobs[0]
			flagged := 0
			for i, h := range j.Hosts {
				if (c.want[i] == "") != (h.Straggler == "") || !strings.Contains(h.Straggler, c.want[i]) {
					t.Errorf("host %s: straggler %q, want %q", h.Host, h.Straggler, c.want[i])
				}
				if h.Straggler != "" {
					flagged++
				}
			}
			if f.Stragglers != flagged {
				t.Errorf("fleet counts %d stragglers, hosts %d", f.Stragglers, flagged)
			}
		})
	}
	f := FleetOf(hostsAt([]uint64{1000, 300}, []uint64{100 * us, 900 * us}, many[:2]))
	if j := f.Steps[0].Jobs[0]; math.Abs(j.IOPSSpread-1000.0/300) > 1e-9 || j.P99Spread < 8 {
		t.Errorf("two hosts' spread: IOPS %v, p99 %v; want 3.33 and about 9", j.IOPSSpread, j.P99Spread)
	}
}

// TestFleetJobsByGroupAndClones: a job's clones on one host (numjobs
// without group_reporting) are that host's job, added up; one name in
// two reporting groups is two jobs.
func TestFleetJobsByGroupAndClones(t *testing.T) {
	stepOf := func(groups ...[]bench.JobResult) StepView {
		r := sweep.StepResult{Status: sweep.StepDone, Result: &bench.Result{}}
		for id, jobs := range groups {
			for k := range jobs {
				jobs[k].GroupID = id
			}
			r.Result.Groups = append(r.Result.Groups, bench.GroupResult{ID: id, Jobs: jobs})
		}
		return StepViewOf(&r)
	}
	a := stepOf([]bench.JobResult{steadyJob(t0, constant(1000, 4)...), steadyJob(t0, constant(1000, 4)...)},
		[]bench.JobResult{steadyJob(t0.Add(5*time.Second), constant(300, 4)...)})
	b := stepOf([]bench.JobResult{steadyJob(t0, constant(2000, 4)...)},
		[]bench.JobResult{steadyJob(t0.Add(5*time.Second), constant(300, 4)...)})
	f := FleetOf([]FleetHost{{Name: "a", Steps: []StepView{a}}, {Name: "b", Steps: []StepView{b}}})
	jobs := f.Steps[0].Jobs
	if len(jobs) != 2 || jobs[0].Name != "reader (group 0)" || jobs[1].Name != "reader (group 1)" {
		t.Fatalf("jobs %d: %q", len(jobs), []string{jobs[0].Name, jobs[len(jobs)-1].Name})
	}
	j := jobs[0]
	if len(j.Hosts) != 2 || j.Hosts[0].Figures.IOPS != 2000 || j.Hosts[0].Figures.Dirs[bench.Read].Lat.Stat.N != 200 {
		t.Fatalf("host a: %+v; want its two clones as one host of 2000 IOPS and 200 latencies", j.Hosts)
	}
	if math.Abs(j.Fleet.IOPS-4000) > 1e-6 || j.Time.Series[0].Fleet != 4000 || *j.Time.Series[0].Hosts[0] != 2000 {
		t.Errorf("fleet %v IOPS, first point %+v; want 4000, a's 2000", j.Fleet.IOPS, j.Time.Series[0])
	}
	if g1 := jobs[1]; math.Abs(g1.Fleet.IOPS-600) > 1e-6 || g1.Fleet.Dirs[bench.Read].IOs != 2400 {
		t.Errorf("group 1's reader: %v IOPS, %d reads; want 600, 2400", g1.Fleet.IOPS, g1.Fleet.Dirs[bench.Read].IOs)
	}
}
