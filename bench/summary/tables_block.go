package summary

import (
	"fmt"
	"slices"
	"strings"

	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// MinOneToOne is the share of a job's traced I/Os below which its
// block-layer parts are flagged wherever they are shown: the parts are of
// the I/Os timed (one-to-one onto a request, or split with every piece
// seen), and describe few of the job's I/Os when most merged or went
// unmatched.
const MinOneToOne = 0.9

// markFewOneToOne marks parts that describe few of a job's I/Os.
const markFewOneToOne = "?"

// writeTimeSplitTable writes where a traced plan's I/Os spent their time
// (--trace-block): per combination and job, the timed I/Os at lat's p50
// and at its p99 (one-to-one, or split with every piece seen) split into
// the block layer's parts, which add up to that lat, the medians over the
// repeats, and the share of the I/Os they are of. A step traced before
// iolab kept the parts by lat shows each part's own p50 and p99, marked:
// those need not add up. It writes nothing and returns false when no step
// was traced.
func writeTimeSplitTable(b *strings.Builder, notes *summaryNotes, sweeps []sweep.Sweep, results []sweep.StepResult, of string) bool {
	type row struct {
		axes     []string
		job      string
		p50, p99 [5][]float64 // BlockKinds, then lat
		share    []float64
		own      bool // a repeat without the split by lat
	}
	var rows []*row
	kinds := append(slices.Clone(BlockKinds), LatTotal)
	for i := range results {
		f := FiguresOf(&results[i])
		if !f.HasResult {
			continue
		}
		var axes []string
		for _, s := range sweeps {
			axes = append(axes, axisValueOf(results[i].Step.Axes, s.Axis))
		}
		for _, j := range f.Jobs {
			if j.Traced == 0 || j.Total {
				continue
			}
			k := slices.IndexFunc(rows, func(r *row) bool { return r.job == j.Name && slices.Equal(r.axes, axes) })
			if k < 0 {
				rows = append(rows, &row{axes: axes, job: j.Name})
				k = len(rows) - 1
			}
			r := rows[k]
			if j.Split50.IOs > 0 {
				for n := range BlockKinds {
					r.p50[n] = append(r.p50[n], j.Split50.Parts[n])
					r.p99[n] = append(r.p99[n], j.Split99.Parts[n])
				}
				r.p50[4] = append(r.p50[4], float64(j.Split50.Lat))
				r.p99[4] = append(r.p99[4], float64(j.Split99.Lat))
			} else {
				r.own = true
				for n, kind := range kinds {
					x := j.As(kind)
					r.p50[n] = append(r.p50[n], float64(x.P50))
					r.p99[n] = append(r.p99[n], float64(x.P99))
				}
			}
			r.share = append(r.share, j.OneToOne())
		}
	}
	if len(rows) == 0 {
		return false
	}
	fmt.Fprintf(b, "Where the time went (--trace-block): the timed I/Os at lat's p50 / p99, split%s\n\n", strings.Replace(of, "median (min–max)", "medians", 1))
	tw := newSummaryTable(b)
	var header []string
	for _, s := range sweeps {
		header = append(header, string(s.Axis))
	}
	header = append(header, "job")
	for _, k := range BlockKinds {
		header = append(header, string(k))
	}
	header = append(header, "lat")
	tw.row(append(header, "timed")...)
	ns := func(v []float64) string { return units.Nanos(stats.Median(v)) }
	var ownMark string
	for i, r := range rows {
		line := slices.Clone(r.axes)
		if i > 0 && slices.Equal(rows[i-1].axes, r.axes) {
			line = make([]string, len(r.axes))
		}
		job := r.job
		if r.own {
			if ownMark == "" {
				ownMark = notes.marks([]string{"each part's own p50 / p99 and lat's of all the job's I/Os: traced before iolab kept the parts by lat, they need not add up"})
			}
			job += " " + ownMark
		}
		line = append(line, job)
		for n := range kinds {
			line = append(line, ns(r.p50[n])+" / "+ns(r.p99[n]))
		}
		share := stats.Median(r.share)
		cell := fmt.Sprintf("%.0f %%", 100*share)
		if share < MinOneToOne {
			cell += " " + notes.flag(markFewOneToOne)
		}
		tw.row(append(line, cell)...)
	}
	tw.flush()
	return true
}
