package fio

import (
	"fmt"
	"strings"

	"iolab/bench"
)

// Latency per I/O priority, as fio 3.33 reports it (stat.c
// add_ddir_status_json's "prios", show_ddir_status's "clat prio" lines):
// only once two priorities of a direction have samples, each priority
// with samples in the order of its index, its class and level apart,
// the latency under clat_ns — or lat_ns, and "lat prio", with
// lat_percentiles, which is what fio keeps per priority then.

// PrioReport is one entry of a direction's "prios".
type PrioReport struct {
	PrioClass int        `json:"prioclass"`
	Prio      int        `json:"prio"`
	Clat      *LatReport `json:"clat_ns,omitempty"`
	Lat       *LatReport `json:"lat_ns,omitempty"`
}

// prioReports are the direction's "prios": with percentiles where clat
// or lat percentiles are on, and their bins with json+.
func prioReports(dr *bench.DirResult, j *bench.Job, plus bool) []PrioReport {
	if !dr.PrioLats() {
		return nil
	}
	var out []PrioReport
	for i := range dr.Prios {
		p := &dr.Prios[i]
		if p.Lat.Stat.N == 0 {
			continue
		}
		lr := latReport(&p.Lat, j.ClatPercentiles || j.LatPercentiles, j.PercentileList, plus)
		pr := PrioReport{PrioClass: bench.IOPrioClassOf(p.Prio), Prio: bench.IOPrioLevelOf(p.Prio)}
		if j.LatPercentiles {
			pr.Lat = &lr
		} else {
			pr.Clat = &lr
		}
		out = append(out, pr)
	}
	return out
}

// prioLatName is fio's clat_type: what the per-priority lines call the
// latency they show.
func prioLatName(j *bench.Job) string {
	if j.LatPercentiles {
		return "lat"
	}
	return "clat"
}

// writePrioLats is show_ddir_status's line per priority after lat's:
// "clat prio 1/0 (usec): min=…".
func writePrioLats(b *strings.Builder, dr *bench.DirResult, j *bench.Job) {
	if !dr.PrioLats() {
		return
	}
	for i := range dr.Prios {
		p := &dr.Prios[i]
		writeLat(b, fmt.Sprintf("%s prio %d/%d", prioLatName(j), bench.IOPrioClassOf(p.Prio), bench.IOPrioLevelOf(p.Prio)), &p.Lat.Stat)
	}
}

// writePrioPercentiles is show_ddir_status's percentiles per priority,
// after the direction's own, each with its share of the direction's
// I/Os: "clat prio 1/0 (20.12% of IOs) percentiles (usec):".
func writePrioPercentiles(b *strings.Builder, dr *bench.DirResult, j *bench.Job) {
	if !(j.ClatPercentiles || j.LatPercentiles) || !dr.PrioLats() {
		return
	}
	total := dr.Clat.Stat.N
	if j.LatPercentiles {
		total = dr.Lat.Stat.N
	}
	for i := range dr.Prios {
		p := &dr.Prios[i]
		n := p.Lat.Stat.N
		if n == 0 {
			continue
		}
		name := fmt.Sprintf("%s prio %d/%d (%.2f%% of IOs)", prioLatName(j), bench.IOPrioClassOf(p.Prio), bench.IOPrioLevelOf(p.Prio), 100*float64(n)/float64(total))
		writePercentiles(b, name, &p.Lat, j.PercentileList)
	}
}
