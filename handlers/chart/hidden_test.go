package chart

import (
	"slices"
	"strings"
	"testing"
)

// A chart draws 8 lines at most, and says which series it leaves out and
// the picker that draws them: by default (the first 8 engines drawn), and
// when a picker ticks more than fit (the first ticked drawn, the rest
// named), never leaving one out unsaid.
func TestChartSaysWhatItHides(t *testing.T) {
	engines := []string{"io_uring", "libaio", "psync", "sync", "pvsync", "pvsync2", "posixaio", "mmap", "null", "vsync"}
	run := engineSweep(engines)
	for _, tc := range []struct {
		name   string
		q      Query
		drawn  []string
		hidden []string // named in the note
		more   string   // and said there
	}{
		{"default", Query{Kind: IOPS}, engines[:8], []string{"null", "vsync"}, "Tick them under ioengine"},
		{"ticked past the cap", Query{Kind: IOPS, Show: engines[1:]}, engines[1:9], []string{"vsync"}, "8 series at most"},
		{"every percentile", Query{Kind: Latency, Show: []string{"libaio", "mmap", "null"}, Percentiles: []float64{50, 90, 99, 99.9, 99.99}},
			[]string{"libaio p50", "libaio p90", "libaio p99", "libaio p99.9", "libaio p99.99"}, []string{"mmap", "null"}, "Fewer percentiles leave room"},
		{"all fit", Query{Kind: IOPS, Show: []string{"libaio", "mmap"}}, []string{"libaio", "mmap"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustBuild(t, tc.q, run)
			if got := seriesNames(checkOption(t, c)); !slices.Equal(got, tc.drawn) {
				t.Errorf("series %q, want %q", got, tc.drawn)
			}
			if tc.hidden == nil {
				if c.Hidden != "" {
					t.Errorf("note %q on a chart that draws all it was asked for", c.Hidden)
				}
				return
			}
			for _, h := range tc.hidden {
				if !strings.Contains(c.Hidden, h) {
					t.Errorf("note %q does not name %s", c.Hidden, h)
				}
			}
			for _, d := range tc.drawn {
				if name, _, _ := strings.Cut(d, " "); strings.Contains(c.Hidden, " "+name+",") || strings.Contains(c.Hidden, " "+name+".") {
					t.Errorf("note %q names %s, which is drawn", c.Hidden, name)
				}
			}
			if !strings.Contains(c.Hidden, tc.more) {
				t.Errorf("note %q, want it to say %q", c.Hidden, tc.more)
			}
			// The picker ticks what is drawn: a hidden value is unticked.
			for _, p := range c.Pickers {
				for _, o := range p.Options {
					drawn := slices.ContainsFunc(tc.drawn, func(d string) bool { return d == o.Value || strings.HasPrefix(d, o.Value+" ") })
					if p.Param == "show" && o.On != drawn {
						t.Errorf("picker option %s ticked %v, drawn %v", o.Value, o.On, drawn)
					}
				}
			}
		})
	}
}
