package chart

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// crowdedQoSRun is the QoS chart: a rate_iops sweep (the probe,
// then 25 %…90 % of it) of one reader under each engine and scheduler
// given, every curve's knee at 75 % of about 300k IOPS and each 3k apart
// ("knee 225k" beside "knee 228k"): paced latency 100 µs up to 75 %,
// 20 ms at 90 %.
func crowdedQoSRun(id int64, engines, scheds []string) LoadedRun {
	plan := testPlan(1, sweepOf(sweep.AxisEngine, engines...), sweepOf(sweep.AxisScheduler, scheds...),
		sweepOf(sweep.AxisRateIOPS, "max", "25%", "50%", "75%", "90%"))
	slo := sweep.DefaultSLO
	plan.SLO = &slo
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		n := slices.Index(engines, s.Value(sweep.AxisEngine))*len(scheds) + slices.Index(scheds, s.Value(sweep.AxisScheduler))
		v := s.Value(sweep.AxisRateIOPS)
		pct := 100
		if v != "max" {
			pct, _ = strconv.Atoi(strings.TrimSuffix(v, "%"))
		}
		// 10 ms of I/O: ios I/Os are ios×100 IOPS.
		ios := uint64((300000*pct/100 + 3000*n) / 100)
		jr := testJob("reader", 10*time.Millisecond, testLoad{ios: ios, bs: 4096, lat: 50 * time.Microsecond}, testLoad{})
		if v != "max" {
			lat := 100 * time.Microsecond
			if pct > 75 {
				lat = 20 * time.Millisecond
			}
			for range ios {
				jr.Dirs[bench.Read].Intended.Add(uint64(lat))
			}
		}
		return sweeptest.Done(jr)
	}))
}

// qosLabelDoc is what the test reads of a QoS option: the axes' extents
// and each series' points with their labels.
type qosLabelDoc struct {
	Grid  []struct{ Top string }       `json:"grid"`
	XAxis []struct{ Max float64 }      `json:"xAxis"`
	YAxis []struct{ Min, Max float64 } `json:"yAxis"`
	Title struct {
		Subtext string `json:"subtext"`
	} `json:"title"`
	Series []struct {
		Name string `json:"name"`
		Data []struct {
			Value any    `json:"value"`
			Note  string `json:"note"`
			Label *struct {
				Position  string `json:"position"`
				Formatter string `json:"formatter"`
			} `json:"label"`
		} `json:"data"`
		MarkLine *struct {
			Label struct{ Formatter string } `json:"label"`
			Data  []struct {
				YAxis float64 `json:"yAxis"`
			} `json:"data"`
		} `json:"markLine"`
	} `json:"series"`
}

