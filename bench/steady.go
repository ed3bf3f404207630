package bench

import (
	"fmt"
	"math"
	"time"
)

// SteadyResult is how a job (or a reporting group) fared against its
// steady-state criterion: fio's steadystate block (stat.c
// show_thread_status_json, fio 3.33).
type SteadyResult struct {
	Metric string  `json:"metric"` // SteadyIOPS or SteadyBW
	Slope  bool    `json:"slope"`  // the criterion is the slope, not the mean deviation
	Pct    bool    `json:"pct"`    // Limit and Criterion are % of the window's mean
	Limit  float64 `json:"limit"`
	// Dur is the window in samples, one a second.
	Dur      int  `json:"dur"`
	Attained bool `json:"attained"`
	// Full is true once the window has been filled.
	Full bool `json:"full"`
	// Criterion is the last value judged against Limit; MaxDeviation and
	// SlopeValue are the last deviation and slope (per second) computed.
	Criterion    float64 `json:"criterion"`
	MaxDeviation float64 `json:"max_deviation"`
	SlopeValue   float64 `json:"slope_value"`
	// IOPS and BW (bytes/s) are the window's samples, oldest first, as fio
	// prints them (zeros where the window was not filled).
	IOPS []uint64 `json:"iops"`
	BW   []uint64 `json:"bw"`
	// Last is when the newest sample was taken, since the job's measured
	// window began: the window covers the Dur seconds before it.
	Last time.Duration `json:"last_ns"`
}

// IOPSMean and BWMean are fio's steadystate_iops_mean and _bw_mean: the
// window's sum over its length, in integers.
func (s *SteadyResult) IOPSMean() uint64 { return meanOf(s.IOPS) }
func (s *SteadyResult) BWMean() uint64   { return meanOf(s.BW) }

func meanOf(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	var sum uint64
	for _, x := range v {
		sum += x
	}
	return sum / uint64(len(v))
}

// steadyWindow is fio 3.33's struct steadystate_data and its two tests,
// steadystate_slope and steadystate_deviation, kept in the same ring with
// the same head and tail moves, so that the data arrays come out in
// fio's order.
type steadyWindow struct {
	iops, slope, pct bool
	limit            float64
	dur              int

	head, tail int
	iopsData   []uint64
	bwData     []uint64
	full       bool
	attained   bool

	slopeV, deviation, criterion float64
	sumY, sumX, sumXSq, sumXY    uint64
	oldestY                      uint64
}

func newSteadyWindow(j *Job) *steadyWindow {
	n := int(j.SSDur / time.Second)
	w := &steadyWindow{iops: j.SSMetric != SteadyBW, slope: j.SSSlope, pct: j.SSPct, limit: j.SSLimit, dur: n,
		iopsData: make([]uint64, n), bwData: make([]uint64, n)}
	w.sumX = uint64(n * (n - 1) / 2)
	w.sumXSq = uint64((n - 1) * n * (2*n - 1) / 6)
	return w
}

func (w *steadyWindow) value(i int) uint64 {
	if w.iops {
		return w.iopsData[i]
	}
	return w.bwData[i]
}

// add records one second's IOPS and bandwidth and reports whether the
// criterion now holds.
func (w *steadyWindow) add(iops, bw uint64) bool {
	w.bwData[w.tail] = bw
	w.iopsData[w.tail] = iops
	var ok bool
	if w.slope {
		ok = w.addSlope()
	} else {
		ok = w.addDeviation()
	}
	if ok {
		w.attained = true
		return true
	}
	w.tail = (w.tail + 1) % w.dur
	if w.slope && w.tail <= w.head || !w.slope && w.tail == w.head {
		w.head = (w.head + 1) % w.dur
	}
	return false
}

// ready is fio's test for a full ring: "tail - head == intervals - 1" in
// unsigned arithmetic, once.
func (w *steadyWindow) ready() bool {
	return w.full || w.tail-w.head == w.dur-1
}

func (w *steadyWindow) addSlope() bool {
	if !w.ready() {
		return false
	}
	newVal := w.value(w.tail)
	if !w.full {
		w.sumY = 0
		for i := range w.dur {
			w.sumY += w.value(i)
			w.sumXY += uint64(i) * w.value((w.head+i)%w.dur)
		}
		w.full = true
	} else {
		w.sumY -= w.oldestY
		w.sumY += newVal
		w.sumXY = w.sumXY - w.sumY + uint64(w.dur)*newVal
	}
	w.oldestY = w.value(w.head)
	n := float64(w.dur)
	// fio assumes the samples are evenly spaced, one a second.
	w.slopeV = (float64(w.sumXY) - float64(w.sumX)*float64(w.sumY)/n) /
		(float64(w.sumXSq) - float64(w.sumX)*float64(w.sumX)/n)
	if w.pct {
		w.criterion = 100 * w.slopeV / (float64(w.sumY) / n)
	} else {
		w.criterion = w.slopeV
	}
	return math.Abs(w.criterion) < w.limit
}

func (w *steadyWindow) addDeviation() bool {
	if !w.ready() {
		return false
	}
	if !w.full {
		w.sumY = 0
		for i := range w.dur {
			w.sumY += w.value(i)
		}
		w.full = true
	} else {
		w.sumY -= w.oldestY
		w.sumY += w.value(w.tail)
	}
	w.oldestY = w.value(w.head)
	mean := float64(w.sumY) / float64(w.dur)
	w.deviation = 0
	for i := range w.dur {
		w.deviation = max(w.deviation, math.Abs(float64(w.value(i))-mean))
	}
	if w.pct {
		w.criterion = 100 * w.deviation / mean
	} else {
		w.criterion = w.deviation
	}
	return w.criterion < w.limit
}

// result is the window as fio reports it: when the criterion was attained
// or the ring never filled, head is the oldest sample; otherwise it has
// moved one past it.
func (w *steadyWindow) result(last time.Duration) *SteadyResult {
	metric := SteadyIOPS
	if !w.iops {
		metric = SteadyBW
	}
	r := &SteadyResult{Metric: metric, Slope: w.slope, Pct: w.pct, Limit: w.limit, Dur: w.dur, Attained: w.attained,
		Full: w.full, Criterion: w.criterion, MaxDeviation: w.deviation, SlopeValue: w.slopeV,
		IOPS: make([]uint64, w.dur), BW: make([]uint64, w.dur), Last: last}
	j := w.head
	if !w.attained && w.full {
		j = (w.head + w.dur - 1) % w.dur
	}
	for l := range w.dur {
		k := (j + l) % w.dur
		r.IOPS[l] = w.iopsData[k]
		r.BW[l] = w.bwData[k]
	}
	return r
}

// checkSteadyGroups is fio's td_steadystate_init check: every job of a
// reporting group has the same steady-state options (or none), since a
// group's jobs end together on them.
func checkSteadyGroups(groups []Group) error {
	for _, g := range groups {
		for i := 1; i < len(g.Jobs); i++ {
			a, b := &g.Jobs[0], &g.Jobs[i]
			if a.SSDur != b.SSDur || a.SSRamp != b.SSRamp || (a.Steady() && (a.SSMetric != b.SSMetric ||
				a.SSSlope != b.SSSlope || a.SSPct != b.SSPct || a.SSLimit != b.SSLimit)) {
				return fmt.Errorf("jobs %s and %s: steady-state options must be the same within a reporting group (fio rejects the job); start a new group with new_group or stonewall", a.Name, b.Name)
			}
		}
	}
	return nil
}
