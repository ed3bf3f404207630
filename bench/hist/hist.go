// Package hist is fio's log-linear latency histogram and the running
// statistics fio keeps beside it, bit for bit: percentiles computed here
// agree with fio's, and histograms merge across jobs, repeats and runs.
package hist

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
)

// fio's latency histogram constants (fio stat.h): FIO_IO_U_PLAT_BITS,
// FIO_IO_U_PLAT_VAL, FIO_IO_U_PLAT_GROUP_NR and FIO_IO_U_PLAT_NR.
const (
	histBits   = 6
	histVal    = 1 << histBits
	histGroups = 29

	// HistBuckets is fio's FIO_IO_U_PLAT_NR: 29 groups of 64 buckets over
	// nanoseconds, enough for 2^34 ns (~17 s) with a relative error of at
	// most 1/128; anything longer lands in the last bucket.
	HistBuckets = histGroups * histVal
)

// defaultPercentiles is fio's default percentile_list.
var defaultPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// DefaultPercentiles returns fio's default percentile_list, a fresh copy.
func DefaultPercentiles() []float64 { return slices.Clone(defaultPercentiles) }

// Histogram is fio's log-linear latency histogram (io_u_plat in fio's
// thread_stat). It holds no pointers so that it can live inside a job's
// plain struct, be copied and be merged bucket by bucket.
type Histogram struct {
	Counts [HistBuckets]uint64
}

// BucketIndex is fio's plat_val_to_idx (stat.c): values below 128 get their
// own bucket; above that the most significant bit picks the group and the
// next 6 bits the bucket in it.
func BucketIndex(ns uint64) int {
	if ns < 2*histVal { // msb <= FIO_IO_U_PLAT_BITS
		return int(ns)
	}
	errorBits := bits.Len64(ns) - 1 - histBits
	idx := (errorBits+1)<<histBits + (int(ns>>errorBits) & (histVal - 1))
	return min(idx, HistBuckets-1)
}

// BucketValue is fio's plat_idx_to_val (stat.c): the midpoint of bucket
// idx, computed in double and truncated as fio's conversion to unsigned long
// long does. It panics if idx is out of range, as fio asserts.
func BucketValue(idx int) uint64 {
	if idx < 0 || idx >= HistBuckets {
		panic(fmt.Sprintf("hist: histogram bucket %d out of range", idx))
	}
	if idx < 2*histVal {
		return uint64(idx)
	}
	errorBits := idx>>histBits - 1
	base := uint64(1) << (errorBits + histBits)
	k := idx % histVal
	return uint64(float64(base) + (float64(k)+0.5)*float64(int64(1)<<errorBits))
}

// BucketBounds is the inverse of BucketIndex: the latencies [lo, hi) in
// ns that bucket idx counts. The last bucket also counts everything from
// hi up, which BucketIndex clamps into it. It panics if idx is out of
// range, as BucketValue does.
func BucketBounds(idx int) (lo, hi uint64) {
	if idx < 0 || idx >= HistBuckets {
		panic(fmt.Sprintf("hist: histogram bucket %d out of range", idx))
	}
	if idx < 2*histVal {
		return uint64(idx), uint64(idx) + 1
	}
	errorBits := idx>>histBits - 1
	lo = 1<<(errorBits+histBits) + uint64(idx&(histVal-1))<<errorBits
	return lo, lo + 1<<errorBits
}

// Add counts one latency. It runs once per I/O, so it stays tiny and
// allocation-free.
func (h *Histogram) Add(ns uint64) {
	h.Counts[BucketIndex(ns)]++
}

// Merge adds o's counts to h, as fio's sum_thread_stats does for
// group_reporting.
func (h *Histogram) Merge(o *Histogram) {
	for i := range h.Counts {
		h.Counts[i] += o.Counts[i]
	}
}

