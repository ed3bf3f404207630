package bench

import "time"

// FlowOptions are fio's flow control (flow.c): jobs that share a FlowID
// keep the I/Os each has issued in proportion to their Flow weights; a job
// ahead of its share waits, FlowSleep at a time, until the others catch
// up. A job with Flow 0 is in no flow.
type FlowOptions struct {
	FlowID    int           `json:"flow_id,omitempty"`
	Flow      int           `json:"flow,omitempty"`          // the job's weight, 0 to MaxFlowWeight
	FlowSleep time.Duration `json:"flow_sleep_ns,omitempty"` // µs in fio; 0: try again at once
}

// MaxFlowWeight is fio's FLOW_MAX_WEIGHT.
const MaxFlowWeight = 1000
