package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers/chart"
)

// FleetView is a group's fleet (summary.Fleet) as the group page and the
// report show it (web/templates/fleet.html): per step and job, the
// fleet's row and each host's, with how the hosts' time lined up, the
// spread and the stragglers.
type FleetView struct {
	Rule       string
	Stragglers int
	// Percentiles name the latency columns: p50, p90, p99, p99.9.
	Percentiles []string
	Cols        int // the table's columns
	Steps       []FleetStepView
}

// FleetStepView is one planned step.
type FleetStepView struct {
	Seq     int
	Label   string
	Missing string // the hosts whose step is not done, "" when none
	Jobs    []FleetJobView
}

// FleetJobView is one job of a step: its rows, the fleet's first.
type FleetJobView struct {
	Name string
	// Lat is the latency the percentiles are of: lat, or clat where lat
	// has no histogram (FleetDir.Latency).
	Lat    summary.LatKind
	Time   string // how the hosts' windows lined up
	Apart  bool
	Spread string
	Rows   []FleetRowView
}

// FleetRowView is the fleet's or one host's figures in one direction.
type FleetRowView struct {
	Host      string
	Fleet     bool
	Dir       string
	IOs       string
	IOPS, BW  string
	Lat       []string // FleetPercentiles of the job's Lat
	Straggler string
}

// FleetOf is the fleet of a group's runs, each host named by its run's
// Host (the Hosts page's name; its hostname, else its id, when it has
// none).
func FleetOf(runs []chart.LoadedRun) *summary.Fleet {
	hosts := make([]summary.FleetHost, len(runs))
	for i := range runs {
		name := runs[i].Host
		if name == "" {
			name = runs[i].Run.Hostname
		}
		if name == "" {
			name = fmt.Sprintf("run %d", runs[i].Run.ID)
		}
		hosts[i] = summary.FleetHost{Name: name, Steps: runs[i].StepSummaries()}
	}
	return summary.FleetOf(hosts)
}