// N is the number of latencies counted.
func (h *Histogram) N() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Percentiles returns, for each p in list (in list's order), the value in
// ns that fio reports for the p-th percentile; all zeros when h is empty.
func (h *Histogram) Percentiles(list []float64) []uint64 {
	return h.percentiles(list, h.N())
}

// percentiles is fio's calc_clat_percentiles (stat.c) with fio's nr, which
// fio takes from the latency's sample count: walk the buckets in order and
// report, for each percentile in ascending order, the first bucket where the
// running sum reaches p/100 × nr.
func (h *Histogram) percentiles(list []float64, nr uint64) []uint64 {
	out := make([]uint64, len(list))
	if nr == 0 {
		return out
	}
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(list[a], list[b]) })

	i, sum := 0, h.Counts[0]
	for _, j := range order {
		need := percentileRank(list[j], nr)
		for sum < need && i < HistBuckets-1 {
			i++
			sum += h.Counts[i]
		}
		out[j] = BucketValue(i)
	}
	return out
}

// percentileRank is the smallest running count that satisfies fio's test
// `sum >= (long double) p / 100.0 * nr` (calc_clat_percentiles). On x86-64
// long double is the x87 format with a 64-bit mantissa; big.Float at
// precision 64 rounds the same way, so thresholds that land within a
// double's rounding error of an integer are decided as fio decides them.
// Ranks beyond nr (p > 100) are clamped to nr, where fio would log an error.
func percentileRank(p float64, nr uint64) uint64 {
	if !(p > 0) {
		return 0
	}
	t := new(big.Float).SetPrec(64).SetFloat64(p)
	t.Quo(t, big.NewFloat(100))
	t.Mul(t, new(big.Float).SetUint64(nr))
	// Uint64 truncates; its Accuracy says Exact for some fractions
	// (golang/go#81535), so IsInt decides.
	need, _ := t.Uint64()
	if !t.IsInt() {
		need++ // ceil: t had a fraction
	}
	return min(need, nr)
}

// Bins returns the non-empty buckets as midpoint → count, as fio's json+
// output prints them under "bins".
func (h *Histogram) Bins() map[uint64]uint64 {
	bins := make(map[uint64]uint64)
	for i, c := range h.Counts {
		if c != 0 {
			bins[BucketValue(i)] = c
		}
	}
	return bins
}

// HistogramFromBins rebuilds a histogram from fio's json+ "bins". Every key
// must be a bucket midpoint as fio's plat_idx_to_val prints it.
func HistogramFromBins(bins map[uint64]uint64) (Histogram, error) {
	var h Histogram
	for v, c := range bins {
		idx := BucketIndex(v)
		if BucketValue(idx) != v {
			return Histogram{}, fmt.Errorf("hist: histogram bin %d is not a bucket midpoint (bucket %d is %d)", v, idx, BucketValue(idx))
		}
		h.Counts[idx] += c
	}
	return h, nil
}

// MarshalJSON writes the histogram as fio's json+ bins, midpoint → count
// of the non-empty buckets: small, and readable by anything that reads
// fio's output.
func (h Histogram) MarshalJSON() ([]byte, error) {
	// What encoding/json writes of the map midpoint (in decimal) → count,
	// written without the map: keys sorted as strings, as it sorts them.
	// A run's document holds eight histograms a job.
	type bin struct {
		key   []byte
		count uint64
	}
	var bins []bin
	var keys []byte
	for i, c := range h.Counts {
		if c != 0 {
			at := len(keys)
			keys = strconv.AppendUint(keys, BucketValue(i), 10)
			bins = append(bins, bin{key: keys[at:len(keys):len(keys)], count: c})
		}
	}
	slices.SortFunc(bins, func(a, b bin) int { return bytes.Compare(a.key, b.key) })
	out := make([]byte, 0, 2+len(keys)+len(bins)*12)
	out = append(out, '{')
	for i, b := range bins {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, b.key...)
		out = append(out, '"', ':')
		out = strconv.AppendUint(out, b.count, 10)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var raw map[string]uint64
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("hist: histogram: %w", err)
	}
	bins := make(map[uint64]uint64, len(raw))
	for k, n := range raw {
		v, err := strconv.ParseUint(k, 10, 64)
		if err != nil {
			return fmt.Errorf("hist: histogram bin %q: %w", k, err)
		}
		bins[v] = n
	}
	got, err := HistogramFromBins(bins)
	if err != nil {
		return err
	}
	*h = got
	return nil
}

