package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench/pts"
	"iolab/bench/summary"
	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
)

// PTSView is a PTS run's part of the report, in the structure of the
// specification's report: the header (the device, the platform, the
// test's parameters, purge and preconditioning, steady state, what was
// scaled down), the steady-state table of each tracking variable and the
// measurement tables. Its cells are formatted once here, for the HTML
// and the Markdown alike (PTSCell's formats).
type PTSView struct {
	Title, Section string
	Header         []PTSField
	// Steady says steady state: "reached at round 6 (window: rounds
	// 2–6)" or "not reached in 25 rounds"; "" for WSAT.
	Steady string
	Scaled []string
	Tables []PTSTable
	report *summary.PTSReport
}

// PTSField is one line of the header.
type PTSField struct{ Name, Value string }

// PTSTable is one table of the PTS part: an id (its anchor and the
// bundle's CSV), a title, what it shows, its head and rows.
type PTSTable struct {
	ID, Title, Note string
	Head            []string
	Rows            [][]string
}

// The PTS tables' cells: what each figure is written as, the HTML's,
// the Markdown's and their test's.
func PTSIOPSCell(iops float64) string { return strconv.FormatFloat(iops, 'f', 0, 64) }

// PTSBWCell is bytes/s as MB/s (10^6: the specification's unit).
func PTSBWCell(bps float64) string { return strconv.FormatFloat(bps/1e6, 'f', 1, 64) }

// PTSLatCell is ns as µs.
func PTSLatCell(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }

// PTSGiBCell is bytes as GiB.
func PTSGiBCell(bytes uint64) string {
	return strconv.FormatFloat(float64(bytes)/(1<<30), 'f', 3, 64)
}

// ptsMetricCell is a tracking variable's value in its metric's cell.
func ptsMetricCell(metric string, v float64) string {
	switch metric {
	case pts.MetricIOPS:
		return PTSIOPSCell(v)
	case pts.MetricReadBW, pts.MetricWriteBW:
		return PTSBWCell(v)
	case pts.MetricMeanLat:
		return PTSLatCell(v)
	}
	return units.Significant(v, 4)
}

// ptsMetricName is a tracking variable with its cells' unit.
func ptsMetricName(t pts.Tracking) string {
	switch t.Metric {
	case pts.MetricReadBW, pts.MetricWriteBW:
		return t.String() + " (MB/s)"
	case pts.MetricMeanLat:
		return t.String() + " (µs)"
	}
	return t.String()
}

// MixName is a rwmixread value as the specification writes a mix:
// "65/35".
func MixName(rwmixread string) string {
	n, err := strconv.Atoi(rwmixread)
	if err != nil {
		return rwmixread
	}
	return fmt.Sprintf("%d/%d", n, 100-n)
}

// ptsView reads a run's PTS part; nil for a run that is not a PTS test.
// PTSViewOf is the PTS part of a run's report, and of its page; nil
// when the run is not a PTS test.
func PTSViewOf(run *db.Run, steps []summary.StepView) *PTSView { return ptsView(run, steps) }

func ptsView(run *db.Run, steps []summary.StepView) *PTSView {
	r := summary.PTSReportOf(&run.Plan, steps)
	if r == nil {
		return nil
	}
	v := &PTSView{Title: "SNIA PTS: " + r.Test.Title, Section: r.Test.Section, Scaled: r.Scaled, report: r}
	v.Header = ptsHeader(run, r)
	if !r.Test.Saturate {
		o := r.Outcome
		if o.Reached {
			v.Steady = fmt.Sprintf("reached at round %d (window: rounds %d–%d)", o.Round+1, r.WindowFirst+1, r.WindowLast+1)
		} else {
			v.Steady = fmt.Sprintf("not reached in %d rounds (the last %d are the window: rounds %d–%d)", o.Rounds, min(o.Rounds, pts.WindowRounds), r.WindowFirst+1, r.WindowLast+1)
		}
		v.Header = append(v.Header, PTSField{"steady state", v.Steady})
		v.Tables = append(v.Tables, ptsSteadyTable(r), ptsRoundsTable(r))
	}
	switch r.Test.Name {
	case "iops":
		v.Tables = append(v.Tables, ptsIOPSTable(r))
	case "throughput":
		v.Tables = append(v.Tables, ptsThroughputTable(r))
	case "latency":
		v.Tables = append(v.Tables, ptsLatencyTable(r))
	case "wsat":
		v.Tables = append(v.Tables, ptsWSATTable(r))
	case "dirth":
		v.Tables = append(v.Tables, ptsDIRTHTable(r))
	}
	return v
}

