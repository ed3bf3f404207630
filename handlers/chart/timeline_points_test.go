package chart

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// points writes what encoding/json writes of the items it stands for,
// byte for byte, whatever the numbers.
func TestPointsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	odd := []float64{0, math.Copysign(0, -1), 1e-7, -3.5e-9, 1e-6, 999999999999999999999, 1e21, 1.5e300, 0.1, 123456.789, -42, 1 << 53}
	var p points
	var items []item
	if got, _ := json.Marshal(&p); string(got) != "null" {
		t.Fatalf("no points: %s, want null as a nil []item", got)
	}
	for step := 1; step <= 30; step++ {
		for range rng.IntN(4) {
			x, y := rng.Float64()*1e4, rng.ExpFloat64()*1e5
			if rng.IntN(3) == 0 {
				x, y = odd[rng.IntN(len(odd))], odd[rng.IntN(len(odd))]
			}
			p.add(step, x, y)
			items = append(items, item{Name: "step " + itoa(step), Value: []float64{x, y}})
		}
		p.gap()
		if n := len(items); n > 0 && items[n-1].Value != missing {
			items = append(items, item{Value: missing})
		}
	}
	got, err := json.Marshal(map[string]any{"data": &p})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]any{"data": items})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("points:\n%s\nwant\n%s", got, want)
	}
	p.add(31, math.NaN(), 1)
	if _, err := json.Marshal(&p); err == nil {
		t.Fatal("a NaN point: no error, want one as encoding/json gives")
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A run whose host is named like a series' placeholder still gets its
// points: the option is encoded whole then.
func TestTimelinePlaceholderInName(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	steps := sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		a := testJob("a", time.Second, testLoad{ios: 600, bs: 4096}, testLoad{})
		a.Samples = []bench.Sample{{At: 500 * time.Millisecond, IOs: bench.DirCounts{100, 0}}, {At: time.Second, IOs: bench.DirCounts{600, 0}}}
		return sweeptest.Done(a)
	})
	for _, name := range []string{"plain", (&points{}).placeholder(0)} {
		run := testRun(4, plan, steps)
		run.Run.Hostname = name
		c := mustBuild(t, Query{Kind: Timeline}, run)
		doc := checkOption(t, c)
		if got := seriesValues(doc, 0); len(got) != 6 || !reflect.DeepEqual(got[1], []any{1.0, 1000.0}) || got[2] != missing {
			t.Errorf("host %q: points %v, want two steps of two, each ending in a gap", name, got)
		}
		if !strings.Contains(doc.Title.Subtext, name) {
			t.Errorf("host %q: subtitle %q", name, doc.Title.Subtext)
		}
	}
}

// Draw draws what Build does, without the table.
func TestDrawIsBuildWithoutTable(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4"))
	run := testRun(4, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		a := testJob("a", time.Second, testLoad{ios: 600, bs: 4096}, testLoad{ios: 60, bs: 4096})
		a.Samples = []bench.Sample{{At: 500 * time.Millisecond, IOs: bench.DirCounts{100, 10}}, {At: time.Second, IOs: bench.DirCounts{600, 60}}}
		return sweeptest.Done(a)
	}))
	for _, k := range Kinds() {
		q := Query{Kind: k.Name}
		built, errB := Build(q, []LoadedRun{run})
		drawn, errD := Draw(q, []LoadedRun{run})
		if (errB == nil) != (errD == nil) {
			t.Fatalf("%s: Build %v, Draw %v", k.Name, errB, errD)
		}
		if errB != nil {
			continue
		}
		if string(built.Option) != string(drawn.Option) || built.Title != drawn.Title || !reflect.DeepEqual(built.Pickers, drawn.Pickers) {
			t.Errorf("%s: Draw's chart differs from Build's", k.Name)
		}
		if k.Name == Timeline && (len(drawn.Rows) != 0 || len(built.Rows) != 8) {
			t.Errorf("timeline: Build %d rows, Draw %d; want 8 and none", len(built.Rows), len(drawn.Rows))
		}
	}
}
