package summary

import (
	"slices"
	"time"

	"iolab/bench"
)

// The fleet's IOPS are the hosts' I/Os over the same wall-clock time.
// Each host counts its I/Os per interval (bench.Sample: cumulative counts
// at the end of each interval since its window began), and the hosts
// start at different times, so their intervals do not line up. Each
// host's count is read as a line through its samples (its I/Os taken as
// spread evenly over each interval), so a host's interval that straddles
// the fleet's is split between the two in proportion to the time it
// spent in each. Then:
//
//   - the fleet's IOPS and bandwidth are every host's I/Os (bytes) from
//     the latest start to the earliest end — the window in which every
//     host ran — over its length: the hosts' ramps and tails, where some
//     ran and others did not, are left out;
//   - a step whose hosts did not run together for one interval (a group
//     run one host after another) has no fleet IOPS: Apart flags it, and
//     only its latencies are merged;
//   - where a host kept no samples (fio's output imported), the fleet's
//     IOPS are fio's "All clients" rule: every host's I/Os over the
//     longest host's window (sum_thread_stats keeps the longest runtime).

// FleetTime is how the hosts' windows of a job lined up.
type FleetTime struct {
	// Aligned: from the hosts' samples on the wall clock; false when a
	// host kept none and the IOPS are fio's "All clients" rule.
	Aligned bool
	// Start and End are the window in which every host ran.
	Start, End time.Time
	// Apart: the hosts did not run together for one interval; IOPS and
	// BW are then 0.
	Apart bool
	// Coverage is the common window's share of the longest host's.
	Coverage float64
	// Interval is the fleet's interval: the longest of the hosts'.
	Interval time.Duration
	// Series is the fleet's IOPS over time, one point per interval from
	// the earliest host's start to the latest host's end (aligned only).
	Series []FleetPoint
	// IOPS and BW (bytes) per direction over the common window.
	IOPS, BW [3]float64
}

// FleetPoint is one interval of the fleet's time.
type FleetPoint struct {
	At    time.Duration // the interval's end, since the earliest host's start
	Fleet float64       // I/Os per second, every host's, every direction
	// Hosts are each host's I/Os per second (in FleetJob.Hosts' order);
	// nil where the host ran less than half the interval.
	Hosts []*float64
}

// MaxFleetPoints bounds a series: a long step's interval is widened to
// keep to it.
const MaxFleetPoints = 1000

// curve is a host's cumulative counts over its window, per direction:
// at[i] since the window's start, ios[i] and bytes[i] by then.
type curve struct {
	start time.Time
	at    []time.Duration
	ios   []bench.DirCounts
	bytes []bench.DirCounts
}

func curveOf(j *JobView) *curve {
	n := len(j.Samples) + 2
	c := &curve{start: j.Start, at: make([]time.Duration, 1, n), ios: make([]bench.DirCounts, 1, n), bytes: make([]bench.DirCounts, 1, n)}
	for _, s := range j.Samples {
		if s.At <= c.at[len(c.at)-1] {
			continue
		}
		c.at, c.ios, c.bytes = append(c.at, s.At), append(c.ios, s.IOs), append(c.bytes, s.Bytes)
	}
	// The window's last part, after the last full interval: the job's
	// totals at its end.
	if j.Runtime > c.at[len(c.at)-1] {
		var ios, bytes bench.DirCounts
		for d := range j.Dirs {
			ios[d], bytes[d] = j.Dirs[d].IOs, j.Dirs[d].Bytes
		}
		c.at, c.ios, c.bytes = append(c.at, j.Runtime), append(c.ios, ios), append(c.bytes, bytes)
	}
	return c
}

func (c *curve) end() time.Time { return c.start.Add(c.at[len(c.at)-1]) }