// ptsHeader is the device, the platform and the test's parameters.
func ptsHeader(run *db.Run, r *summary.PTSReport) []PTSField {
	var h []PTSField
	add := func(name, value string) { h = append(h, PTSField{name, value}) }
	add("test", fmt.Sprintf("%s (%s)", r.Test.Title, r.Test.Section))
	dev := run.Target
	if r.Prep != nil && r.Prep.Device != "" {
		dev = r.Prep.Device
	}
	add("device", dev)
	// The device's identity as the run recorded its target.
	if len(run.Targets) > 0 {
		i := slices.IndexFunc(run.Targets, func(t system.Target) bool { return t.Path == dev || t.Resolved == dev })
		t := run.Targets[max(i, 0)]
		add("model", system.Known(t.Model))
		add("firmware", system.Known(t.Firmware))
		add("serial", system.Known(t.Serial))
		if t.WWID != "" {
			add("WWID", t.WWID)
		}
		add("capacity", fmt.Sprintf("%d bytes (%s)", t.Size, units.Bytes(float64(t.Size))))
		add("block size", fmt.Sprintf("%d logical, %d physical", t.LogicalBlockSize, t.PhysicalBlockSize))
	}
	host := run.Host
	platform := system.Known(host.Hostname)
	if host.CPUModel != "" {
		platform += fmt.Sprintf(" · %s × %d", host.CPUModel, host.CPUCount)
	}
	if host.MemTotal > 0 {
		platform += " · " + units.Bytes(float64(host.MemTotal)) + " RAM"
	}
	add("platform", platform)
	add("kernel", system.Known(run.Kernel))
	add("outstanding I/O", fmt.Sprintf("%d jobs × iodepth %d = %d", r.NumJobs, r.IODepth, r.NumJobs*r.IODepth))
	add("round time", "each element "+r.Spec.Round().String())
	if r.Prep != nil {
		add("active range", fmt.Sprintf("%d bytes of %d (%s)", r.Prep.ActiveRange, r.Prep.Capacity, units.Bytes(float64(r.Prep.ActiveRange))))
		purge := r.Prep.Purge
		if r.Prep.PurgeTime > 0 {
			purge += " in " + r.Prep.PurgeTime.Round(time.Microsecond).String()
		}
		if len(r.Prep.PurgeSkipped) > 0 {
			purge += " (" + strings.Join(r.Prep.PurgeSkipped, "; ") + ")"
		}
		add("purge", purge)
		wipc := "none"
		if r.Prep.WIPCLoops > 0 {
			wipc = fmt.Sprintf("%d× the active range in 128 KiB sequential writes: %s in %s", r.Prep.WIPCLoops,
				units.Bytes(float64(r.Prep.WIPCBytes)), r.Prep.WIPCTime.Round(time.Millisecond))
		}
		add("preconditioning", wipc)
	} else {
		add("purge", "not recorded")
	}
	if r.Test.Saturate {
		add("rounds", fmt.Sprintf("%d, until %g× the active range was written", len(r.Rounds), r.Spec.WSATTimes()))
	} else {
		add("rounds", fmt.Sprintf("%d run, at most %d", len(r.Rounds), r.Spec.Rounds()))
		var tr []string
		for _, t := range r.Tracking {
			tr = append(tr, t.String())
		}
		add("tracking", strings.Join(tr, "; "))
	}
	return h
}

