package sweep

import (
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/pts"
)

// ptsResult is a done step of round r whose one job did iops write IOPS
// (4 KiB each) over a second.
func ptsResult(p *Plan, r int, c []AxisValue, iops float64) StepResult {
	st, err := p.step(0, r, c)
	if err != nil {
		panic(err)
	}
	j := bench.JobResult{Name: "pts", Runtime: time.Second}
	j.Dirs[bench.Write].IOs = uint64(iops)
	j.Dirs[bench.Write].Bytes = uint64(iops) * 4096
	return StepResult{Step: st, Status: StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{j}}}}}
}

func ptsPlan(t *testing.T, spec pts.Spec, sweeps []Sweep) *Plan {
	t.Helper()
	p := &Plan{Repeat: 1, PTS: &spec, Sweeps: sweeps}
	cfg, err := fio.ParseArgs([]string{"--name=pts", "--filename=/dev/null", "--rw=randrw", "--bs=4k", "--runtime=1s", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	p.Base = *cfg
	return p
}

// The rounds go on until the tracking element's series is steady by the
// specification's rule, and stop there; a round whose tracking element
// failed ends the test.
func TestPTSNextRound(t *testing.T) {
	p := ptsPlan(t, pts.Spec{Test: "iops", Axes: []pts.Axis{{Option: "rwmixread", Values: []string{"100", "0"}}, {Option: "bs", Values: []string{"4k"}}}},
		nil)
	p.Sweeps = []Sweep{{Axis: "rwmixread", Values: []string{"100", "0"}}, {Axis: "bs", Values: []string{"4k"}}}
	track := []AxisValue{{"rwmixread", "0"}, {"bs", "4k"}}
	other := []AxisValue{{"rwmixread", "100"}, {"bs", "4k"}}
	// Settles from round 3 on: rounds 3…7 are [100 101 99 100 100].
	iops := []float64{400, 300, 200, 100, 101, 99, 100, 100}
	var results []StepResult
	for r, v := range iops {
		next, err := p.ptsNextRound(results, r, len(results))
		if err != nil {
			t.Fatal(err)
		}
		if r > 0 && len(next) != 2 {
			t.Fatalf("round %d: %d steps, want the matrix's 2 (not steady yet)", r, len(next))
		}
		results = append(results, ptsResult(p, r, other, 5), ptsResult(p, r, track, v))
	}
	if next, _ := p.ptsNextRound(results, len(iops), len(results)); len(next) != 0 {
		t.Fatalf("round 8 planned after a steady window (rounds 3–7)")
	}
	if o := p.PTSOutcome(results); !o.Reached || o.Round != 7 || o.Windows[0].First != 3 {
		t.Fatalf("outcome %+v, want reached at round 7 (window from round 3)", o)
	}

	// The tracking element failed in round 2: no round 3.
	failed := append([]StepResult(nil), results[:4]...)
	bad := ptsResult(p, 2, track, 0)
	bad.Status, bad.Result = StepFailed, nil
	failed = append(failed, ptsResult(p, 2, other, 5), bad)
	if next, _ := p.ptsNextRound(failed, 3, len(failed)); len(next) != 0 {
		t.Fatalf("round 3 planned after round 2's tracking element failed")
	}
	// At most MaxRounds.
	p.PTS.MaxRounds = 5
	if next, _ := p.ptsNextRound(results[:10], 5, 10); len(next) != 0 {
		t.Fatalf("round 6 planned with --rounds 5")
	}
}

// WSAT runs rounds until its writes reach WSAT × the active range.
func TestPTSWSATRounds(t *testing.T) {
	p := ptsPlan(t, pts.Spec{Test: "wsat", WSAT: 2}, nil)
	first := ptsResult(p, 0, nil, 1000) // 4,096,000 bytes
	first.Prep = &Prep{ActiveRange: 5_000_000}
	results := []StepResult{first}
	if next, _ := p.ptsNextRound(results, 1, 1); len(next) != 1 {
		t.Fatalf("round 1 not planned after 4.1 MB of 10 MB")
	}
	results = append(results, ptsResult(p, 1, nil, 1000))
	if next, _ := p.ptsNextRound(results, 2, 2); len(next) != 1 {
		t.Fatalf("round 2 not planned after 8.2 MB of 10 MB")
	}
	results = append(results, ptsResult(p, 2, nil, 1000))
	if next, _ := p.ptsNextRound(results, 3, 3); len(next) != 0 || PTSWritten(results) != 3*4_096_000 {
		t.Fatalf("round 3 planned after %d bytes of 10 MB", PTSWritten(results))
	}
}

// A PTS plan's command line is `iolab pts` again, with what the run was
// given.
func TestPTSCommand(t *testing.T) {
	p := ptsPlan(t, pts.Spec{Test: "iops", RoundTime: 2 * time.Second, Size: 64 << 20, MaxRounds: 6, WIPCLoops: -1,
		Axes: []pts.Axis{{Option: "bs", Values: []string{"4k", "64k"}}}, Args: []string{"--ioengine=io_uring"}}, nil)
	want := "iolab pts iops --filename=/dev/null --yes-destroy /dev/null --runtime=2s --size=67108864 --bs=4k,64k --rounds=6 --wipc=0 --ioengine=io_uring"
	if got := p.Command(); got != want {
		t.Errorf("command\n%s\nwant\n%s", got, want)
	}
}
