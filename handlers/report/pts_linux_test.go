package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/testdev"
	"iolab/db"
)

// TestPTSReport runs scaled PTS tests on a loop device as `iolab pts`
// does (launch.Prepare, Execute into the store), writes their reports,
// and checks that each has the PTS sections, and that its measurement
// tables agree to the digit with the stored steps: each cell recomputed
// from the job results the store reads back (StepsFor), the window from
// sweep's own rule.
func TestPTSReport(t *testing.T) {
	dev := testdev.LoopInMemory(t, 32<<20)
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "pts.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	round := 300 * time.Millisecond
	for _, tc := range []struct {
		spec   pts.Spec
		tables []string
	}{
		{pts.Spec{Test: "iops", MaxRounds: 5, RoundTime: round, Size: 16 << 20, WIPCLoops: 1,
			Axes: []pts.Axis{{Option: "rwmixread", Values: []string{"100", "0"}}, {Option: "bs", Values: []string{"64k", "4k"}}}},
			[]string{"pts-steady", "pts-rounds", "pts-iops"}},
		{pts.Spec{Test: "latency", MaxRounds: 5, RoundTime: round, Size: 16 << 20, WIPCLoops: -1,
			Axes: []pts.Axis{{Option: "rwmixread", Values: []string{"100", "0"}}, {Option: "bs", Values: []string{"4k", "512"}}}},
			[]string{"pts-steady", "pts-rounds", "pts-latency"}},
		{pts.Spec{Test: "wsat", RoundTime: 100 * time.Millisecond, Size: 8 << 20, WIPCLoops: -1, WSAT: 6},
			[]string{"pts-wsat"}},
	} {
		t.Run(tc.spec.Test, func(t *testing.T) {
			spec := tc.spec
			runner := &bench.Runner{Sys: system.FS{}}
			prep, err := launch.Prepare(launch.Spec{Args: []string{"--filename=" + dev}, PTS: &spec}, runner,
				launch.Options{Check: launch.CheckTargets, Tags: []string{"pts"}})
			if err != nil {
				t.Fatal(err)
			}
			id, err := store.CreateRun(ctx, prep.Record)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := launch.Execute(ctx, store, runner, id, prep, launch.Hooks{}); err != nil {
				t.Fatal(err)
			}
			rep, err := Build(ctx, store, []int64{id}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			v := rep.Runs[0].PTS
			if v == nil {
				t.Fatal("no PTS part in the report of a PTS run")
			}
			var html bytes.Buffer
			if err := rep.WriteHTML(&html); err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(rep.Charts))
			for i := range names {
				names[i] = fmt.Sprintf("chart-%d", i)
			}
			md := rep.Markdown(names, false)
			for _, id := range tc.tables {
				if !strings.Contains(html.String(), `data-table="`+id+`"`) {
					t.Errorf("the HTML has no table %s", id)
				}
			}
			for _, field := range []string{"device", "model", "serial", "capacity", "kernel", "outstanding I/O", "round time", "active range", "purge", "preconditioning", "rounds"} {
				if !slices.ContainsFunc(v.Header, func(f PTSField) bool { return f.Name == field && f.Value != "" }) {
					t.Errorf("the header has no %s: %+v", field, v.Header)
				}
				if !strings.Contains(md, "| "+field+" | ") {
					t.Errorf("the Markdown header has no %s", field)
				}
			}
			if !strings.Contains(md, "Scaled down from the specification") || !strings.Contains(html.String(), "each element ran "+spec.Round().String()+" a round") {
				t.Error("the report does not say what was scaled down")
			}
			for _, c := range rep.Charts {
				if strings.HasPrefix(c.Kind, "pts-") && c.Error != "" {
					t.Errorf("chart %s: %s", c.Kind, c.Error)
				}
			}
			kinds := map[string][]string{"iops": {"pts-convergence", "pts-window", "pts-matrix"},
				"latency": {"pts-convergence", "pts-window"}, "wsat": {"pts-wsat"}}[spec.Test]
			for i, k := range kinds {
				if i >= len(rep.Charts) || rep.Charts[i].Kind != k || !strings.Contains(html.String(), `data-kind="`+k+`"`) {
					t.Errorf("the report's chart %d is not %s, the test's plots first", i+1, k)
				}
			}
			steps, err := store.StepsFor(ctx, id, db.LoadAll())
			if err != nil {
				t.Fatal(err)
			}
			run, err := store.GetRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want := ptsTablesOf(t, &run.Plan, steps)
			for _, tid := range tc.tables[len(tc.tables)-1:] {
				i := slices.IndexFunc(v.Tables, func(t PTSTable) bool { return t.ID == tid })
				if i < 0 {
					t.Fatalf("no table %s", tid)
				}
				got := v.Tables[i]
				if !slices.EqualFunc(got.Rows, want[tid], slices.Equal) {
					t.Errorf("table %s:\n got %q\nwant %q", tid, got.Rows, want[tid])
				}
				for _, row := range got.Rows {
					if line := "| " + strings.Join(row, " | ") + " |"; !strings.Contains(md, line) {
						t.Errorf("the Markdown lacks the row %s", line)
					}
				}
				// The bundle's CSV of the table, read back.
				dir := t.TempDir()
				if _, err := rep.WriteBundle(ctx, dir, BundleOptions{Chromium: "no-such-chromium"}); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(filepath.Join(dir, fmt.Sprintf("run-%d-%s.csv", id, tid)))
				if err != nil {
					t.Fatal(err)
				}
				records, err := csv.NewReader(f).ReadAll()
				f.Close()
				if err != nil || len(records) == 0 || !slices.Equal(records[0], got.Head) || !slices.EqualFunc(records[1:], want[tid], slices.Equal) {
					t.Errorf("the bundle's %s CSV %q (%v), want %q then %q", tid, records, err, got.Head, want[tid])
				}
			}
			if spec.Test != "wsat" {
				o := run.Plan.PTSOutcome(steps)
				if !strings.Contains(v.Steady, "reached") || o.Reached != !strings.HasPrefix(v.Steady, "not") {
					t.Errorf("steady state %q, sweep's outcome reached=%v", v.Steady, o.Reached)
				}
			}
		})
	}
}

