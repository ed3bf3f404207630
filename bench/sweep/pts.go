package sweep

import (
	"fmt"
	"time"

	"iolab/bench"
	"iolab/bench/pts"
)

// Prep is what was done to a plan's targets before a step, recorded with
// the step: a PTS run's purge and workload-independent preconditioning,
// before its first round.
type Prep struct {
	// Device is the block device prepared.
	Device string `json:"device"`
	// Purge is the way the device was emptied (system.PurgeSecure, …;
	// "none" when the run asked for none); PurgeSkipped why ways tried
	// before it were not taken; PurgeTime how long it took.
	Purge        string        `json:"purge"`
	PurgeSkipped []string      `json:"purge_skipped,omitempty"`
	PurgeTime    time.Duration `json:"purge_ns,omitempty"`
	// WIPC is workload-independent preconditioning: WIPCLoops times the
	// active range written with 128 KiB sequential writes, WIPCBytes in
	// WIPCTime (0 loops: none).
	WIPCLoops int           `json:"wipc_loops"`
	WIPCBytes uint64        `json:"wipc_bytes,omitempty"`
	WIPCTime  time.Duration `json:"wipc_ns,omitempty"`
	// ActiveRange is the bytes of the device the test uses, from its
	// start; Capacity the device's size.
	ActiveRange int64 `json:"active_range"`
	Capacity    int64 `json:"capacity"`
}

// WIPCBandwidth is the preconditioning's bytes a second; 0 when it wrote
// nothing.
func (p *Prep) WIPCBandwidth() float64 { return bench.PerSecond(p.WIPCBytes, p.WIPCTime) }

// ptsTest is the plan's PTS test; nil when the plan is not a PTS test.
func (p *Plan) ptsTest() *pts.Test {
	if p.PTS == nil {
		return nil
	}
	t, err := pts.Lookup(p.PTS.Test)
	if err != nil {
		return nil
	}
	return t
}

// PTSSeries is each tracking variable's value per round of a PTS plan's
// results, the rounds whose tracking elements all measured: series[k][r]
// for variable k at round r. It stops at the first round missing one (a
// failed step carries no figures; a cancelled run's last round is cut
// short).
func (p *Plan) PTSSeries(results []StepResult) [][]float64 {
	t := p.ptsTest()
	if t == nil {
		return nil
	}
	tracking := p.PTS.Tracking(t)
	byRound := map[int][]float64{}
	for i := range results {
		r := &results[i]
		if r.Status != StepDone || r.Result == nil {
			continue
		}
		vals := axisMap(r.Step.Axes)
		for k, tr := range tracking {
			if !tr.Matches(vals) {
				continue
			}
			v, ok := StepFigures(r.Result).Metric(tr.Metric)
			if !ok {
				continue
			}
			row := byRound[r.Step.Repeat]
			if row == nil {
				row = make([]float64, len(tracking))
				byRound[r.Step.Repeat] = row
			}
			row[k] = v
		}
	}
	series := make([][]float64, len(tracking))
	for round := 0; ; round++ {
		row, ok := byRound[round]
		if !ok {
			break
		}
		complete := true
		for _, v := range row {
			complete = complete && v > 0
		}
		if !complete {
			break
		}
		for k, v := range row {
			series[k] = append(series[k], v)
		}
	}
	return series
}

// axisMap is a step's axis values by axis name (a PTS test's axes are
// fio options).
func axisMap(avs []AxisValue) map[string]string {
	m := make(map[string]string, len(avs))
	for _, av := range avs {
		m[string(av.Axis)] = av.Value
	}
	return m
}

// StepFigures are a step's jobs' figures together, as a PTS tracking
// variable reads them.
func StepFigures(res *bench.Result) pts.Figures {
	var f pts.Figures
	for _, g := range res.Groups {
		for k := range g.Jobs {
			j := &g.Jobs[k]
			var jf pts.Figures
			for d := range 2 {
				jf.IOPS[d], jf.BW[d] = j.IOPS(d), j.BW(d)
				jf.LatN[d], jf.LatMean[d] = j.Dirs[d].Lat.Stat.N, j.Dirs[d].Lat.Stat.Mean
			}
			f.Add(jf)
		}
	}
	return f
}

// PTSWritten is the bytes a PTS plan's rounds have written so far.
func PTSWritten(results []StepResult) uint64 {
	var n uint64
	for i := range results {
		r := &results[i]
		if r.Result == nil {
			continue
		}
		for _, g := range r.Result.Groups {
			for k := range g.Jobs {
				n += g.Jobs[k].Dirs[bench.Write].Bytes
			}
		}
	}
	return n
}

// ptsNextRound is round r (0-based) of a PTS plan, numbered from seq on,
// or nil when the test is over: steady state reached by the
// specification's rule, its rounds run out, a round's tracking element
// without a figure, or (WSAT) the writes at WSAT × the capacity.
func (p *Plan) ptsNextRound(results []StepResult, r, seq int) ([]Step, error) {
	t := p.ptsTest()
	if t == nil || r >= p.PTS.Rounds() {
		return nil, nil
	}
	if t.Saturate {
		var capacity int64
		if len(results) > 0 && results[0].Prep != nil {
			capacity = results[0].Prep.ActiveRange
		}
		if capacity <= 0 || float64(PTSWritten(results)) >= p.PTS.WSATTimes()*float64(capacity) {
			return nil, nil
		}
		for i := range results {
			if results[i].Status != StepDone {
				return nil, nil
			}
		}
	} else {
		series := p.PTSSeries(results)
		if len(series) == 0 || len(series[0]) < r {
			return nil, nil // a round without its tracking figure
		}
		if pts.Assess(series).Reached {
			return nil, nil
		}
	}
	var steps []Step
	for _, c := range p.combos() {
		st, err := p.step(seq+len(steps), r, c)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// PTSOutcome is the steady-state rule over a PTS plan's results (the
// zero Outcome for a WSAT plan or another plan).
func (p *Plan) PTSOutcome(results []StepResult) pts.Outcome {
	t := p.ptsTest()
	if t == nil || t.Saturate {
		return pts.Outcome{}
	}
	return pts.Assess(p.PTSSeries(results))
}

// ptsCheck refuses a PTS plan that cannot be one: a spec the test
// refuses, other than one job, or a target that is not one block device.
func (p *Plan) ptsCheck() error {
	if err := p.PTS.Check(); err != nil {
		return &bench.OptionError{Option: "pts", Msg: err.Error()}
	}
	if len(p.Base.Jobs) != 1 {
		return &bench.OptionError{Option: "pts", Msg: fmt.Sprintf("a PTS test runs one job, not %d", len(p.Base.Jobs))}
	}
	return nil
}
