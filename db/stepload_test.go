package db

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// storeLoadTestRun stores a run whose steps repeat configs (testStep's
// repeat every 4 steps) and the host, with all histograms, samples, a
// two-group step and a failed one.
func storeLoadTestRun(t *testing.T) (*Store, int64) {
	t.Helper()
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for seq := range 9 {
		st := testStep(rng, seq, 500, 5, seq == 5)
		if seq == 2 {
			st = failedStep(seq)
		}
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
	}
	return s, id
}

func TestStepsForLoadsWhatItIsAsked(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	all, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.StepsFor(ctx, id, LoadAll()); err != nil || !reflect.DeepEqual(got, all) {
		t.Fatalf("StepsFor(LoadAll()) differs from Steps (%v)", err)
	}

	// want is the steps read whole with what load leaves out emptied.
	want := func(hists Hists, samples func(seq int) bool, jobs bool) []sweep.StepResult {
		out, err := s.Steps(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i].Result == nil {
				continue
			}
			for _, g := range out[i].Result.Groups {
				for k := range g.Jobs {
					jr := &g.Jobs[k]
					if !jobs {
						jr.Job = bench.Job{}
					}
					if !samples(out[i].Step.Seq) {
						jr.Samples = nil
					}
					for d := range jr.Dirs {
						for b, l := range []*hist.Lat{&jr.Dirs[d].Slat, &jr.Dirs[d].Clat, &jr.Dirs[d].Lat} {
							if hists&(1<<b) == 0 {
								l.Hist = hist.Histogram{}
							}
						}
					}
				}
			}
		}
		return out
	}
	never := func(int) bool { return false }
	for _, tc := range []struct {
		name    string
		load    StepLoad
		hists   Hists
		samples func(seq int) bool
		jobs    bool
	}{
		{"nothing", StepLoad{}, 0, never, false},
		{"clat", StepLoad{Hists: ClatHist}, ClatHist, never, false},
		{"slat and lat, jobs", StepLoad{Hists: SlatHist | LatHist, Jobs: true}, SlatHist | LatHist, never, true},
		{"samples of two steps", StepLoad{Hists: ClatHist, Samples: func(st *sweep.StepResult) bool { return st.Step.Seq == 3 || st.Step.Seq == 5 }},
			ClatHist, func(seq int) bool { return seq == 3 || seq == 5 }, false},
		{"every sample", StepLoad{Samples: EverySample}, 0, func(int) bool { return true }, false},
	} {
		got, err := s.StepsFor(ctx, id, tc.load)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w := want(tc.hists, tc.samples, tc.jobs)
		if len(got) != len(w) {
			t.Fatalf("%s: %d steps, want %d", tc.name, len(got), len(w))
		}
		for i := range w {
			if !reflect.DeepEqual(got[i], w[i]) {
				t.Errorf("%s: step %d differs:\n got %s\nwant %s", tc.name, i, describeStep(got[i]), describeStep(w[i]))
			}
		}
	}
}

// Samples sees every step once, in order, with its results read, so that
// it can pick the first done step.
func TestStepsForSamplesSeesReadSteps(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	var seen []int
	var ios []uint64
	got, err := s.StepsFor(ctx, id, StepLoad{Samples: func(st *sweep.StepResult) bool {
		seen = append(seen, st.Step.Seq)
		if st.Result != nil {
			ios = append(ios, st.Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs)
		}
		return st.Status == sweep.StepDone && st.Step.Seq > 2
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("Samples saw steps %v", seen)
	}
	if len(ios) != 8 || slices.Contains(ios, 0) {
		t.Errorf("Samples saw results with read I/Os %v", ios)
	}
	for _, st := range got {
		if st.Result == nil {
			continue
		}
		if n := len(st.Result.Groups[0].Jobs[0].Samples); (n > 0) != (st.Step.Seq > 2) {
			t.Errorf("step %d: %d samples", st.Step.Seq, n)
		}
	}
}

// Steps whose stored JSON is the same text share nothing once read:
// changing one step's config, host or job leaves the others alone.
func TestStepsShareNoMemory(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	got, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	a, b := &got[0], &got[4] // testStep repeats every 4 steps
	if !reflect.DeepEqual(a.Step.Config, b.Step.Config) || !reflect.DeepEqual(a.Result.Host, b.Result.Host) {
		t.Fatal("steps 0 and 4 do not repeat the config and host")
	}
	before := string(mustJSON(t, b))
	cfg := &a.Step.Config
	cfg.Groups[0].Jobs[0].Name = "changed"
	cfg.Groups[0].Jobs[0].PercentileList[0] = -1
	cfg.Groups[0].Jobs[0].CPUsAllowed[0] = 99
	cfg.Groups[0].Jobs[0].Options[0].Value = "changed"
	a.Step.Axes[0].Value = "changed"
	a.Schedulers["nvme0n1"] = "changed"
	a.Result.Host.IOMMU.CmdlineFlags[0] = "changed"
	a.Result.Host.IOMMU.GroupTypes["identity"] = -1
	a.Result.Groups[0].Jobs[0].Job.Options[0].Value = "changed"
	a.Result.Groups[0].Jobs[0].Job.PercentileList[0] = -1
	if after := string(mustJSON(t, b)); after != before {
		t.Error("changing step 0 changed step 4")
	}
}

func TestDeepCopy(t *testing.T) {
	type inner struct {
		S  []int
		M  map[string][]string
		P  *int
		A  [2][]byte
		AS [3]int
	}
	type outer struct {
		Name  string
		T     time.Time
		In    inner
		Ins   []inner
		PIn   *inner
		Any   any
		Nil   []int
		Empty []int
		NilM  map[string]int
		hide  []int
	}
	seven := 7
	src := outer{Name: "x", T: at(5), In: inner{S: []int{1, 2}, M: map[string][]string{"a": {"b"}}, P: &seven, A: [2][]byte{{1}, {2}}, AS: [3]int{1, 2, 3}},
		Ins: []inner{{S: []int{3}}}, PIn: &inner{S: []int{4}}, Any: map[string]any{"k": []any{1.0, "s"}}, Empty: []int{}, hide: []int{9}}
	var dst outer
	deepCopy(reflect.ValueOf(&dst).Elem(), reflect.ValueOf(src))
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("copy %+v, want %+v", dst, src)
	}
	if dst.Empty == nil || dst.Nil != nil || dst.NilM != nil {
		t.Error("nil and empty slices or maps not kept apart")
	}
	dst.In.S[0], dst.In.M["a"][0], *dst.In.P, dst.In.A[0][0] = -1, "changed", -1, 9
	dst.Ins[0].S[0], dst.PIn.S[0] = -1, -1
	dst.Any.(map[string]any)["k"].([]any)[1] = "changed"
	if src.In.S[0] != 1 || src.In.M["a"][0] != "b" || seven != 7 || src.In.A[0][0] != 1 || src.Ins[0].S[0] != 3 ||
		src.PIn.S[0] != 4 || src.Any.(map[string]any)["k"].([]any)[1] != "s" {
		t.Errorf("changing the copy changed the original: %+v", src)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
