package summary

import (
	"strconv"
	"time"

	"iolab/bench"
)

// FleetHostName is the name a fleet's own row takes in place of a host's
// in its table and JSON.
const FleetHostName = "fleet"

// FleetColumns are the fleet table's columns (the group's fleet CSV),
// with units: one row per step, job, direction with I/Os and host, the
// fleet's row first.
func FleetColumns() []string {
	cols := []string{"step", "label", "job", "host", "dir", "ios", "bytes", "iops", "bw_bytes_s"}
	for _, k := range []string{"clat", "lat"} {
		cols = append(cols, k+"_mean_ns")
		for _, p := range FleetPercentiles {
			cols = append(cols, k+"_p"+pctName(p)+"_ns")
		}
	}
	return append(cols, "straggler", "aligned", "apart", "window_s", "coverage", "iops_spread", "p99_spread", "missing_hosts")
}

// pctName is p as a column names it: 50, 99, 99.9 → 50, 99, 99_9.
func pctName(p float64) string {
	s := strconv.FormatFloat(p, 'f', -1, 64)
	for i := range s {
		if s[i] == '.' {
			return s[:i] + "_" + s[i+1:]
		}
	}
	return s
}

// TableRows are the rows of step st of the fleet table (FleetColumns);
// a latency without a histogram has its percentiles empty.
// The fleet's rows carry how the hosts' time lined up and the spread; a
// host's carry why it is a straggler.
func (st *FleetStep) TableRows() [][]string {
	var rows [][]string
	missing := strconv.Itoa(len(st.Missing))
	for k := range st.Jobs {
		j := &st.Jobs[k]
		dirs := j.dirs()
		for _, d := range dirs {
			row := st.row(j, FleetHostName, &j.Fleet.Dirs[d], d)
			window := ""
			if !j.Time.Apart {
				window = fnum(j.Time.End.Sub(j.Time.Start).Seconds())
			}
			rows = append(rows, append(row, "", strconv.FormatBool(j.Time.Aligned), strconv.FormatBool(j.Time.Apart),
				window, fnum(j.Time.Coverage), fnum(j.IOPSSpread), fnum(j.P99Spread), missing))
		}
		for h := range j.Hosts {
			for _, d := range dirs {
				row := st.row(j, j.Hosts[h].Host, &j.Hosts[h].Figures.Dirs[d], d)
				rows = append(rows, append(row, j.Hosts[h].Straggler, "", "", "", "", "", "", ""))
			}
		}
	}
	return rows
}

