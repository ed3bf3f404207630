package report

import (
	"fmt"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
	"iolab/handlers/chart"
)

// Knee is one QoS curve's knee as a report writes it: "knee: 41.2k
// IOPS at p99<1ms", and how it was found.
type Knee struct {
	Run    int64
	Curve  string // the job and the other axes; "" for a run's only curve
	Text   string // "knee: 41.2k IOPS at p99<1ms" or "no knee at p99<1ms"
	Detail string // the load, the latency at the SLO's percentile and which latency
	Found  bool
	// Table is the curve's points, as iolab show prints them; KneeRow
	// indexes the knee's row, -1 for none.
	Table   summary.QoSTable
	KneeRow int
}

// qosKnees are the knees of the runs that have a QoS curve: a rate_iops
// sweep, or an iodepth sweep with an SLO (what `iolab show` prints them
// for), each curve's under the run's SLO.
func qosKnees(runs []chart.LoadedRun) []Knee {
	var out []Knee
	for i := range runs {
		plan := &runs[i].Run.Plan
		if !plan.SweepsAxis(sweep.AxisRateIOPS) && plan.SLO == nil {
			continue
		}
		curves := summary.QoSCurvesOf(plan, runs[i].StepSummaries())
		for j := range curves {
			c := &curves[j]
			k := Knee{Run: runs[i].Run.ID, KneeRow: c.Knee}
			k.Table = summary.NewQoSTable(c)
			if len(curves) > 1 {
				k.Curve = c.Name(true)
			}
			p := c.KneePoint()
			if p == nil {
				k.Text = "no knee at " + c.SLO.String()
				k.Detail = "no point meets it with enough I/Os at a rate it held"
			} else {
				k.Found = true
				k.Text = fmt.Sprintf("knee: %s IOPS at %s", units.Count(p.IOPS.Median), c.SLO)
				lat := p.Latency
				if lat == bench.LatIntended {
					lat = "from the intended start"
				}
				k.Detail = fmt.Sprintf("%s=%s, p%s %s, %s", c.LoadAxis, p.Load,
					strconv.FormatFloat(c.SLO.Percentile, 'f', -1, 64), units.Nanos(float64(p.PSLO)), lat)
				if d := p.LatencyDepthText(); d != "" {
					k.Detail += ", " + d
				}
			}
			out = append(out, k)
		}
	}
	return out
}

// markdownKnees writes the knees' section of the Markdown summary.
func (r *Report) markdownKnees(b *strings.Builder) {
	if len(r.Knees) == 0 {
		return
	}
	b.WriteString("\n## Latency under load\n\n")
	for _, k := range r.Knees {
		b.WriteString("- ")
		if r.Compare {
			fmt.Fprintf(b, "run %d ", k.Run)
		}
		if k.Curve != "" {
			b.WriteString(mdText(k.Curve) + ": ")
		}
		fmt.Fprintf(b, "**%s** — %s\n", mdText(k.Text), mdText(k.Detail))
	}
	for _, k := range r.Knees {
		b.WriteString("\n")
		title := "Latency vs achieved IOPS"
		if r.Compare {
			title += fmt.Sprintf(" — run %d", k.Run)
		}
		if k.Curve != "" {
			title += " — " + k.Curve
		}
		fmt.Fprintf(b, "### %s\n\n", mdText(title))
		head := make([]string, len(k.Table.Head))
		for i, h := range k.Table.Head {
			head[i] = mdText(h)
		}
		rows := make([][]string, len(k.Table.Rows))
		for i, row := range k.Table.Rows {
			rows[i] = make([]string, len(row))
			for c, v := range row {
				rows[i][c] = mdText(v)
			}
			if i == k.KneeRow {
				rows[i][2] = "**" + rows[i][2] + "** (knee)"
			}
		}
		mdRows(b, head, rows)
		if len(k.Table.Legend) > 0 {
			b.WriteString("\n")
		}
		for _, m := range k.Table.Legend {
			fmt.Fprintf(b, "- %s %s\n", mdText(m.Mark), mdText(m.Text))
		}
	}
}