func readQoS(t *testing.T, c *Chart) qosLabelDoc {
	t.Helper()
	checkOption(t, c)
	var doc qosLabelDoc
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// drawnLabel is a label of the option, where it is drawn.
type drawnLabel struct {
	text, side string
	x, y       float64
}

func (d *qosLabelDoc) labels() []drawnLabel {
	var out []drawnLabel
	for _, s := range d.Series {
		for _, it := range s.Data {
			xy, ok := it.Value.([]any)
			if !ok || it.Label == nil {
				continue
			}
			out = append(out, drawnLabel{it.Label.Formatter, it.Label.Position, xy[0].(float64), xy[1].(float64)})
		}
	}
	return out
}

// overlaps lists the pairs of labels whose boxes overlap, or a box that
// leaves the plot, at any of the page's widths, in the option's own axis
// extents; side, when given, replaces every label's side.
func (d *qosLabelDoc) overlaps(side string) []string {
	top, _ := strconv.ParseFloat(d.Grid[0].Top, 64)
	e := qosExtent{xMax: d.XAxis[0].Max, yMin: d.YAxis[0].Min, yMax: d.YAxis[0].Max, top: top}
	var bad []string
	for _, w := range qosWidths {
		p := newQoSPlot(w, e)
		var boxes []box
		var names []string
		for _, s := range d.Series {
			if s.MarkLine != nil {
				boxes = append(boxes, sloLabelBox(p, s.MarkLine.Data[0].YAxis, s.MarkLine.Label.Formatter))
				names = append(names, s.MarkLine.Label.Formatter)
			}
		}
		for _, l := range d.labels() {
			px, py := p.at(l.x, l.y)
			b := labelBox(px, py, l.text, cmpOr(side, l.side))
			if !b.inside(p.area) {
				bad = append(bad, fmt.Sprintf("%gpx: %q leaves the plot", w, l.text))
			}
			for k, o := range boxes {
				if b.overlaps(o) {
					bad = append(bad, fmt.Sprintf("%gpx: %q over %q", w, l.text, names[k]))
				}
			}
			boxes = append(boxes, b)
			names = append(names, l.text)
		}
	}
	return bad
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Twelve candidate series (four engines' curves, three percentiles
// each) draw eight: the median and p99 of each curve; the chart names
// the p99.9 it leaves out and how to tick it; ?p= draws it (and then
// the first two curves only, with ?show= the ones named).
func TestQoSCap(t *testing.T) {
	run := crowdedQoSRun(1, []string{"libaio", "io_uring", "psync", "pvsync2"}, []string{"none"})
	for _, tc := range []struct {
		name   string
		q      Query
		series []string
		hidden []string // in the subtitle
	}{
		{"default", Query{Kind: QoS}, []string{"libaio p50", "libaio p99", "io_uring p50", "io_uring p99", "psync p50", "psync p99", "pvsync2 p50", "pvsync2 p99"},
			[]string{"8 of 12 series drawn", "hidden: p99.9 (tick them under percentiles)"}},
		{"p=99.9", Query{Kind: QoS, Percentiles: []float64{50, 99, 99.9}}, []string{"libaio p50", "libaio p99", "libaio p99.9", "io_uring p50", "io_uring p99", "io_uring p99.9"},
			[]string{"6 of 12 series drawn", "the curves psync, pvsync2 (tick them above the chart)"}},
		{"show", Query{Kind: QoS, Percentiles: []float64{99}, Show: []string{"psync", "pvsync2", "libaio"}}, []string{"libaio p99", "psync p99", "pvsync2 p99"},
			[]string{"3 of 12 series drawn", "p50, p99.9", "the curves io_uring"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustBuild(t, tc.q, run)
			doc := readQoS(t, c)
			var names []string
			for _, s := range doc.Series {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, tc.series) {
				t.Errorf("series %q, want %q", names, tc.series)
			}
			if len(names) > maxSeries {
				t.Errorf("%d series", len(names))
			}
			for _, h := range tc.hidden {
				if !strings.Contains(doc.Title.Subtext, h) {
					t.Errorf("subtitle %q does not say %q", doc.Title.Subtext, h)
				}
			}
			// The pickers reach every hidden series.
			for _, p := range c.Pickers {
				if p.Param == "p" && len(p.Options) != 3 {
					t.Errorf("percentiles %+v", p.Options)
				}
				if p.Param == "show" && (p.Label != "ioengine" || len(p.Options) != 4) {
					t.Errorf("the curves' picker is %s %+v", p.Label, p.Options)
				}
			}
		})
	}
	// Twelve curves (engines × schedulers): p99 alone of the first eight;
	// the list of hidden series names the other four curves' p99 and
	// every curve's p50 and p99.9.
	run = crowdedQoSRun(2, []string{"libaio", "io_uring", "psync"}, []string{"none", "bfq", "kyber", "mq-deadline"})
	rv := []*runView{newRunView(&run)}
	v := qosViewOf(Query{Kind: QoS}, rv, qosCurves(rv, ""))
	if got := len(v.hidden); got != 36-8 {
		t.Errorf("%d series hidden of 36, want 28: %q", got, v.hidden)
	}
	for _, want := range []string{"psync kyber p99", "libaio none p50", "libaio none p99.9"} {
		if !slices.Contains(v.hidden, want) {
			t.Errorf("hidden %q lacks %q", v.hidden, want)
		}
	}
	doc := readQoS(t, mustBuild(t, Query{Kind: QoS}, run))
	if len(doc.Series) != 8 || !strings.Contains(doc.Title.Subtext, "the curves psync none, psync bfq, psync kyber, psync mq-deadline") {
		t.Errorf("%d series; subtitle %q", len(doc.Series), doc.Title.Subtext)
	}
}

// The knees of curves a few thousand IOPS apart, all written above
// their points, would be drawn over each other; placed, no two labels'
// boxes overlap (nor the objective's), none leaves the plot, at any
// width the page draws the chart at, and a knee with no room is said in
// its tooltip.
func TestQoSLabelsApart(t *testing.T) {
	for _, engines := range [][]string{{"libaio", "io_uring"}, {"libaio", "io_uring", "psync", "pvsync2"}} {
		run := crowdedQoSRun(1, engines, []string{"none"})
		doc := readQoS(t, mustBuild(t, Query{Kind: QoS}, run))
		labels := doc.labels()
		if len(labels) == 0 {
			t.Fatalf("%v: no knee is written on the chart", engines)
		}
		if bad := doc.overlaps("top"); len(bad) == 0 {
			t.Errorf("%v: the fixture's knees do not crowd: all above their points they would not overlap", engines)
		}
		if bad := doc.overlaps(""); len(bad) > 0 {
			t.Errorf("%v: %d overlaps: %q", engines, len(bad), bad)
		}
		// Every curve's knee is on the chart or in its point's tooltip.
		for _, e := range engines {
			found := 0
			for _, s := range doc.Series {
				if !strings.HasPrefix(s.Name, e+" ") {
					continue
				}
				for _, it := range s.Data {
					if (it.Label != nil && strings.HasPrefix(it.Label.Formatter, "knee ")) || strings.Contains(it.Note, "knee ") {
						found++
					}
				}
			}
			if found != 1 {
				t.Errorf("%v: %s's knee is written %d times", engines, e, found)
			}
		}
	}
}

// The placement itself: labels that would share a box take other sides
// or none, and a label that fits nowhere is left out.
func TestPlaceLabels(t *testing.T) {
	e := qosExtent{xMax: 400000, yMin: 10, yMax: 100000, top: 88}
	var labels []qosLabel
	for i := range 6 {
		labels = append(labels, qosLabel{x: 225000 + 3000*float64(i), y: 100, text: "knee 22" + strconv.Itoa(5+3*i) + "k IOPS", sides: qosSides})
	}
	sides := placeLabels(labels, e, nil)
	placed := 0
	for _, w := range qosWidths {
		p := newQoSPlot(w, e)
		var boxes []box
		for i, s := range sides {
			if s == "" {
				continue
			}
			px, py := p.at(labels[i].x, labels[i].y)
			b := labelBox(px, py, labels[i].text, s)
			for _, o := range boxes {
				if b.overlaps(o) {
					t.Errorf("%gpx: %q at %s overlaps", w, labels[i].text, s)
				}
			}
			boxes = append(boxes, b)
		}
		placed = len(boxes)
	}
	if placed < 2 || placed == len(labels) {
		t.Errorf("sides %q: six labels in one spot should place some and not all", sides)
	}
	if sides[0] != "top" || sides[1] != "bottom" {
		t.Errorf("sides %q: the first takes the top, the second the bottom", sides)
	}
}