// dirs are the directions the job did I/O in on any host (read alone when
// none did).
func (j *FleetJob) dirs() []int {
	var out []int
	for d := range j.Fleet.Dirs {
		if j.Fleet.Dirs[d].IOs > 0 {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = []int{bench.Read}
	}
	return out
}

func (st *FleetStep) row(j *FleetJob, host string, fd *FleetDir, d int) []string {
	row := []string{strconv.Itoa(st.Seq), st.Label, j.Name, host, fleetDirNames[d],
		strconv.FormatUint(fd.IOs, 10), strconv.FormatUint(fd.Bytes, 10), fnum(fd.IOPS), fnum(fd.BW)}
	for _, l := range []*FleetLat{&fd.Clat, &fd.Lat} {
		row = append(row, fnum(l.Stat.Mean))
		for i := range FleetPercentiles {
			if l.Pcts == nil { // no histogram: no percentiles
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatUint(l.P(i), 10))
		}
	}
	return row
}

// fleetDirNames are the directions as the fleet's table and JSON name them.
var fleetDirNames = [3]string{"read", "write", "trim"}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FleetJSON is a fleet as a group's JSON export gives it
// (GET /api/groups/UID): per step and job, the fleet's figures, each
// host's and how the hosts' time lined up.
type FleetJSON struct {
	// Percentiles are the percentiles of every "p" list, in percent.
	Percentiles   []float64       `json:"percentiles"`
	StragglerRule string          `json:"straggler_rule"`
	Stragglers    int             `json:"stragglers"`
	Steps         []FleetStepJSON `json:"steps"`
}

// FleetStepJSON is one planned step.
type FleetStepJSON struct {
	Step    int            `json:"step"`
	Label   string         `json:"label"`
	Hosts   []string       `json:"hosts"`
	Missing []string       `json:"missing_hosts,omitempty"`
	Jobs    []FleetJobJSON `json:"jobs"`
}

// FleetJobJSON is one job of a step.
type FleetJobJSON struct {
	Name       string             `json:"name"`
	Fleet      FleetFiguresJSON   `json:"fleet"`
	Hosts      []FleetHostJobJSON `json:"hosts"`
	Aligned    bool               `json:"aligned"` // from the hosts' samples on the wall clock
	Apart      bool               `json:"apart"`   // the hosts did not run together: no fleet IOPS
	Start      time.Time          `json:"window_start"`
	End        time.Time          `json:"window_end"`
	Coverage   float64            `json:"coverage"`
	IntervalNS time.Duration      `json:"interval_ns"`
	IOPSSpread float64            `json:"iops_spread"`
	P99Spread  float64            `json:"p99_spread"`
	// Series is the fleet's IOPS per interval; each host's in Hosts'
	// order, null where it ran less than half the interval.
	Series []FleetPointJSON `json:"series,omitempty"`
}

// FleetPointJSON is one interval of a job's series.
type FleetPointJSON struct {
	AtNS  time.Duration `json:"at_ns"`
	Fleet float64       `json:"fleet_iops"`
	Hosts []*float64    `json:"hosts_iops"`
}

// FleetHostJobJSON is one host's own figures.
type FleetHostJobJSON struct {
	Host      string           `json:"host"`
	Figures   FleetFiguresJSON `json:"figures"`
	Straggler string           `json:"straggler,omitempty"`
}

// FleetFiguresJSON are a job's figures per direction with I/Os.
type FleetFiguresJSON struct {
	IOPS float64                 `json:"iops"` // every direction's
	Dirs map[string]FleetDirJSON `json:"dirs"`
}

// FleetDirJSON is one direction's figures.
type FleetDirJSON struct {
	IOs   uint64       `json:"ios"`
	Bytes uint64       `json:"bytes"`
	IOPS  float64      `json:"iops"`
	BW    float64      `json:"bw_bytes_s"`
	Clat  FleetLatJSON `json:"clat"`
	Lat   FleetLatJSON `json:"lat"`
}

// FleetLatJSON is a latency's summary in ns.
type FleetLatJSON struct {
	N      uint64   `json:"n"`
	Min    uint64   `json:"min_ns"`
	Max    uint64   `json:"max_ns"`
	Mean   float64  `json:"mean_ns"`
	Stddev float64  `json:"stddev_ns"`
	P      []uint64 `json:"p_ns"` // of FleetJSON.Percentiles
}

// JSON is f as a group's export gives it.
func (f *Fleet) JSON() *FleetJSON {
	out := &FleetJSON{Percentiles: FleetPercentiles, StragglerRule: StragglerRule, Stragglers: f.Stragglers, Steps: []FleetStepJSON{}}
	for _, st := range f.Steps {
		sj := FleetStepJSON{Step: st.Seq, Label: st.Label, Hosts: st.Hosts, Missing: st.Missing, Jobs: []FleetJobJSON{}}
		for k := range st.Jobs {
			j := &st.Jobs[k]
			dirs := j.dirs()
			jj := FleetJobJSON{Name: j.Name, Fleet: figuresJSON(&j.Fleet, dirs), Aligned: j.Time.Aligned, Apart: j.Time.Apart,
				Start: j.Time.Start, End: j.Time.End, Coverage: j.Time.Coverage, IntervalNS: j.Time.Interval,
				IOPSSpread: j.IOPSSpread, P99Spread: j.P99Spread}
			for _, h := range j.Hosts {
				jj.Hosts = append(jj.Hosts, FleetHostJobJSON{Host: h.Host, Figures: figuresJSON(&h.Figures, dirs), Straggler: h.Straggler})
			}
			for _, p := range j.Time.Series {
				jj.Series = append(jj.Series, FleetPointJSON{AtNS: p.At, Fleet: p.Fleet, Hosts: p.Hosts})
			}
			sj.Jobs = append(sj.Jobs, jj)
		}
		out.Steps = append(out.Steps, sj)
	}
	return out
}

func figuresJSON(f *FleetFigures, dirs []int) FleetFiguresJSON {
	out := FleetFiguresJSON{IOPS: f.IOPS, Dirs: map[string]FleetDirJSON{}}
	for _, d := range dirs {
		fd := &f.Dirs[d]
		out.Dirs[fleetDirNames[d]] = FleetDirJSON{IOs: fd.IOs, Bytes: fd.Bytes, IOPS: fd.IOPS, BW: fd.BW,
			Clat: latJSON(&fd.Clat), Lat: latJSON(&fd.Lat)}
	}
	return out
}

func latJSON(l *FleetLat) FleetLatJSON {
	p := l.Pcts
	if p == nil {
		p = make([]uint64, len(FleetPercentiles))
	}
	return FleetLatJSON{N: l.Stat.N, Min: l.Stat.Min, Max: l.Stat.Max, Mean: l.Stat.Mean, Stddev: l.Stat.Stddev(), P: p}
}
