package bench

import (
	"fmt"
	"sync/atomic"
)

// flows are a run's flows, fio 3.33's flow.c: for each flow_id, the I/Os
// its jobs have issued and the sum of their weights. fio adds a job's
// weight when it parses the job (flow_init_job, from add_job), so a flow
// counts the jobs of every group from the start, and takes a job's weight
// and I/Os away once the job has ended (flow_exit_job, when the job is
// reaped). iolab does the same for each run: newFlows sums the weights of
// all the run's jobs, and each job leaves when its loop is over.
type flows struct {
	byID map[int]*flow // read-only once made; looked up once per job
}

type flow struct {
	ios    atomic.Int64 // fio's flow_counter: 1, plus what its jobs have issued
	weight atomic.Int64 // fio's total_weight
}

func newFlows(cfg *Config) flows {
	fs := flows{byID: map[int]*flow{}}
	for _, g := range cfg.Groups {
		for i := range g.Jobs {
			j := &g.Jobs[i]
			if j.Flow <= 0 {
				continue
			}
			f := fs.byID[j.FlowID]
			if f == nil {
				f = &flow{}
				f.ios.Store(1)
				fs.byID[j.FlowID] = f
			}
			f.weight.Add(int64(j.Flow))
		}
	}
	return fs
}

// flowShare is one job's part in its flow.
type flowShare struct {
	f      *flow
	weight int64
	ios    int64 // fio's td->flow_counter
	sleep  int64 // flow_sleep, ns
}

// join is the share of job j in its flow; nil for a job in none.
func (fs flows) join(j *Job) *flowShare {
	f := fs.byID[j.FlowID]
	if j.Flow <= 0 || f == nil {
		return nil
	}
	return &flowShare{f: f, weight: int64(j.Flow), sleep: int64(j.FlowSleep)}
}

// over is the test of fio's flow_threshold_exceeded: whether the job has
// issued a larger share of its flow's I/Os than its share of the flow's
// weight. When it has not, the I/O it is about to issue is counted.
func (s *flowShare) over() bool {
	ios, weight := s.f.ios.Load(), s.f.weight.Load()
	if float64(s.ios)/float64(ios) > float64(s.weight)/float64(weight) {
		return true
	}
	s.f.ios.Add(1)
	s.ios++
	return false
}

// leave is fio's flow_exit_job: the job's I/Os and weight leave the flow.
func (s *flowShare) leave() {
	if s == nil || s.f == nil {
		return
	}
	s.f.ios.Add(-s.ios)
	s.f.weight.Add(-s.weight)
	s.f = nil
}

// checkFlows refuses what would leave a job of a flow waiting for good:
// since a flow counts every job's weight from the start, a job whose flow
// has a job that can only start once it has ended — in a later phase
// (after a stonewall), or waiting for it (wait_for) — is held back after
// its first I/Os and never catches up; fio hangs there. Such a job needs a
// runtime to end. And flow_id or flow_sleep with no job in a flow would
// do nothing.
func checkFlows(groups []Group) error {
	phase := make([]int, len(groups))
	inFlow := false
	for g := range groups {
		if g > 0 {
			phase[g] = phase[g-1]
			if groups[g].Wait {
				phase[g]++
			}
		}
		for _, j := range groups[g].Jobs {
			inFlow = inFlow || j.Flow > 0
		}
	}
	if !inFlow {
		for _, g := range groups {
			for _, j := range g.Jobs {
				if j.FlowID != 0 || j.FlowSleep != 0 {
					return &OptionError{Option: "flow", Msg: fmt.Sprintf("job %s: flow_id and flow_sleep have no effect without flow: no job of the run is in a flow (give the jobs to share out a weight, e.g. flow=1)", j.Name)}
				}
			}
		}
		return nil
	}
	for g, grp := range groups {
		for _, a := range grp.Jobs {
			if a.Flow <= 0 || a.Runtime > 0 {
				continue
			}
			for h, other := range groups {
				for _, b := range other.Jobs {
					if b.Flow <= 0 || b.FlowID != a.FlowID {
						continue
					}
					why := ""
					switch {
					case phase[h] > phase[g]:
						why = "starts after it (a stonewall lies between them)"
					case b.WaitFor == a.Name && b.Name != a.Name:
						why = "waits for it (wait_for)"
					}
					if why != "" {
						return &OptionError{Option: "flow", Msg: fmt.Sprintf("job %s: its flow (flow_id=%d) counts job %s's weight from the start, as fio's does, but %s %s: %s would be held back for good after its first I/Os (fio hangs); give %s another flow_id, run the two at once, or give %s a runtime",
							a.Name, a.FlowID, b.Name, b.Name, why, a.Name, b.Name, a.Name)}
					}
				}
			}
		}
	}
	return nil
}
