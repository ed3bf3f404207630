package chart

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// look is how a reader tells a series from the others: its colour, its
// dash (a line's, or a box's border) and its point symbol.
type look struct{ colour, dash, symbol string }

// seriesLooks are the looks of a chart's series that have a legend entry,
// by name (error bars share their bars' name and are not theirs).
func seriesLooks(t *testing.T, raw json.RawMessage) (names []string, looks map[string]look) {
	t.Helper()
	var doc struct {
		Series []struct {
			Name      string `json:"name"`
			Type      string `json:"type"`
			Symbol    string `json:"symbol"`
			ItemStyle struct {
				Color string `json:"color"`
			} `json:"itemStyle"`
			LineStyle struct {
				Color string `json:"color"`
				Type  string `json:"type"`
			} `json:"lineStyle"`
			Data []json.RawMessage `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("option: %v", err)
	}
	looks = map[string]look{}
	for _, s := range doc.Series {
		if s.Type == "custom" || s.Name == "" {
			continue
		}
		if _, ok := looks[s.Name]; ok {
			continue // a line over bars of the same name (scaling's ideal)
		}
		l := look{colour: strings.ToLower(cmp.Or(s.ItemStyle.Color, s.LineStyle.Color)), dash: s.LineStyle.Type, symbol: s.Symbol}
		if s.Type == "boxplot" && len(s.Data) > 0 {
			var d struct {
				ItemStyle struct {
					BorderType string `json:"borderType"`
				} `json:"itemStyle"`
			}
			json.Unmarshal(s.Data[0], &d)
			l.dash = d.ItemStyle.BorderType
		}
		if l.dash == "" {
			l.dash = "solid"
		}
		names = append(names, s.Name)
		looks[s.Name] = l
	}
	return names, looks
}

// seriesColours are a chart's series' colours by name.
func seriesColours(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	_, looks := seriesLooks(t, raw)
	out := map[string]string{}
	for n, l := range looks {
		out[n] = l.colour
	}
	return out
}

// valueOf is which of values a series' name names: a word of it
// (libaio, numjobs=4).
func valueOf(name string, values []string) string {
	for _, w := range strings.Fields(name) {
		if slices.Contains(values, w) {
			return w
		}
	}
	return ""
}

// Every chart kind of a page, for a fixture of each experiment: no two
// series look alike (colour, dash and symbol), and a series-defining
// value has one colour on every chart of the page.
func TestColourIsTheValue(t *testing.T) {
	numjobs := []string{"1", "2", "4", "8", "16", "32"}
	njPlan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "8"), sweepOf(sweep.AxisNumJobs, numjobs...))
	njRun := testRun(21, njPlan, sweeptest.Steps(njPlan, func(s sweep.Step) sweep.StepResult {
		w := testWrites(1000 + uint64(100*s.Seq))
		w.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{0, 1000}, Lat: &bench.IntervalLat{N: 1000, P50: 50000, P99: 90000, Max: 200000}}}
		return sweeptest.Done(w)
	}))
	engines := []string{"io_uring", "libaio", "psync"}
	hostA, hostB := engineSweep(engines), engineSweep(engines)
	hostA.Run.ID, hostB.Run.ID = 31, 32
	hostA.Host, hostB.Host = "lab-b", "lab-a"
	odd := []string{"posixaio", "mmap", "libaio"} // two without a pinned colour
	kA, kB := engineSweep(odd), engineSweep(odd)
	kA.Run.ID, kB.Run.ID = 33, 34
	kA.Run.Kernel, kB.Run.Kernel = "6.12.0", "6.1.0"
	qa, qb := qosRun(41), qosRun(42)
	qa.Host, qb.Host = "lab-b", "lab-a"
	for _, tc := range []struct {
		name   string
		runs   []LoadedRun
		values []string
	}{
		{"numjobs", []LoadedRun{njRun}, []string{"numjobs=1", "numjobs=2", "numjobs=4", "numjobs=8", "numjobs=16", "numjobs=32"}},
		{"scaling", []LoadedRun{numjobsRun(22, map[string][2]uint64{"1": {1000, 1000}, "2": {1900, 2000}, "4": {3500, 4000}})}, nil},
		{"fairness", []LoadedRun{fairnessRun(23)}, []string{"none", "bfq", "mq-deadline", "kyber"}},
		{"engines × iodepth", []LoadedRun{engineSweep([]string{"io_uring", "libaio", "psync", "posixaio", "mmap", "none"})}, []string{"io_uring", "libaio", "psync", "posixaio", "mmap", "none"}},
		{"qos", []LoadedRun{qosRun(24)}, nil},
		{"qos by depth", []LoadedRun{qosDepthRun(25)}, nil},
		{"group of hosts", []LoadedRun{hostA, hostB}, engines},
		{"kernels compared", []LoadedRun{kA, kB}, odd},
		{"qos group of hosts", []LoadedRun{qa, qb}, []string{"lab-a", "lab-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := RunPage
			var ids []int64
			for _, r := range tc.runs {
				ids = append(ids, r.Run.ID)
			}
			if len(tc.runs) > 1 {
				page = ComparePage
			}
			colour := map[string]string{} // value → colour across the page
			for _, k := range kindsOf(Available(tc.runs, page)) {
				c, err := Build(Query{Kind: k, Runs: ids}, tc.runs)
				if err != nil {
					continue // a kind the fixture cannot draw (no samples)
				}
				names, looks := seriesLooks(t, c.Option)
				seen := map[look]string{}
				for _, n := range names {
					l := looks[n]
					if w, ok := seen[l]; ok {
						t.Errorf("%s: %q and %q both %+v", k, w, n, l)
					}
					seen[l] = n
					v := valueOf(n, tc.values)
					if v == "" || k == Fairness || k == LatencyTimeline {
						continue // jobs' and percentiles' own colours
					}
					if was, ok := colour[v]; ok && was != l.colour {
						t.Errorf("%s: %s in %s, %s on another chart", k, v, l.colour, was)
					}
					colour[v] = l.colour
				}
			}
			if len(tc.values) > 0 {
				byColour := map[string]string{}
				for v, c := range colour {
					if w, ok := byColour[c]; ok {
						t.Errorf("%s and %s both in %s", w, v, c)
					}
					byColour[c] = v
				}
				if len(colour) == 0 {
					t.Errorf("no chart names any of %q", tc.values)
				}
			}
		})
	}
}