// LatStat is fio's io_stat: count, min, max and the running mean and sum of
// squared deviations (S) of Welford's method, so that stddev and merges
// match fio's to the last bit.
type LatStat struct {
	N    uint64  `json:"n"`
	Min  uint64  `json:"min"`
	Max  uint64  `json:"max"`
	Mean float64 `json:"mean"`
	S    float64 `json:"s"`
}

// Add is fio's add_stat_sample (stat.c). fio starts min at ULONG_MAX; the
// zero LatStat starts with N == 0 instead.
func (s *LatStat) Add(ns uint64) {
	if ns > s.Max {
		s.Max = ns
	}
	if ns < s.Min || s.N == 0 {
		s.Min = ns
	}
	val := float64(ns)
	delta := val - s.Mean
	if delta != 0 {
		s.Mean += delta / (float64(s.N) + 1.0)
		// The explicit conversion forbids fusing into an FMA, which fio's
		// C (built without -mfma) does not do either.
		s.S += float64(delta * (val - s.Mean))
	}
	s.N++
}

// Merge folds o into s with the parallel variance formula of fio's
// __sum_stat (stat.c), which sum_stat calls for latencies.
func (s *LatStat) Merge(o *LatStat) {
	if o.N == 0 {
		return
	}
	if s.N == 0 {
		*s = *o
		return
	}
	s.Min = min(s.Min, o.Min)
	s.Max = max(s.Max, o.Max)

	delta := o.Mean - s.Mean
	total := float64(s.N + o.N)
	mean := (float64(o.Mean*float64(o.N)) + float64(s.Mean*float64(s.N))) / total
	sq := float64(delta * delta) // pow(delta, 2.0)
	m2 := o.S + s.S + sq*float64(s.N*o.N)/total

	s.N += o.N
	s.Mean = mean
	s.S = m2
}

// Stddev is the sample standard deviation as fio's calc_lat reports it:
// sqrt(S / (N-1)), 0 for fewer than two samples.
func (s *LatStat) Stddev() float64 {
	if s.N < 2 {
		return 0
	}
	return math.Sqrt(s.S / (float64(s.N) - 1.0))
}

// Lat is one latency (slat, clat or lat) of one direction of one job: the
// summary fio prints and the histogram its percentiles come from.
type Lat struct {
	Stat LatStat   `json:"stat"`
	Hist Histogram `json:"hist"`
}

// Add records one latency.
func (l *Lat) Add(ns uint64) {
	l.Stat.Add(ns)
	l.Hist.Add(ns)
}

// Percentiles is fio's percentiles of l: over the histogram, with the
// sample count fio takes as nr (calc_clat_percentiles gets it from the
// latency's io_stat, not from the bucket counts).
func (l *Lat) Percentiles(list []float64) []uint64 {
	return l.Hist.percentiles(list, l.Stat.N)
}

// Merge folds o into l.
func (l *Lat) Merge(o *Lat) {
	l.Stat.Merge(&o.Stat)
	l.Hist.Merge(&o.Hist)
}

// ReliableN is how many samples a percentile p (in percent) needs before
// it is worth reading: 10/(1−p/100), so that at least ten samples lie above
// it. p99 needs 1,000, p99.99 100,000.
func ReliableN(p float64) uint64 {
	if p >= 100 {
		return math.MaxUint64
	}
	// Percentiles are written in decimal (99.9), so 100-p carries float
	// error; a millionth of a sample is far below any count that matters.
	return uint64(math.Ceil(1000/(100-p) - 1e-6))
}

// Reliable reports whether percentile p of n samples is backed by enough
// of them (ReliableN).
func Reliable(p float64, n uint64) bool { return n >= ReliableN(p) }
