package bench

import "iolab/bench/hist"

// PrioLat is the latency of a direction's I/Os of one priority (fio's
// struct clat_prio_stat): their completion latency, or with
// lat_percentiles their total latency — fio keeps one of the two per
// priority — and its histogram where percentiles are reported.
type PrioLat struct {
	Prio uint16   `json:"ioprio"` // class << 13 | level
	Lat  hist.Lat `json:"lat"`
}

// PrioLats reports whether the direction's latencies per priority are
// shown: fio shows them once two priorities have samples.
func (d *DirResult) PrioLats() bool {
	n := 0
	for i := range d.Prios {
		if d.Prios[i].Lat.Stat.N > 0 {
			n++
		}
	}
	return n >= 2
}

// prioSource is the latency a job's result adds to its group's for the
// priority it ran at, when it has none per priority: its clat, or lat
// with lat_percentiles (fio's sum_clat_prio_stats_src_single_prio).
func (r *JobResult) prioSource(d int) *hist.Lat {
	if r.Job.LatPercentiles {
		return &r.Dirs[d].Lat
	}
	return &r.Dirs[d].Clat
}

// groupPrios are a group_reporting group's latencies per priority, as
// fio's init_per_prio_stats and sum_clat_prio_stats make them: kept only
// when a job has them (cmdprio) or the jobs ran at different priorities
// (prio, prioclass); then each job adds its own per priority, or its
// whole latency at its priority, merged by priority in the order they
// first appear.
func groupPrios(jobs []JobResult) [2][]PrioLat {
	var out [2][]PrioLat
	keep := false
	for i := range jobs {
		r := &jobs[i]
		if r.Job.JobIOPrio() != jobs[0].Job.JobIOPrio() || r.Dirs[Read].Prios != nil || r.Dirs[Write].Prios != nil {
			keep = true
		}
	}
	if !keep {
		return out
	}
	for d := range out {
		for i := range jobs {
			r := &jobs[i]
			if src := r.Dirs[d].Prios; src != nil {
				if out[d] == nil {
					// fio copies the first job's array as it is, empty
					// priorities included.
					out[d] = append([]PrioLat(nil), src...)
					continue
				}
				for k := range src {
					out[d] = addPrio(out[d], src[k].Prio, &src[k].Lat)
				}
				continue
			}
			out[d] = addPrio(out[d], r.Job.JobIOPrio(), r.prioSource(d))
		}
	}
	return out
}

// addPrio merges l into p's entry of list, appending one when p has
// none; a latency without samples adds nothing (fio's
// clat_prio_stat_add_samples).
func addPrio(list []PrioLat, p uint16, l *hist.Lat) []PrioLat {
	if l.Stat.N == 0 {
		return list
	}
	for i := range list {
		if list[i].Prio == p {
			list[i].Lat.Merge(l)
			return list
		}
	}
	return append(list, PrioLat{Prio: p, Lat: *l})
}