// ptsTablesOf recomputes the last table of each test from the stored job
// results: the window is sweep's (Plan.PTSOutcome), each element's
// figures its jobs' added up and their lat histograms merged.
func ptsTablesOf(t *testing.T, plan *sweep.Plan, steps []sweep.StepResult) map[string][][]string {
	type figs struct{ iops, bw, mean, p4, p5, max float64 }
	of := func(res *bench.Result) figs {
		var f figs
		var lat hist.Lat
		for _, g := range res.Groups {
			for k := range g.Jobs {
				j := &g.Jobs[k]
				for d := range 2 {
					f.iops += j.IOPS(d)
					f.bw += j.BW(d)
					lat.Merge(&j.Dirs[d].Lat)
				}
			}
		}
		p := lat.Hist.Percentiles([]float64{99.99, 99.999})
		return figs{f.iops, f.bw, lat.Stat.Mean, float64(p[0]), float64(p[1]), float64(lat.Stat.Max)}
	}
	key := func(st *sweep.Step) string {
		var parts []string
		for _, av := range st.Axes {
			parts = append(parts, string(av.Axis)+"="+av.Value)
		}
		return strings.Join(parts, " ")
	}
	out := map[string][][]string{}
	if plan.PTS.Test == "wsat" {
		var written uint64
		start := steps[0].Start
		for i := range steps {
			written += sweep.PTSWritten(steps[i : i+1])
			f := of(steps[i].Result)
			out["pts-wsat"] = append(out["pts-wsat"], []string{strconv.Itoa(i + 1), strconv.FormatFloat(steps[i].End.Sub(start).Seconds(), 'f', 1, 64),
				strconv.FormatFloat(float64(written)/(1<<30), 'f', 3, 64), strconv.FormatFloat(f.iops, 'f', 0, 64)})
		}
		return out
	}
	o := plan.PTSOutcome(steps)
	first, last := o.Windows[0].First, o.Windows[0].First+len(o.Windows[0].Values)-1
	window := map[string]figs{}
	for i := range steps {
		if steps[i].Step.Repeat < first || steps[i].Step.Repeat > last {
			continue
		}
		f, w := of(steps[i].Result), window[key(&steps[i].Step)]
		window[key(&steps[i].Step)] = figs{w.iops + f.iops, w.bw + f.bw, w.mean + f.mean, w.p4 + f.p4, w.p5 + f.p5, max(w.max, f.max)}
	}
	if last-first+1 != pts.WindowRounds {
		t.Fatalf("window %d–%d", first, last)
	}
	for k, w := range window { // the sums over the window, averaged
		n := float64(pts.WindowRounds)
		window[k] = figs{w.iops / n, w.bw / n, w.mean / n, w.p4 / n, w.p5 / n, w.max}
	}
	us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }
	switch plan.PTS.Test {
	case "iops":
		for _, bs := range []string{"64k", "4k"} {
			row := []string{bs}
			for _, mix := range []string{"100", "0"} {
				row = append(row, strconv.FormatFloat(window["rwmixread="+mix+" bs="+bs].iops, 'f', 0, 64))
			}
			out["pts-iops"] = append(out["pts-iops"], row)
		}
	case "latency":
		for _, mix := range []string{"100", "0"} {
			for _, bs := range []string{"4k", "512"} {
				w := window["rwmixread="+mix+" bs="+bs]
				n, _ := strconv.Atoi(mix)
				out["pts-latency"] = append(out["pts-latency"], []string{fmt.Sprintf("%d/%d", n, 100-n), bs,
					strconv.FormatFloat(w.iops, 'f', 0, 64), us(w.mean), us(w.max), us(w.p4), us(w.p5)})
			}
		}
	}
	return out
}
