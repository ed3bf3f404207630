package chart

import (
	"math"
	"unicode/utf8"
)

// The QoS chart writes its knees and latency_target depths beside their
// points. Points of several curves crowd at the same IOPS ("knee 275k"
// and "knee 278k" a few pixels apart), so each label takes the first side
// of its point (above, below, right, left) where its box overlaps no
// label placed before it and stays in the plot, at every width the page
// draws the chart at; a label with no such side is not drawn on the
// point (the subtitle and the tooltip still say it). The plot's extents
// are fixed in the option (qosExtent), so that where a point lands is
// known here and not left to echarts' rounding.

// qosWidths are the chart widths the labels are placed for: a narrow
// window's, the run page's and a wide screen's.
var qosWidths = []float64{560, 900, 1500}

// The chart's frame, as plotOptions and app.css make it: 460 px high,
// the grid's margins, room for the y axis's labels (containLabel) and
// the x axis's labels and name.
const (
	qosHeight       = 460
	qosTitleHeight  = 58 // the title, and room below the subtitle for the y axis's name
	qosSubtitleLine = 16 // a line of the 12 px subtitle
	qosPlotLeft     = 24 + 56
	qosPlotRight    = 40
	qosPlotBottom   = 64 + 30
	qosLabelHeight  = 16 // a 12 px line
	qosCharWidth    = 7  // a 12 px sans-serif character, digits and lower case, with room
	qosSymbolRadius = 3  // lineStyle's SymbolSize 6
	qosLabelGap     = 5  // echarts' label distance
)

// qosSides are where a label may go, in the order tried.
var qosSides = []string{"top", "bottom", "right", "left"}

// box is a rectangle on the chart, in pixels, y down.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

func (a box) inside(b box) bool { return a.x0 >= b.x0 && a.x1 <= b.x1 && a.y0 >= b.y0 && a.y1 <= b.y1 }

// qosPlot is the plot at one chart width: its box and its axes' extents
// (x linear from 0, y log).
type qosPlot struct {
	area       box
	xMax       float64
	yMin, yMax float64
}

func newQoSPlot(width float64, e qosExtent) qosPlot {
	return qosPlot{area: box{qosPlotLeft, e.top, width - qosPlotRight, qosHeight - qosPlotBottom}, xMax: e.xMax, yMin: e.yMin, yMax: e.yMax}
}

// at is where the point (x IOPS, y µs) is drawn.
func (p qosPlot) at(x, y float64) (px, py float64) {
	px = p.area.x0 + (p.area.x1-p.area.x0)*x/p.xMax
	f := (math.Log10(y) - math.Log10(p.yMin)) / (math.Log10(p.yMax) - math.Log10(p.yMin))
	return px, p.area.y1 - (p.area.y1-p.area.y0)*f
}

// labelBox is the box of text drawn at side of the point at (px, py), as
// echarts draws a symbol's label: qosLabelGap beyond the symbol.
func labelBox(px, py float64, text, side string) box {
	w, h := float64(utf8.RuneCountInString(text)*qosCharWidth), float64(qosLabelHeight)
	d := float64(qosSymbolRadius + qosLabelGap)
	switch side {
	case "top":
		return box{px - w/2, py - d - h, px + w/2, py - d}
	case "bottom":
		return box{px - w/2, py + d, px + w/2, py + d + h}
	case "right":
		return box{px + d, py - h/2, px + d + w, py + h/2}
	}
	return box{px - d - w, py - h/2, px - d, py + h/2}
}

// qosExtent is the extent of the QoS chart's axes: x from 0 to a round
// number above the highest IOPS, y (log) between the powers of ten
// around the latencies and the objectives' limits.
// top is the grid's top, below the subtitle.
type qosExtent struct{ xMax, yMin, yMax, top float64 }

func qosExtentOf(points [][2]float64, limits []float64) qosExtent {
	e := qosExtent{xMax: 1, yMin: math.Inf(1), yMax: math.Inf(-1)}
	for _, p := range points {
		e.xMax = max(e.xMax, p[0])
		if p[1] > 0 {
			e.yMin, e.yMax = min(e.yMin, p[1]), max(e.yMax, p[1])
		}
	}
	for _, l := range limits {
		e.yMin, e.yMax = min(e.yMin, l), max(e.yMax, l)
	}
	if math.IsInf(e.yMin, 1) {
		e.yMin, e.yMax = 1, 10
	}
	e.xMax = niceCeil(e.xMax)
	e.yMin = math.Pow(10, math.Floor(math.Log10(e.yMin)))
	e.yMax = math.Pow(10, math.Ceil(math.Log10(e.yMax)))
	if e.yMax <= e.yMin {
		e.yMax = e.yMin * 10
	}
	return e
}

// niceCeil is the round number at or above v that an axis ends at: 1,
// 2, 2.5 or 5 times a power of ten, with a little room above v.
func niceCeil(v float64) float64 {
	v *= 1.05
	pow := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*pow >= v {
			return m * pow
		}
	}
	return 10 * pow
}

// qosLabel is a text to write beside a point.
type qosLabel struct {
	x, y float64 // the point: IOPS, µs
	text string
	// sides are the sides it may take, in order.
	sides []string
}

// placeLabels gives each label, in order, the first of its sides where
// its box stays in the plot and overlaps no box of fixed (the
// objectives' own labels) nor of a label placed before it, at every
// width; "" when no side does.
func placeLabels(labels []qosLabel, e qosExtent, fixed func(qosPlot) []box) []string {
	plots := make([]qosPlot, len(qosWidths))
	taken := make([][]box, len(qosWidths))
	for i, w := range qosWidths {
		plots[i] = newQoSPlot(w, e)
		if fixed != nil {
			taken[i] = fixed(plots[i])
		}
	}
	out := make([]string, len(labels))
	for n, l := range labels {
	sides:
		for _, side := range l.sides {
			boxes := make([]box, len(plots))
			for i, p := range plots {
				px, py := p.at(l.x, l.y)
				boxes[i] = labelBox(px, py, l.text, side)
				if !boxes[i].inside(p.area) {
					continue sides
				}
				for _, t := range taken[i] {
					if boxes[i].overlaps(t) {
						continue sides
					}
				}
			}
			for i := range plots {
				taken[i] = append(taken[i], boxes[i])
			}
			out[n] = side
			break
		}
	}
	return out
}

// sloLabelBox is the box of an objective's limit's label (withSLOLines:
// insideEndTop, at the plot's right end above the line at µs).
func sloLabelBox(p qosPlot, at float64, text string) box {
	_, py := p.at(p.xMax, at)
	w := float64(utf8.RuneCountInString(text) * qosCharWidth)
	return box{p.area.x1 - w - qosLabelGap, py - qosLabelGap - qosLabelHeight, p.area.x1, py}
}