// GroupOf is the group runs all belong to with the Hosts page's name of
// each run's host, when they are two or more runs of one group; "" else.
func GroupOf(ctx context.Context, store *db.Store, runs []chart.LoadedRun) (string, []string, error) {
	if len(runs) < 2 {
		return "", nil, nil
	}
	var (
		group string
		names []string
	)
	for i := range runs {
		uid, m, err := store.FleetRunOf(ctx, runs[i].Run.ID)
		if errors.Is(err, db.ErrNotFound) || err == nil && group != "" && uid != group {
			return "", nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		group = uid
		names = append(names, m.HostName)
	}
	return group, names, nil
}

// FleetViewOf is f as the pages show it.
func FleetViewOf(f *summary.Fleet) *FleetView {
	v := &FleetView{Rule: summary.StragglerRule, Stragglers: f.Stragglers}
	for _, p := range summary.FleetPercentiles {
		v.Percentiles = append(v.Percentiles, "p"+strconv.FormatFloat(p, 'f', -1, 64))
	}
	v.Cols = 6 + len(v.Percentiles)
	for _, st := range f.Steps {
		sv := FleetStepView{Seq: st.Seq, Label: st.Label, Missing: strings.Join(st.Missing, ", ")}
		for k := range st.Jobs {
			sv.Jobs = append(sv.Jobs, fleetJobView(&st.Jobs[k]))
		}
		v.Steps = append(v.Steps, sv)
	}
	return v
}

var fleetDirTitles = [3]string{"read", "write", "trim"}

func fleetJobView(j *summary.FleetJob) FleetJobView {
	jv := FleetJobView{Name: j.Name, Apart: j.Time.Apart, Time: FleetTimeText(&j.Time)}
	if j.IOPSSpread > 0 {
		jv.Spread = fmt.Sprintf("highest host over lowest: IOPS ×%s", units.Significant(j.IOPSSpread, 3))
		if j.P99Spread > 0 {
			jv.Spread += fmt.Sprintf(", p99 ×%s", units.Significant(j.P99Spread, 3))
		}
	}
	var dirs []int
	for d := range j.Fleet.Dirs {
		if j.Fleet.Dirs[d].IOs > 0 {
			dirs = append(dirs, d)
		}
	}
	row := func(host string, f *summary.FleetFigures, d int, fleet bool) FleetRowView {
		fd := &f.Dirs[d]
		r := FleetRowView{Host: host, Fleet: fleet, Dir: fleetDirTitles[d], IOs: units.Count(float64(fd.IOs))}
		if fleet && j.Time.Apart {
			r.IOPS, r.BW = "—", "—"
		} else {
			r.IOPS, r.BW = units.Count(fd.IOPS), units.Rate(fd.BW)
		}
		l, k := fd.Latency()
		jv.Lat = k
		for i := range summary.FleetPercentiles {
			if l.Pcts == nil {
				r.Lat = append(r.Lat, "—")
				continue
			}
			r.Lat = append(r.Lat, units.Nanos(float64(l.P(i))))
		}
		return r
	}
	for _, d := range dirs {
		jv.Rows = append(jv.Rows, row(summary.FleetHostName, &j.Fleet, d, true))
	}
	for _, h := range j.Hosts {
		for _, d := range dirs {
			r := row(h.Host, &h.Figures, d, false)
			r.Straggler = h.Straggler
			jv.Rows = append(jv.Rows, r)
		}
	}
	return jv
}

// FleetTimeText says how a job's hosts lined up in time, and so what the
// fleet's IOPS are of.
func FleetTimeText(t *summary.FleetTime) string {
	switch {
	case t.Apart:
		return "the hosts did not run at the same time (not for one interval): no fleet IOPS; the latencies are merged"
	case !t.Aligned:
		return "a host kept no per-interval samples (fio's output): the fleet's IOPS are every host's I/Os over the longest host's window, as fio's \"All clients\""
	}
	s := fmt.Sprintf("IOPS summed over the %s every host ran, the hosts' %s intervals lined up on the wall clock",
		units.Nanos(float64(t.End.Sub(t.Start))), units.Nanos(float64(t.Interval)))
	if t.Coverage < 0.9 {
		s += fmt.Sprintf("; the hosts overlapped for only %.0f %% of the longest host's window", 100*t.Coverage)
	}
	return s
}

// addFleet adds the fleet of runs to the report when they are one
// group's: its table and the chart of the first step with IOPS over time.
func (r *Report) addFleet(ctx context.Context, store *db.Store, runs []chart.LoadedRun) error {
	uid, names, err := GroupOf(ctx, store, runs)
	if err != nil || uid == "" {
		return err
	}
	hosts := slices.Clone(runs)
	for i := range hosts {
		hosts[i].Host = names[i]
	}
	f := FleetOf(hosts)
	if len(f.Steps) == 0 {
		return nil
	}
	r.fleet, r.Fleet = f, FleetViewOf(f)
	for _, st := range f.Steps {
		if len(st.Jobs) == 0 || len(st.Jobs[0].Time.Series) == 0 {
			continue
		}
		rc := Chart{Kind: string(chart.Fleet), Title: string(chart.Fleet), file: string(chart.Fleet)}
		ch, err := chart.FleetTimeline(f, st.Seq, 0, runs)
		if err != nil {
			rc.Error = err.Error()
		} else {
			rc = renderChart(rc, ch)
		}
		r.Charts = append(r.Charts, rc)
		break
	}
	return nil
}

// fleetCSV is the fleet's table (summary.FleetColumns) as CSV.
func (r *Report) fleetCSV() ([]byte, error) {
	var buf bytes.Buffer
	w := chart.NewCSVWriter(&buf, summary.FleetColumns())
	if err := w.Header(); err != nil {
		return nil, err
	}
	for i := range r.fleet.Steps {
		for _, row := range r.fleet.Steps[i].TableRows() {
			if err := w.Row(row); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// markdownFleet writes the fleet's table, a row per host, the fleet's
// first, under each step's job; all columns: fleet.csv.
func (r *Report) markdownFleet(b *strings.Builder) {
	v := r.Fleet
	if v == nil {
		return
	}
	b.WriteString("\n## Fleet: the hosts as one system\n\nPer step and job, latency percentiles from every host's histogram merged (never an average of the hosts'), IOPS summed over the wall-clock time every host ran; only the same job of the same step is merged. Stragglers: " + mdText(v.Rule) + ". All columns, clat too: [fleet.csv](fleet.csv).\n")
	head := []string{"host", "dir", "I/Os", "IOPS", "bandwidth"}
	head = append(head, v.Percentiles...)
	head = append(head, "straggler")
	for _, st := range v.Steps {
		for _, j := range st.Jobs {
			fmt.Fprintf(b, "\n**step %d · %s · %s** — percentiles of %s; %s", st.Seq, mdText(st.Label), mdText(j.Name), j.Lat.Name(), mdText(j.Time))
			if j.Spread != "" {
				fmt.Fprintf(b, "; %s", mdText(j.Spread))
			}
			if st.Missing != "" {
				fmt.Fprintf(b, "; not done on %s, left out", mdText(st.Missing))
			}
			b.WriteString("\n\n")
			var rows [][]string
			for _, row := range j.Rows {
				cells := append([]string{row.Host, row.Dir, row.IOs, row.IOPS, row.BW}, row.Lat...)
				cells = append(cells, row.Straggler)
				for i := range cells {
					cells[i] = mdText(cells[i])
				}
				if row.Fleet {
					cells[0] = "**fleet**" // markup of ours, around no run's text
				}
				rows = append(rows, cells)
			}
			mdRows(b, head, rows)
		}
	}
}
