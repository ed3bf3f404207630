package summary

import (
	"fmt"

	"iolab/bench/hist"
	"iolab/bench/units"
)

// A straggler is a host that holds the fleet back. Hosts doing one job
// differ a little by chance — a few per cent of IOPS from run to run, a
// p99 that moves by buckets — so a host is flagged only when it lies well
// outside the range the others span, and only where there is a range:
//
//   - at least StragglerMinHosts hosts ran the job (with two, which one is
//     off cannot be told: the spread says how far apart they are);
//   - its IOPS (every direction) are below StragglerIOPS × the lowest of
//     the other hosts', or
//   - its p99 of lat (clat where lat has no histogram: FleetDir.Latency),
//     in the job's direction with the most I/Os, is above
//     StragglerP99 × the highest of the other hosts', every host having
//     done hist.ReliableN(99) I/Os there (fewer and p99 is a handful of
//     I/Os).
const (
	StragglerMinHosts = 3
	StragglerIOPS     = 0.8
	StragglerP99      = 1.5
)

// StragglerRule says the rule in words, as the pages and the report state
// it.
var StragglerRule = fmt.Sprintf("with %d hosts or more, a host is a straggler when its IOPS are below %.0f %% of the lowest of the other hosts', or its p99 of lat is above %.0f %% of the highest of theirs (in the job's main direction, each host with %d I/Os there or more)",
	StragglerMinHosts, StragglerIOPS*100, StragglerP99*100, hist.ReliableN(99))

// The rule's p99 is lat's, or clat's where lat has no histogram.

// p99Index is p99's place in FleetPercentiles.
const p99Index = 2

// spread works out a job's spread between its hosts and flags its
// stragglers.
func spread(fj *FleetJob) {
	n := len(fj.Hosts)
	if n < 2 {
		return
	}
	d := fj.Fleet.MainDir()
	iops := make([]float64, n)
	p99 := make([]float64, n)
	reliable := true
	for i := range fj.Hosts {
		f := &fj.Hosts[i].Figures
		iops[i] = f.IOPS
		l, _ := f.Dirs[d].Latency()
		p99[i] = float64(l.P(p99Index))
		reliable = reliable && l.Stat.N >= hist.ReliableN(99)
	}
	fj.IOPSSpread = ratio(iops)
	fj.P99Spread = ratio(p99)
	if n < StragglerMinHosts {
		return
	}
	for i := range fj.Hosts {
		lo, _ := othersRange(iops, i)
		_, hi := othersRange(p99, i)
		var why []string
		if iops[i] < StragglerIOPS*lo {
			why = append(why, fmt.Sprintf("IOPS %s, below %.0f %% of the others' lowest (%s)", units.Count(iops[i]), StragglerIOPS*100, units.Count(lo)))
		}
		if reliable && hi > 0 && p99[i] > StragglerP99*hi {
			why = append(why, fmt.Sprintf("p99 %s, above %.0f %% of the others' highest (%s)", units.Nanos(p99[i]), StragglerP99*100, units.Nanos(hi)))
		}
		for k, w := range why {
			if k > 0 {
				fj.Hosts[i].Straggler += "; "
			}
			fj.Hosts[i].Straggler += w
		}
	}
}

// othersRange is the lowest and highest of v but v[skip].
func othersRange(v []float64, skip int) (lo, hi float64) {
	first := true
	for i, x := range v {
		if i == skip {
			continue
		}
		if first || x < lo {
			lo = x
		}
		if first || x > hi {
			hi = x
		}
		first = false
	}
	return lo, hi
}

// ratio is the largest of v over the smallest; 0 when one is 0.
func ratio(v []float64) float64 {
	lo, hi := othersRange(v, -1)
	if lo <= 0 {
		return 0
	}
	return hi / lo
}
