// Package stats holds the small statistics iolab reports over repeats and
// rounds: medians and min/median/max spreads. Everything here accepts an
// empty input and says what it returns for it.
package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Number is what the functions here take.
type Number interface {
	~int | ~int64 | ~uint64 | ~float64
}

// Median returns the median of v (the mean of the two middle values when
// len(v) is even); 0 for an empty v. v is not modified.
func Median[T Number](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.SortFunc(s, cmp.Compare[T])
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Spread is one figure's minimum, median and maximum over repeats: the
// whiskers of the write-ups' charts; and its coefficient of variation,
// which says whether the median can stand alone (Noisy).
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	CV     float64 `json:"cv"` // CV of the values; 0 for fewer than two
}

// SpreadOf returns the spread of vals; the zero Spread for none.
func SpreadOf(vals []float64) Spread {
	if len(vals) == 0 {
		return Spread{}
	}
	return Spread{Min: slices.Min(vals), Median: Median(vals), Max: slices.Max(vals), CV: CV(vals)}
}

// Noisy reports whether the values disagree by more than NoisyCV: their
// median must be read with their range.
func (s Spread) Noisy() bool { return s.CV > NoisyCV }

// Scale is the spread of the values times f (a change of unit): the CV,
// a ratio, stays.
func (s Spread) Scale(f float64) Spread {
	return Spread{Min: s.Min * f, Median: s.Median * f, Max: s.Max * f, CV: s.CV}
}

// CV is the coefficient of variation of vals: the sample standard
// deviation over the mean, 0 for fewer than two values or a zero mean. It
// is the noise figure a spread of repeats is flagged by (NoisyCV).
func CV(vals []float64) float64 {
	n := float64(len(vals))
	if n < 2 {
		return 0
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / n
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	return math.Sqrt(ss/(n-1)) / math.Abs(mean)
}

// NoisyCV is the coefficient of variation above which repeats disagree
// too much for their median to stand alone: such cells are flagged noisy.
const NoisyCV = 0.10

// MedianCI returns a distribution-free confidence interval for the median
// of vals at level conf (0.95), from order statistics: the widest pair
// x(k), x(n+1-k) whose binomial coverage reaches conf. With too few values
// for any pair to reach it (fewer than 6 at 95 %), it returns the whole
// range and exact false.
func MedianCI(vals []float64, conf float64) (lo, hi float64, exact bool) {
	n := len(vals)
	if n == 0 {
		return 0, 0, false
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	// coverage(k) = P(k <= B <= n-k) for B ~ Binomial(n, 1/2), with the
	// interval [x(k), x(n+1-k)] (1-based).
	best := 0
	for k := 1; k <= n/2; k++ {
		var cov float64
		for b := k; b <= n-k; b++ {
			cov += binomHalf(n, b)
		}
		if cov >= conf {
			best = k
		} else {
			break
		}
	}
	if best == 0 {
		return s[0], s[n-1], false
	}
	return s[best-1], s[n-best], true
}

// binomHalf is P(B = k) for B ~ Binomial(n, 1/2).
func binomHalf(n, k int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) - float64(n)*math.Ln2)
}

// MedianPrecision is the half-width of MedianCI at 95 % relative to the
// median: 0.05 means the median is known within ±5 %. It is 1 (and exact
// false) when there are too few values to say.
func MedianPrecision(vals []float64) (float64, bool) {
	lo, hi, exact := MedianCI(vals, 0.95)
	m := Median(vals)
	if m == 0 || !exact {
		return 1, false
	}
	return math.Max(m-lo, hi-m) / math.Abs(m), true
}

// BootstrapMedianCI is a percentile-bootstrap confidence interval at level
// conf for the median of vals: iters resamples with replacement (a fixed
// seed, so a table reads the same each time it is made from the same
// data). With one value it is that value.
func BootstrapMedianCI(vals []float64, conf float64, iters int, seed uint64) (lo, hi float64) {
	n := len(vals)
	if n == 0 {
		return 0, 0
	}
	if n == 1 {
		return vals[0], vals[0]
	}
	r := rand.New(rand.NewPCG(seed, 0x626f6f74))
	meds := make([]float64, iters)
	sample := make([]float64, n)
	for i := range meds {
		for k := range sample {
			sample[k] = vals[r.IntN(n)]
		}
		meds[i] = Median(sample)
	}
	slices.Sort(meds)
	tail := (1 - conf) / 2
	at := func(q float64) float64 {
		i := int(math.Round(q * float64(iters-1)))
		return meds[min(max(i, 0), iters-1)]
	}
	return at(tail), at(1 - tail)
}
