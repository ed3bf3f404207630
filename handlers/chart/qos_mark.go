package chart

import (
	"strconv"

	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// markQoSPoint marks, on the curve of the SLO's percentile, the knee (a
// diamond, "knee 41.2k IOPS") and a point whose step searched with
// latency_target and ended below its iodepth (a triangle,
// "latency_target: depth 12", the depth the search ended at; the
// tooltip has it for every point that searched).
func markQoSPoint(it *item, p *summary.QoSPoint, knee bool) {
	var text string
	if knee {
		it.Symbol, text = "diamond", "knee "+units.Count(p.IOPS.Median)+" IOPS"
	}
	if d := p.LatencyDepthText(); d != "" {
		switch {
		case !p.LatencyBound: // the search kept the whole queue: the tooltip says so
		case text == "":
			it.Symbol, text = "triangle", d
		default:
			text += " · " + d
		}
		it.Extra = append(it.Extra, [3]any{"latency_target depth", latencyDepthCell(p), ""})
	}
	if text != "" {
		// Left of the point: the points of an iodepth sweep past its
		// saturation stand one above the other.
		pos := "top"
		if !knee {
			pos = "left"
		}
		it.Label = &opts.Label{Show: opts.Bool(true), Position: pos, Color: "#333", Formatter: text}
	}
}

// latencyDepthCell is the CSV's latency_depth: the depth, a range over
// repeats that disagree, "" without a latency_target search.
func latencyDepthCell(p *summary.QoSPoint) string {
	if p.LatencyDepth <= 0 {
		return ""
	}
	s := strconv.Itoa(p.LatencyDepth)
	if p.LatencyDepthMax > p.LatencyDepth {
		s += "-" + strconv.Itoa(p.LatencyDepthMax)
	}
	return s
}

// qosApart says a point is drawn on its own, not joined to its curve: a
// rate the step did not hold (it achieved less than it asked, and sorted
// by what it achieved it would fold the curve back), and the unpaced
// probe of a rate_iops sweep (closed-loop clat, not latency from the
// intended start).
func qosApart(c *summary.QoSCurve, p *summary.QoSPoint) bool {
	return !p.Held || (c.LoadAxis == sweep.AxisRateIOPS && p.Latency != bench.LatIntended)
}

// latencyOf names a point's latency in a note.
func latencyOf(l string) string {
	if l == bench.LatIntended {
		return "latency from the intended start"
	}
	return l
}
