package chart

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// withPhases passes the option through and adds the phases to the first
// series alone: the result is what decoding the whole option, adding
// markArea to its first series and encoding it again gives.
func TestWithPhasesTouchesTheFirstSeriesOnly(t *testing.T) {
	// The second has a markArea already: it takes the slow way.
	for _, raw := range []json.RawMessage{
		json.RawMessage(`{"title":{"text":"a \"series\":[{ \u003cb\u003e \u0026 c"},"xAxis":[{"type":"value","min":-1.5}],` +
			`"series":[{"name":"j1","type":"line","data":[[0,1.25],[0.5,1e-7],[1,123456789]]},{"name":"j2","data":[[0,2]]}]}`),
		json.RawMessage(`{"title":{"text":"a \u003cb\u003e"},"series":[{"name":"j1","data":[[0,1]]},{"name":"j2","markArea":{"data":[]}}]}`),
	} {
		checkWithPhases(t, raw)
	}
}

func checkWithPhases(t *testing.T, raw json.RawMessage) {
	t.Helper()
	phases := []phase{{name: "discard", from: -1.5, to: 0}, {name: "measure", from: 0, to: 1}, {name: "ramp", from: 1, to: 2}}
	got, err := withPhases(raw, phases, true)
	if err != nil {
		t.Fatal(err)
	}
	var want, have map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	want["series"].([]any)[0].(map[string]any)["markArea"] = map[string]any{"silent": true,
		"label": map[string]any{"position": "insideBottom", "color": "#555", "fontSize": 11.0},
		"data": []any{
			[]any{map[string]any{"xAxis": -1.5, "name": "discard", "itemStyle": map[string]any{"color": phaseColors["discard"]}}, map[string]any{"xAxis": 0.0}},
			[]any{map[string]any{"xAxis": 1.0, "name": "ramp", "itemStyle": map[string]any{"color": phaseColors["ramp"]}}, map[string]any{"xAxis": 2.0}},
		}}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("got %s", got)
	}
	if strings.Contains(string(got), "<b>") {
		t.Errorf("markup left unescaped in %s", got)
	}
	// No phases to shade: the option as it was.
	if got, err := withPhases(raw, nil, true); err != nil || string(got) != string(raw) {
		t.Errorf("without phases: %s, %v", got, err)
	}
}

// marks are a timeline's shaded phases and step lines, as its first
// series carries them.
type marks struct {
	Areas []struct {
		Name  string
		From  float64
		To    float64
		Color string
	}
	Steps []struct {
		At    float64
		Label string
	}
}

