package summary

import (
	"bytes"
	"math"
	"os"
	"slices"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// TestFleetOfFioClients checks the fleet of fio's client output (three
// fio 3.33 servers in network namespaces, one job each, json+; see
// bench/fio/testdata/client/README.md) against fio's own "All clients":
// the same I/Os, bytes, IOPS and bandwidth (fio's rule: the I/Os over the
// longest runtime, the servers having no samples), and clat and lat
// merged to fio's mean and deviation. fio's client prints no percentiles
// for "All clients" (its summed thread status has no percentile list), so
// the merged percentiles are checked as one histogram of the three
// servers' bins, and each server's own against the percentiles fio
// printed for it.
func TestFleetOfFioClients(t *testing.T) {
	data, err := os.ReadFile("../fio/testdata/client/client-three.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	imps, err := fio.ParseFioHosts(data)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := fio.ParseReports(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	stats := reps[len(reps)-1].ClientStats
	all := stats[len(stats)-1]
	if len(imps) != 3 || all.JobName != "All clients" {
		t.Fatalf("%d servers, last entry %q: want 3 and All clients", len(imps), all.JobName)
	}
	var hosts []FleetHost
	for _, imp := range imps {
		r := sweep.StepResult{Step: sweep.Step{}, Status: sweep.StepDone, Result: imp.Result}
		hosts = append(hosts, FleetHost{Name: imp.Server.String(), Steps: []StepView{StepViewOf(&r)}})
	}
	f := FleetOf(hosts)
	if len(f.Steps) != 1 || len(f.Steps[0].Jobs) != 1 {
		t.Fatalf("steps %+v: want one step of one job", f.Steps)
	}
	j := f.Steps[0].Jobs[0]
	got := j.Fleet.Dirs[bench.Read]
	if got.IOs != all.Read.TotalIOs || got.Bytes != all.Read.IOBytes {
		t.Errorf("fleet %d reads, %d bytes; fio's All clients %d, %d", got.IOs, got.Bytes, all.Read.TotalIOs, all.Read.IOBytes)
	}
	if j.Time.Aligned || math.Abs(j.Fleet.IOPS-all.Read.IOPS) > 1e-6 || math.Floor(got.BW) != float64(all.Read.BWBytes) {
		t.Errorf("fleet %v IOPS, %v B/s (aligned %v); fio's All clients %v, %d", j.Fleet.IOPS, got.BW, j.Time.Aligned, all.Read.IOPS, all.Read.BWBytes)
	}
	for _, k := range []struct {
		name string
		got  FleetLat
		fio  fio.LatReport
	}{{"clat", got.Clat, all.Read.Clat}, {"lat", got.Lat, all.Read.Lat}} {
		s := k.got.Stat
		if s.N != k.fio.N || s.Min != k.fio.Min || s.Max != k.fio.Max || math.Abs(s.Mean-k.fio.Mean) > 5e-7 ||
			math.Abs(s.Stddev()-k.fio.Stddev) > 1e-9*k.fio.Stddev {
			t.Errorf("%s: n %d min %d max %d mean %f stddev %f; fio's All clients %+v", k.name, s.N, s.Min, s.Max, s.Mean, s.Stddev(), k.fio)
		}
	}
	// The merged percentiles are one histogram of the three servers' bins.
	var one hist.Lat
	for i := range stats[:len(stats)-1] {
		h, err := hist.HistogramFromBins(stats[i].Read.Clat.Bins)
		if err != nil {
			t.Fatal(err)
		}
		one.Hist.Merge(&h)
		one.Stat.N += stats[i].Read.Clat.N
	}
	if want := one.Percentiles(FleetPercentiles); !slices.Equal(got.Clat.Pcts, want) {
		t.Errorf("fleet clat percentiles %v, want one histogram's %v", got.Clat.Pcts, want)
	}
	// Each server's own: fio's percentiles for it.
	for i, h := range j.Hosts {
		for k, p := range FleetPercentiles {
			want, ok := stats[i].Read.Clat.Percentile.Get(p)
			if !ok {
				t.Fatalf("fio printed no p%v", p)
			}
			if v := h.Figures.Dirs[bench.Read].Clat.P(k); v != want {
				t.Errorf("server %s: clat p%v %d, fio printed %d", h.Host, p, v, want)
			}
		}
	}
}