// ptsSteadyTable is each tracking variable's window against the rule.
func ptsSteadyTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-steady", Title: "Steady state",
		Note: fmt.Sprintf("Each tracking variable over the window: steady when its range (max − min) is within %.0f %% of its average and its least-squares line's excursion over the window within %.0f %%.", 100*pts.RangeLimit, 100*pts.SlopeLimit),
		Head: []string{"tracking variable", "window", "average", "range", "range %", "fit excursion %", "slope / round", "steady"}}
	for k, tr := range r.Tracking {
		if k >= len(r.Outcome.Windows) {
			break
		}
		w := &r.Outcome.Windows[k]
		steady := "no"
		if w.Steady() {
			steady = "yes"
		}
		t.Rows = append(t.Rows, []string{ptsMetricName(tr), fmt.Sprintf("rounds %d–%d", w.First+1, w.First+len(w.Values)),
			ptsMetricCell(tr.Metric, w.Average), ptsMetricCell(tr.Metric, w.Range),
			strconv.FormatFloat(100*w.RangePct(), 'f', 1, 64), strconv.FormatFloat(100*w.ExcursionPct(), 'f', 1, 64),
			ptsMetricCell(tr.Metric, w.Slope), steady})
	}
	return t
}

// ptsRoundsTable is the tracking variables round by round (the
// convergence plot's data for them).
func ptsRoundsTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-rounds", Title: "Tracking variables per round", Head: []string{"round"},
		Note: "In window: the round is one of the steady-state window's."}
	for _, tr := range r.Tracking {
		t.Head = append(t.Head, ptsMetricName(tr))
	}
	t.Head = append(t.Head, "in window")
	for round := range r.Outcome.Rounds {
		row := []string{strconv.Itoa(round + 1)}
		for k := range r.Tracking {
			row = append(row, ptsMetricCell(r.Tracking[k].Metric, r.Series[k][round]))
		}
		in := ""
		if round >= r.WindowFirst && round <= r.WindowLast {
			in = "yes"
		}
		t.Rows = append(t.Rows, append(row, in))
	}
	return t
}

// ptsIOPSTable is the IOPS matrix: block size rows × mix columns, each
// element's IOPS averaged over the window.
func ptsIOPSTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-iops", Title: "IOPS: block size × read/write mix",
		Note: "Each element's IOPS (reads and writes) averaged over the steady-state window's rounds."}
	return ptsGrid(r, t, "rwmixread", MixName, func(w *summary.PTSWindowFigures) string { return PTSIOPSCell(w.TotalIOPS()) })
}

// ptsThroughputTable is bandwidth: block size rows × read and write.
func ptsThroughputTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-throughput", Title: "Throughput (MB/s): block size × direction",
		Note: "Each element's bandwidth in MB/s (10⁶ bytes a second), sequential, averaged over the steady-state window's rounds."}
	return ptsGrid(r, t, "rw", func(rw string) string { return rw }, func(w *summary.PTSWindowFigures) string { return PTSBWCell(w.TotalBW()) })
}

// ptsGrid fills t as a grid: a row per block size, a column per value of
// the option across (headed by head of it), each cell the element's window
// figure.
func ptsGrid(r *summary.PTSReport, t PTSTable, across string, head func(string) string, cell func(*summary.PTSWindowFigures) string) PTSTable {
	cols, sizes := ptsAxis(r, across), ptsAxis(r, "bs")
	t.Head = []string{"block size"}
	for _, c := range cols {
		t.Head = append(t.Head, head(c))
	}
	for _, bs := range sizes {
		row := []string{bs}
		for _, c := range cols {
			row = append(row, ptsCell(r, map[string]string{across: c, "bs": bs}, cell))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ptsLatencyTable is the response times of each element: average, max
// and the five-nines percentiles.
func ptsLatencyTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-latency", Title: "Response time (µs): read/write mix × block size",
		Note: "fio's lat (submission to completion) over reads and writes: the mean and the 99.99th and 99.999th percentiles of each round's histogram averaged over the window's rounds, max the largest in the window. Percentiles past 1 in the I/Os a round did are its largest I/O.",
		Head: []string{"mix", "block size", "IOPS", "average", "max", "p99.99", "p99.999"}}
	for _, m := range ptsAxis(r, "rwmixread") {
		for _, bs := range ptsAxis(r, "bs") {
			el := map[string]string{"rwmixread": m, "bs": bs}
			t.Rows = append(t.Rows, ptsLatRow([]string{MixName(m), bs}, r, el))
		}
	}
	return t
}

// ptsDIRTHTable is demand intensity: each point's IOPS and response
// times, from the most outstanding I/O to the least.
func ptsDIRTHTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-dirth", Title: "Demand intensity: jobs × iodepth",
		Note: "8 KiB random 65/35 at each point, over the steady-state window's rounds (as the latency table's); OIO is jobs × iodepth.",
		Head: []string{"jobs", "iodepth", "OIO", "IOPS", "average", "max", "p99.99", "p99.999"}}
	for _, nj := range ptsAxis(r, "numjobs") {
		for _, qd := range ptsAxis(r, "iodepth") {
			a, _ := strconv.Atoi(nj)
			b, _ := strconv.Atoi(qd)
			el := map[string]string{"numjobs": nj, "iodepth": qd}
			t.Rows = append(t.Rows, ptsLatRow([]string{nj, qd, strconv.Itoa(a * b)}, r, el))
		}
	}
	return t
}