func marksOf(t *testing.T, raw json.RawMessage) marks {
	t.Helper()
	var doc struct {
		Series []struct {
			MarkArea struct {
				Data [][2]struct {
					Name      string  `json:"name"`
					XAxis     float64 `json:"xAxis"`
					ItemStyle struct {
						Color string `json:"color"`
					} `json:"itemStyle"`
				} `json:"data"`
			} `json:"markArea"`
			MarkLine struct {
				Data []struct {
					XAxis float64 `json:"xAxis"`
					Label struct {
						Formatter string `json:"formatter"`
					} `json:"label"`
				} `json:"data"`
			} `json:"markLine"`
		} `json:"series"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Series) == 0 {
		t.Fatalf("option: %v", err)
	}
	var m marks
	for _, a := range doc.Series[0].MarkArea.Data {
		m.Areas = append(m.Areas, struct {
			Name     string
			From, To float64
			Color    string
		}{a[0].Name, a[0].XAxis, a[1].XAxis, a[0].ItemStyle.Color})
	}
	for _, l := range doc.Series[0].MarkLine.Data {
		m.Steps = append(m.Steps, struct {
			At    float64
			Label string
		}{l.XAxis, l.Label.Formatter})
	}
	return m
}

// A scheduler sweep of 2 repeats with a 1 s ramp_time and a discard
// before each step, read as the dashboard reads it (the ramp in the
// step's config, not in its results' jobs): on both timelines each step's
// 0.5 s discard and 1 s ramp are shaded and named apart, and each
// measured window is labelled with its scheduler and repeat where it
// begins.
func TestTimelineStepsRampAndLabels(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Discard = true
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const discard, ramp, runtime = 500 * time.Millisecond, time.Second, 2 * time.Second
	every := discard + ramp + runtime + time.Second // a second between steps
	steps := sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		start := t0.Add(time.Duration(s.Seq) * every)
		r := testJob("r", runtime, testLoad{ios: 2000, bs: 4096, lat: 100 * time.Microsecond}, testLoad{})
		r.Start = start.Add(discard + ramp)
		r.Samples = []bench.Sample{
			{At: time.Second, IOs: bench.DirCounts{1000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 100000, P99: 150000, Max: 300000}},
			{At: 2 * time.Second, IOs: bench.DirCounts{2000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 100000, P99: 150000, Max: 300000}},
		}
		res := sweeptest.Done(r)
		res.Start = start
		return res
	})
	for i := range steps {
		steps[i].Step.Config.Groups = []bench.Group{{Jobs: []bench.Job{{Name: "r", RampTime: ramp}}}}
	}
	run := testRun(5, plan, steps)
	labels := []string{"scheduler=none", "scheduler=none #2", "scheduler=bfq", "scheduler=bfq #2"}
	for _, kind := range []Kind{Timeline, LatencyTimeline} {
		m := marksOf(t, mustBuild(t, Query{Kind: kind}, run).Option)
		if len(m.Areas) != 8 || len(m.Steps) != 4 {
			t.Fatalf("%s: %d areas, %d step lines, want 8 and 4: %+v", kind, len(m.Areas), len(m.Steps), m)
		}
		for i := range 4 {
			at := (time.Duration(i)*every + discard + ramp).Seconds()
			d, r, s := m.Areas[2*i], m.Areas[2*i+1], m.Steps[i]
			if d.Name != "discard" || d.From != at-1.5 || d.To != at-1 || d.Color != phaseColors["discard"] {
				t.Errorf("%s: step %d: discard %+v, want %v to %v", kind, i+1, d, at-1.5, at-1)
			}
			if r.Name != "ramp" || r.From != at-1 || r.To != at || r.Color != phaseColors["ramp"] || r.Color == d.Color {
				t.Errorf("%s: step %d: ramp %+v, want %v to %v in its own colour", kind, i+1, r, at-1, at)
			}
			if s.At != at || s.Label != labels[i] {
				t.Errorf("%s: step %d: line %+v, want %q at %v", kind, i+1, s, labels[i], at)
			}
		}
	}
	// One step alone: its measurement at 0, after its ramp.
	m := marksOf(t, mustBuild(t, Query{Kind: Timeline, Step: 4}, run).Option)
	if len(m.Areas) != 2 || m.Areas[1].Name != "ramp" || m.Areas[1].From != -1 || m.Areas[1].To != 0 ||
		len(m.Steps) != 1 || m.Steps[0].At != 0 || m.Steps[0].Label != "scheduler=bfq #2" {
		t.Errorf("step 4 alone: %+v", m)
	}
}

// A long run labels each step's first repeat alone: 30 steps, 10 values
// of 3 repeats, give 10 labels.
func TestStepMarksThin(t *testing.T) {
	var phases []phase
	for i := range 30 {
		label := "iodepth=" + strconv.Itoa(i/3)
		if i%3 > 0 {
			label += " #" + strconv.Itoa(i%3+1)
		}
		phases = append(phases, phase{name: "ramp", from: float64(i), to: float64(i) + 0.5},
			phase{name: "measure", from: float64(i) + 0.5, to: float64(i + 1), label: label})
	}
	marks := stepMarks(phases)
	if len(marks) != 10 {
		t.Fatalf("%d marks, want 10: %v", len(marks), marks)
	}
	for k, m := range marks {
		if got := m.(map[string]any)["label"].(map[string]any)["formatter"]; got != "iodepth="+strconv.Itoa(k) {
			t.Errorf("mark %d: %v", k, got)
		}
	}
	if got := stepMarks(phases[:20]); len(got) != 10 { // 10 steps: each its own label
		t.Errorf("10 steps: %d marks", len(got))
	}
}
