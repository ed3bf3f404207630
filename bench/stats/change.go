package stats

import (
	"fmt"
	"math"
	"slices"

	"iolab/bench/units"
)

// Statistic names what a Change compares: every surface that prints a
// change prints this name with it.
type Statistic string

const (
	// MedianRatio: B's median over A's, each the median of one figure over
	// its side's repeats.
	MedianRatio Statistic = "median ratio"
	// PooledRatio: B's figure over A's, each read once from its side's
	// pooled data (a percentile of the merged histograms), as a chart that
	// draws the merged figure shows it.
	PooledRatio Statistic = "merged-histogram ratio"
)

// Change is what "B against A" means wherever iolab prints one — the
// charts, the statistical diff, the compare, group and report pages, the
// CSV: the ratio of B's figure to A's, written as a relative change
// (Rel = B/A − 1: 0.05 is B 5 % higher), over NA and NB repeats.
//
// The interval (ChangeOf) is the distribution-free one of the
// Hodges–Lehmann estimate of the shift of log(B) from log(A) (Moses's
// interval: the k-th smallest and largest of the pairwise log ratios
// b_j/a_i, k from the exact Mann–Whitney U distribution, its normal
// approximation above MaxExact values), turned back into a ratio. Under a
// shift of the log values — a change that multiplies every repeat by the
// same factor — that factor is the ratio of the medians, so the interval
// covers it at Conf; it is the interval Compare's test agrees with, so
// "significant" and "the interval excludes 0" say the same. Where the
// ratio of the sample medians falls outside it (very skewed sides) the
// interval is widened to hold it. For values not all positive the shift
// is taken on the values themselves and divided by A's median.
type Change struct {
	Stat   Statistic
	NA, NB int
	A, B   float64 // each side's figure: the medians for MedianRatio
	Rel    float64 // B/A − 1; NaN when A is 0 or a side has no values
	// Lo and Hi bound Rel at Conf; ±Inf when the sides are too few for
	// any interval to reach Conf (3 repeats against 3 at 95 %) or the
	// figure is pooled.
	Lo, Hi float64
	Conf   float64
}

// ChangeOf is b's change against a (MedianRatio) with its interval at
// confidence conf (0.95).
func ChangeOf(a, b []float64, conf float64) Change {
	c, _ := changeOf(a, b, conf)
	return c
}

// PooledChange is the change of one pooled figure, b against a (say each
// side's merged-histogram p99), read from na and nb repeats: the same
// ratio, with no interval (a merged figure has no spread of its own).
func PooledChange(a, b float64, na, nb int) Change {
	return Change{Stat: PooledRatio, NA: na, NB: nb, A: a, B: b, Rel: ratio(a, b),
		Lo: math.Inf(-1), Hi: math.Inf(1)}
}

// changeOf is ChangeOf and the sorted pairwise differences on the scale
// it took them (logs when every value is positive), for Compare's
// Hodges–Lehmann shift.
func changeOf(a, b []float64, conf float64) (Change, []float64) {
	c := Change{Stat: MedianRatio, NA: len(a), NB: len(b), Conf: conf,
		A: math.NaN(), B: math.NaN(), Rel: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return c, nil
	}
	c.A, c.B = Median(a), Median(b)
	c.Rel = ratio(c.A, c.B)
	logs := allPositive(a) && allPositive(b)
	diffs := make([]float64, 0, m*n)
	for _, y := range b {
		for _, x := range a {
			if logs {
				diffs = append(diffs, math.Log(y)-math.Log(x))
			} else {
				diffs = append(diffs, y-x)
			}
		}
	}
	slices.Sort(diffs)
	k := mosesK(m, n, conf)
	if k < 1 || k > len(diffs) {
		return c, diffs
	}
	back := func(d float64) float64 {
		if logs {
			return math.Expm1(d)
		}
		if c.A == 0 {
			return math.NaN()
		}
		return d / math.Abs(c.A)
	}
	c.Lo, c.Hi = back(diffs[k-1]), back(diffs[len(diffs)-k])
	if !math.IsNaN(c.Rel) {
		c.Lo, c.Hi = math.Min(c.Lo, c.Rel), math.Max(c.Hi, c.Rel)
	}
	return c, diffs
}

// mosesK is the rank of the pairwise difference that bounds the interval
// at conf for m values against n: the largest k whose lower tail P(U < k)
// stays within (1−conf)/2; 0 when even the extremes do not reach conf.
func mosesK(m, n int, conf float64) int {
	alpha := 1 - conf
	if m > MaxExact || n > MaxExact {
		mu := float64(m*n) / 2
		sd := math.Sqrt(float64(m*n*(m+n+1)) / 12)
		return int(math.Floor(mu - normalQuantile(1-alpha/2)*sd))
	}
	if smallestP(m, n) > alpha {
		return 0
	}
	dist := uDistribution(m, n)
	k := 0
	var cum float64
	for k < len(dist) && cum+dist[k] <= alpha/2 {
		cum += dist[k]
		k++
	}
	return k
}

func ratio(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return (b - a) / math.Abs(a)
}

// Label names the statistic and the samples behind it, as every surface
// prints it beside the number: "median ratio, n=3 vs 3".
func (c Change) Label() string {
	return fmt.Sprintf("%s, n=%d vs %d", c.Stat, c.NA, c.NB)
}

// Percent is Rel in percent, NaN when there is none.
func (c Change) Percent() float64 { return 100 * c.Rel }

// HasInterval reports whether Lo and Hi bound the change.
func (c Change) HasInterval() bool { return !math.IsInf(c.Lo, 0) && !math.IsInf(c.Hi, 0) }

// Text is the change as a signed percentage, three significant digits:
// "+5.48 %", "−0.349 %", "+241 %"; "–" when there is none. Every surface
// that prints a change in words prints this, so one pair of sides reads
// the same on all of them.
func (c Change) Text() string { return PercentText(c.Rel) }

// PercentText writes a relative change (0.05 for +5 %) as Change.Text
// does.
func PercentText(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := units.Significant(math.Abs(100*v), 3)
	switch {
	case s == "0":
		return "0 %"
	case v > 0:
		return "+" + s + " %"
	}
	return "−" + s + " %"
}
