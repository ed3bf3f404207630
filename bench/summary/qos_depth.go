package summary

import (
	"strconv"

	"iolab/bench"
)

// latencyDepths widens [min, max] by the depth r's latency_target search
// ended at, when its job searched ({0, 0}: none yet), and says whether
// the search held the queue below the job's iodepth. job is the options
// the step ran the job with (nil: r's own, when it has them).
func latencyDepths(d [2]int, job *bench.Job, r *JobView) ([2]int, bool) {
	if job == nil {
		job = &r.Job
	}
	if job.LatencyTarget <= 0 || r.LatencyDepth <= 0 {
		return d, false
	}
	if d[0] == 0 || r.LatencyDepth < d[0] {
		d[0] = r.LatencyDepth
	}
	d[1] = max(d[1], r.LatencyDepth)
	return d, r.LatencyDepth < job.IODepth
}

// LatencyDepthText says where a point's latency_target search ended:
// "latency_target: depth 12", "latency_target: depth 8–12" over repeats
// that disagree; "" without a search.
func (p *QoSPoint) LatencyDepthText() string {
	if p.LatencyDepth <= 0 {
		return ""
	}
	s := "latency_target: depth " + strconv.Itoa(p.LatencyDepth)
	if p.LatencyDepthMax > p.LatencyDepth {
		s += "–" + strconv.Itoa(p.LatencyDepthMax)
	}
	return s
}
