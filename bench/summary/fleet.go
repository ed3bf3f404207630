package summary

import (
	"fmt"
	"slices"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// A fleet is a group's hosts as one system: one plan run on every host,
// and for each planned step the figures of all of them together, as
// fio's client prints "All clients" and its group_reporting merges jobs
// (stat.c, sum_thread_stats):
//
//   - latency percentiles from the hosts' histograms merged bucket by
//     bucket (hist.Histogram.Merge), never an average of the hosts'
//     percentiles, and the mean and deviation merged as fio's __sum_stat
//     merges them;
//   - IOPS and bandwidth summed over the same wall-clock time
//     (fleet_time.go);
//   - only the same job (reporting group and name) of the same planned
//     step is merged: a step's "reader" with the other hosts' "reader",
//     never with their "writer". fio's "All clients" sums every entry,
//     unlike jobs and all. A job's clones on one host (numjobs without
//     group_reporting) are that host's job.
//
// Beside the fleet's, each host's own figures, the spread between them
// and the stragglers (fleet_spread.go).

// FleetHost is one host's run of a group: its name (the Hosts page's)
// and its steps.
type FleetHost struct {
	Name  string
	Steps []StepView
}

// FleetPercentiles are the percentiles a fleet's latencies give, in
// percent.
var FleetPercentiles = []float64{50, 90, 99, 99.9}

// Fleet is a group's figures as one system, step by step.
type Fleet struct {
	Hosts []string
	Steps []FleetStep
	// Stragglers counts the hosts flagged over every step and job.
	Stragglers int
}

// FleetStep is one planned step (the same Seq on every host: the hosts
// ran one plan) as the fleet did it.
type FleetStep struct {
	Seq   int // 1-based, as StepFigures'
	Label string
	// Hosts are the hosts whose step is done; Missing those whose is not
	// (failed, cancelled or not run yet), which the fleet leaves out.
	Hosts, Missing []string
	Jobs           []FleetJob
}

// FleetJob is one job of a step on every host that ran it.
type FleetJob struct {
	Name string
	// Fleet is the hosts' figures together; Hosts each host's own, in the
	// group's order.
	Fleet FleetFigures
	Hosts []FleetHostJob
	// Time is how the hosts' windows lined up (fleet_time.go).
	Time FleetTime
	// IOPSSpread and P99Spread are the largest host's figure over the
	// smallest's (1 when alike; 0 with fewer than two hosts or a host at
	// 0): IOPS over every direction, p99 of lat in the direction with
	// the most I/Os.
	IOPSSpread, P99Spread float64
}

// FleetHostJob is one host's own figures of a job.
type FleetHostJob struct {
	Host    string
	Figures FleetFigures
	// Straggler says why the host is flagged (StragglerRule); "" when it
	// is not.
	Straggler string
}

// FleetFigures are a job's figures: per direction (bench.Read, Write,
// Trim), and its I/Os per second over every direction.
type FleetFigures struct {
	Dirs [3]FleetDir
	IOPS float64 // every direction's
}

// MainDir is the direction with the most I/Os (Read when none did any).
func (f *FleetFigures) MainDir() int {
	d := bench.Read
	for i := range f.Dirs {
		if f.Dirs[i].IOs > f.Dirs[d].IOs {
			d = i
		}
	}
	return d
}

// FleetDir is one direction's figures.
type FleetDir struct {
	IOs, Bytes uint64
	IOPS, BW   float64 // per second, BW in bytes
	Clat, Lat  FleetLat
}

// FleetLat is a latency's summary: its statistics and FleetPercentiles
// in ns, from one histogram (a host's, or the hosts' merged).
type FleetLat struct {
	Stat hist.LatStat
	Pcts []uint64 // of FleetPercentiles; nil without I/Os
}

// P reports the percentile FleetPercentiles[i] (0 without I/Os).
func (l *FleetLat) P(i int) uint64 {
	if i >= len(l.Pcts) {
		return 0
	}
	return l.Pcts[i]
}

// fleetLat is a merged latency's FleetLat; without a histogram (fio's
// json output, or json+ of lat without lat_percentiles) it has no
// percentiles.
func fleetLat(l *hist.Lat) FleetLat {
	out := FleetLat{Stat: l.Stat}
	if l.Stat.N > 0 && l.Hist.N() > 0 {
		out.Pcts = l.Percentiles(FleetPercentiles)
	}
	return out
}

// Latency is the latency a direction's percentiles are shown of: lat
// (from submission: hosts are compared on it), or clat where lat has no
// histogram (fio's json+ keeps lat's only with lat_percentiles).
func (d *FleetDir) Latency() (*FleetLat, LatKind) {
	if d.Lat.Pcts == nil && d.Clat.Pcts != nil {
		return &d.Clat, LatClat
	}
	return &d.Lat, LatTotal
}

// jobKey is a job of a step: its reporting group and name.
type jobKey struct {
	group int
	name  string
}

// hostJob is one host's results of a job of a step: one, or its clones.
type hostJob struct {
	host int // index in the fleet's hosts
	jobs []*JobView
}

// FleetOf works out a group's fleet figures. Every host ran the same plan,
// so a step is the same Seq on each; a step counts on the hosts where it
// is done.
func FleetOf(hosts []FleetHost) *Fleet {
	f := &Fleet{}
	bySeq := map[int][]int{} // step seq → index of the step in each host's Steps, -1 when absent
	var seqs []int
	for h, host := range hosts {
		f.Hosts = append(f.Hosts, host.Name)
		for i := range host.Steps {
			seq := host.Steps[i].Step.Seq
			if _, ok := bySeq[seq]; !ok {
				bySeq[seq] = slices.Repeat([]int{-1}, len(hosts))
				seqs = append(seqs, seq)
			}
			bySeq[seq][h] = i
		}
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		st := FleetStep{Seq: seq + 1}
		var jobs []jobKey
		byJob := map[jobKey][]hostJob{}
		for h, i := range bySeq[seq] {
			if i < 0 {
				st.Missing = append(st.Missing, hosts[h].Name)
				continue
			}
			sv := &hosts[h].Steps[i]
			if st.Label == "" {
				st.Label = sv.Step.String()
			}
			if sv.Status != sweep.StepDone || sv.Result == nil {
				st.Missing = append(st.Missing, hosts[h].Name)
				continue
			}
			st.Hosts = append(st.Hosts, hosts[h].Name)
			for g := range sv.Result.Groups {
				for j := range sv.Result.Groups[g].Jobs {
					jv := &sv.Result.Groups[g].Jobs[j]
					k := jobKey{group: jv.GroupID, name: jv.Name}
					runs := byJob[k]
					if len(runs) == 0 {
						jobs = append(jobs, k)
					}
					// A job's clones on one host (numjobs without
					// group_reporting) are that host's job.
					if n := len(runs); n > 0 && runs[n-1].host == h {
						runs[n-1].jobs = append(runs[n-1].jobs, jv)
					} else {
						runs = append(runs, hostJob{host: h, jobs: []*JobView{jv}})
					}
					byJob[k] = runs
				}
			}
		}
		named := map[string]int{}
		for _, k := range jobs {
			named[k.name]++
		}
		for _, k := range jobs {
			name := k.name
			if named[name] > 1 { // one name in two reporting groups
				name = fmt.Sprintf("%s (group %d)", name, k.group)
			}
			fj := fleetJob(name, byJob[k], f.Hosts)
			for _, h := range fj.Hosts {
				if h.Straggler != "" {
					f.Stragglers++
				}
			}
			st.Jobs = append(st.Jobs, fj)
		}
		f.Steps = append(f.Steps, st)
	}
	return f
}

// fleetJob merges one job's results over the hosts that ran it.
func fleetJob(name string, runs []hostJob, hostNames []string) FleetJob {
	fj := FleetJob{Name: name}
	var clat, lat [3]hist.Lat
	for _, r := range runs {
		hf := FleetFigures{}
		for d := range hf.Dirs {
			var c, l hist.Lat
			for _, jv := range r.jobs {
				src := &jv.Dirs[d]
				src.Clat.AddTo(&c)
				src.Lat.AddTo(&l)
				hf.Dirs[d].IOs += src.IOs
				hf.Dirs[d].Bytes += src.Bytes
				hf.Dirs[d].IOPS += bench.PerSecond(src.IOs, jv.Runtime)
				hf.Dirs[d].BW += bench.PerSecond(src.Bytes, jv.Runtime)
			}
			clat[d].Merge(&c)
			lat[d].Merge(&l)
			hf.Dirs[d].Clat, hf.Dirs[d].Lat = fleetLat(&c), fleetLat(&l)
			hf.IOPS += hf.Dirs[d].IOPS
			fj.Fleet.Dirs[d].IOs += hf.Dirs[d].IOs
			fj.Fleet.Dirs[d].Bytes += hf.Dirs[d].Bytes
		}
		fj.Hosts = append(fj.Hosts, FleetHostJob{Host: hostNames[r.host], Figures: hf})
	}
	for d := range fj.Fleet.Dirs {
		fj.Fleet.Dirs[d].Clat = fleetLat(&clat[d])
		fj.Fleet.Dirs[d].Lat = fleetLat(&lat[d])
	}
	fj.Time = alignTime(runs)
	for d := range fj.Fleet.Dirs {
		fj.Fleet.Dirs[d].IOPS, fj.Fleet.Dirs[d].BW = fj.Time.IOPS[d], fj.Time.BW[d]
		fj.Fleet.IOPS += fj.Time.IOPS[d]
	}
	spread(&fj)
	return fj
}

// window is a host's measured window of a job on the wall clock: from
// its clones' first start to their last end.
func (r *hostJob) window() (start, end time.Time) {
	for i, j := range r.jobs {
		s, e := j.Start, j.Start.Add(j.Runtime)
		if n := len(j.Samples); n > 0 && j.Start.Add(j.Samples[n-1].At).After(e) {
			e = j.Start.Add(j.Samples[n-1].At)
		}
		if i == 0 || s.Before(start) {
			start = s
		}
		if i == 0 || e.After(end) {
			end = e
		}
	}
	return start, end
}