// ptsLatRow is lead, then the element's IOPS, average, max, p99.99 and
// p99.999 over the window.
func ptsLatRow(lead []string, r *summary.PTSReport, el map[string]string) []string {
	e := r.Element(el)
	if e < 0 || e >= len(r.Window) || r.Window[e].Rounds == 0 {
		return append(lead, "–", "–", "–", "–", "–")
	}
	w := &r.Window[e]
	return append(lead, PTSIOPSCell(w.TotalIOPS()), PTSLatCell(w.MeanLat), PTSLatCell(float64(w.MaxLat)),
		PTSLatCell(w.P9999), PTSLatCell(w.P99999))
}

// ptsWSATTable is write saturation round by round.
func ptsWSATTable(r *summary.PTSReport) PTSTable {
	t := PTSTable{ID: "pts-wsat", Title: "Write saturation: IOPS per round",
		Note: "4 KiB random writes; each round's IOPS, when it ended (since the first round began) and the GiB written by then.",
		Head: []string{"round", "time (s)", "written (GiB)", "IOPS"}}
	for _, p := range r.WSAT {
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Round + 1), strconv.FormatFloat(p.Elapsed.Seconds(), 'f', 1, 64),
			PTSGiBCell(p.Written), PTSIOPSCell(p.IOPS)})
	}
	return t
}

// ptsAxis is the values of the matrix's axis named option.
func ptsAxis(r *summary.PTSReport, option string) []string {
	for _, a := range r.Matrix {
		if a.Option == option {
			return a.Values
		}
	}
	return nil
}

// ptsCell is the element's window figures as cell says them; "–" when
// the element has none.
func ptsCell(r *summary.PTSReport, el map[string]string, cell func(*summary.PTSWindowFigures) string) string {
	e := r.Element(el)
	if e < 0 || e >= len(r.Window) || r.Window[e].Rounds == 0 {
		return "–"
	}
	return cell(&r.Window[e])
}

// ptsTableFile names the bundle's CSV of a run's PTS table.
func ptsTableFile(run int64, table string) string { return fmt.Sprintf("run-%d-%s.csv", run, table) }

// markdownPTS writes run's PTS part.
func markdownPTS(b *strings.Builder, run int64, v *PTSView) {
	fmt.Fprintf(b, "\n## %s\n\n", mdText(v.Title))
	var rows [][]string
	for _, f := range v.Header {
		rows = append(rows, []string{f.Name, f.Value})
	}
	mdTable(b, []string{"field", "value"}, rows)
	if len(v.Scaled) > 0 {
		b.WriteString("\nScaled down from the specification:\n\n")
		for _, s := range v.Scaled {
			fmt.Fprintf(b, "- %s\n", mdText(s))
		}
	}
	for _, t := range v.Tables {
		f := ptsTableFile(run, t.ID)
		fmt.Fprintf(b, "\n### %s\n\n%s Its CSV: [%s](%s).\n\n", mdText(t.Title), mdText(t.Note), f, f)
		mdTable(b, t.Head, t.Rows)
	}
}