// value is the count of direction d by wall time t (bytes or I/Os), on
// the line through the samples; 0 before the window, the last after.
func (c *curve) value(t time.Time, d int, bytes bool) float64 {
	counts := c.ios
	if bytes {
		counts = c.bytes
	}
	off := t.Sub(c.start)
	if off <= 0 {
		return 0
	}
	n := len(c.at)
	if off >= c.at[n-1] {
		return float64(counts[n-1][d])
	}
	// The first sample at or after off: a series reads every host's
	// curve at each of up to MaxFleetPoints intervals.
	i, _ := slices.BinarySearch(c.at, off)
	lo, hi := float64(counts[i-1][d]), float64(counts[i][d])
	frac := float64(off-c.at[i-1]) / float64(c.at[i]-c.at[i-1])
	return lo + (hi-lo)*frac
}

// total is every direction's I/Os by t.
func (c *curve) total(t time.Time) float64 {
	var v float64
	for d := range len(bench.DirCounts{}) {
		v += c.value(t, d, false)
	}
	return v
}

// alignTime lines the hosts' windows of a job up on the wall clock.
func alignTime(runs []hostJob) FleetTime {
	var ft FleetTime
	if len(runs) == 0 {
		return ft
	}
	ft.Aligned = true
	var (
		first, last time.Time
		longest     time.Duration
	)
	for i, r := range runs {
		start, end := r.window()
		for _, j := range r.jobs {
			if len(j.Samples) == 0 {
				ft.Aligned = false
			}
			ft.Interval = max(ft.Interval, j.Interval)
		}
		if i == 0 || start.After(ft.Start) {
			ft.Start = start
		}
		if i == 0 || end.Before(ft.End) {
			ft.End = end
		}
		if i == 0 || start.Before(first) {
			first = start
		}
		if i == 0 || end.After(last) {
			last = end
		}
		longest = max(longest, end.Sub(start))
	}
	if ft.Interval <= 0 {
		ft.Interval = time.Second
	}
	common := ft.End.Sub(ft.Start)
	if longest > 0 && common > 0 {
		ft.Coverage = float64(common) / float64(longest)
	}
	if common < min(ft.Interval, longest) || common <= 0 {
		ft.Apart = true
		return ft
	}
	if !ft.Aligned {
		// fio's "All clients": the I/Os over the longest window.
		for _, r := range runs {
			for _, j := range r.jobs {
				for d := range j.Dirs {
					ft.IOPS[d] += bench.PerSecond(j.Dirs[d].IOs, longest)
					ft.BW[d] += bench.PerSecond(j.Dirs[d].Bytes, longest)
				}
			}
		}
		return ft
	}
	// Each host's curves, one per clone of the job.
	curves := make([][]*curve, len(runs))
	for i, r := range runs {
		for _, j := range r.jobs {
			curves[i] = append(curves[i], curveOf(j))
		}
	}
	secs := common.Seconds()
	for _, cs := range curves {
		for _, c := range cs {
			for d := range ft.IOPS {
				ft.IOPS[d] += (c.value(ft.End, d, false) - c.value(ft.Start, d, false)) / secs
				ft.BW[d] += (c.value(ft.End, d, true) - c.value(ft.Start, d, true)) / secs
			}
		}
	}
	ft.Series = series(curves, first, last, &ft.Interval)
	return ft
}

// series is the fleet's IOPS per interval from first to last; a span of
// more than MaxFleetPoints intervals widens the interval.
func series(curves [][]*curve, first, last time.Time, interval *time.Duration) []FleetPoint {
	span := last.Sub(first)
	if n := (span + *interval - 1) / *interval; n > MaxFleetPoints {
		*interval = (span + MaxFleetPoints - 1) / MaxFleetPoints
	}
	w := *interval
	var out []FleetPoint
	for a := first; a.Before(last); a = a.Add(w) {
		b := a.Add(w)
		p := FleetPoint{At: b.Sub(first), Hosts: make([]*float64, len(curves))}
		for i, cs := range curves {
			var n float64
			var ran time.Duration // the host's longest-running clone's time in the interval
			for _, c := range cs {
				n += c.total(b) - c.total(a)
				ran = max(ran, minTime(b, c.end()).Sub(maxTime(a, c.start)))
			}
			p.Fleet += n / w.Seconds()
			if ran*2 >= w {
				v := n / ran.Seconds()
				p.Hosts[i] = &v
			}
		}
		out = append(out, p)
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
