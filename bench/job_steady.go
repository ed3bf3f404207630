package bench

import "time"

// SteadyOptions are the job options that end a job on what it measures:
// fio's steady-state detection (ss, ss_dur, ss_ramp; steadystate.c) and
// its latency target, the search for the deepest queue that meets a
// latency (latency_target, latency_window, latency_percentile,
// latency_run; io_u.c lat_target_*).
type SteadyOptions struct {
	// SSMetric is what steady state watches: SteadyIOPS or SteadyBW; ""
	// with SSDur 0 is off.
	SSMetric string `json:"ss_metric,omitempty"`
	// SSSlope judges the slope of a least-squares line through the
	// window (iops_slope, bw_slope) instead of the largest deviation
	// from its mean (iops, bw).
	SSSlope bool `json:"ss_slope,omitempty"`
	// SSLimit is the criterion's limit: a percentage of the window's
	// mean when SSPct, else IOPS or bytes/s (per second, for a slope).
	SSLimit float64 `json:"ss_limit,omitempty"`
	SSPct   bool    `json:"ss_pct,omitempty"`
	// SSDur is the window, in whole seconds (one sample a second); 0 is
	// off.
	SSDur time.Duration `json:"ss_dur_ns,omitempty"`
	// SSRamp delays the first sample: data is collected from one second
	// after it.
	SSRamp time.Duration `json:"ss_ramp_ns,omitempty"`

	// LatencyTarget is the latency (lat: creation to completion) that
	// LatencyPercentile % of the I/Os of each LatencyWindow must meet;
	// 0 is off. The job then searches for the deepest queue, up to
	// iodepth, that meets it, runs one more window there, and ends —
	// unless LatencyRun, which keeps adjusting for the whole run.
	LatencyTarget     time.Duration `json:"latency_target_ns,omitempty"`
	LatencyWindow     time.Duration `json:"latency_window_ns,omitempty"`
	LatencyPercentile float64       `json:"latency_percentile,omitempty"` // default 100
	LatencyRun        bool          `json:"latency_run,omitempty"`
}

// The metrics steady state watches.
const (
	SteadyIOPS = "iops"
	SteadyBW   = "bw"
)

// Steady reports whether the job ends on steady state.
func (s *SteadyOptions) Steady() bool { return s.SSDur > 0 }

// SteadyName is the criterion as fio names it: iops, iops_slope, bw or
// bw_slope.
func (s *SteadyOptions) SteadyName() string {
	m := s.SSMetric
	if m == "" {
		m = SteadyIOPS
	}
	if s.SSSlope {
		return m + "_slope"
	}
	return m
}

// Percentile is LatencyPercentile, with fio's 100 for a job stored before
// the option existed.
func (s *SteadyOptions) Percentile() float64 {
	if s.LatencyPercentile <= 0 {
		return 100
	}
	return s.LatencyPercentile
}

// defaultSteady is fio's defaults: ss=iops_slope:0.01%, off until ss_dur
// is set; latency_percentile=100.
func defaultSteady() SteadyOptions {
	return SteadyOptions{SSMetric: SteadyIOPS, SSSlope: true, SSLimit: 0.01, SSPct: true, LatencyPercentile: 100}
}
