package bench

import (
	"slices"

	"iolab/bench/hist"
)

// Latency under load (issue 13). A paced job (rate, rate_iops) gives each
// I/O an intended start time: when the rate meant it to start. A device
// that stalls holds the job up, so the I/Os after the stall start late;
// fio's lat and clat start at the actual submission and never see that
// wait (coordinated omission). DirResult.Intended measures from the
// intended time instead, so it is never below lat for the same I/O, and
// equal to it when the job was never held up.
//
// Per interval, the loop also keeps a histogram of the job's headline
// latency (Intended for a paced direction, clat otherwise) and reduces it
// to IntervalLat at each sample, so a p99 spike can be placed in time.

// IntervalLat is one interval's latency: how many I/Os completed in it and
// their p50, p99 and maximum, in ns. Bins keeps the interval's histogram
// in memory only, so group_reporting can merge jobs' intervals honestly.
type IntervalLat struct {
	N   uint64 `json:"n"`
	P50 uint64 `json:"p50_ns"`
	P99 uint64 `json:"p99_ns"`
	Max uint64 `json:"max_ns"`

	bins []intervalBin
}

// intervalBin is one non-empty bucket of an interval's histogram.
type intervalBin struct {
	idx uint16
	n   uint64
}

// intervalPercentiles are the percentiles an interval keeps.
var intervalPercentiles = []float64{50, 99}

// newIntervalLat reduces h to an IntervalLat (keeping its buckets for
// merges); nil when nothing completed.
func newIntervalLat(h *hist.Histogram, maxNS uint64) *IntervalLat {
	var il IntervalLat
	for i, c := range h.Counts {
		if c != 0 {
			il.bins = append(il.bins, intervalBin{uint16(i), c})
			il.N += c
		}
	}
	if il.N == 0 {
		return nil
	}
	p := h.Percentiles(intervalPercentiles)
	il.P50, il.P99, il.Max = p[0], p[1], maxNS
	return &il
}

// merge adds o's I/Os to il's; percentiles are recomputed from the merged
// buckets. Without buckets (read back from a store), the merge cannot be
// done honestly and il is dropped (nil).
func (il *IntervalLat) merge(o *IntervalLat) *IntervalLat {
	switch {
	case il == nil:
		return o.clone()
	case o == nil:
		return il
	case il.bins == nil || o.bins == nil:
		return nil
	}
	var h hist.Histogram
	for _, b := range il.bins {
		h.Counts[b.idx] += b.n
	}
	for _, b := range o.bins {
		h.Counts[b.idx] += b.n
	}
	return newIntervalLat(&h, max(il.Max, o.Max))
}

func (il *IntervalLat) clone() *IntervalLat {
	if il == nil {
		return nil
	}
	c := *il
	c.bins = slices.Clone(il.bins)
	return &c
}

// Paced reports whether direction d of the job was paced by a rate, so
// that its Intended latency was measured.
func (r *JobResult) Paced(d int) bool { return r.Dirs[d].Intended.Stat.N > 0 }

// HeadlineLat is the latency iolab leads with for direction d: the one
// from the intended start for a paced direction (coordinated omission
// corrected), else fio's clat. name says which.
func (r *JobResult) HeadlineLat(d int) (l *hist.Lat, name string) {
	if r.Paced(d) {
		return &r.Dirs[d].Intended, LatIntended
	}
	return &r.Dirs[d].Clat, "clat"
}

// LatIntended names the latency measured from an I/O's intended start.
const LatIntended = "lat from intended start"
