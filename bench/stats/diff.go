package stats

import (
	"fmt"
	"math"
	"slices"
)

// Verdict is what a Comparison lets one say about two sets of repeats.
type Verdict string

const (
	// Significant: the repeats of B differ from those of A beyond what
	// chance gives at the comparison's level.
	Significant Verdict = "significant"
	// NotSignificant: no difference that chance would not explain; the
	// honest reading of two runs that measure the same thing.
	NotSignificant Verdict = "no significant difference"
	// TooFew: so few repeats that no ordering of them could reach the
	// level (3 against 3 at 95 %): the comparison cannot say either way.
	TooFew Verdict = "too few repeats to tell"
)

// Comparison compares the repeats of one figure in two runs (A the base,
// B the other): how much B changes the figure (Change: the ratio of the
// medians, with its interval), whether that is more than noise, and the
// Hodges–Lehmann shift beside it.
//
// The test is Mann–Whitney's (Wilcoxon rank-sum), exact when neither side
// has more than 50 values — with ties, over the arrangements of their
// midranks, as figures read from histogram buckets often tie — and its
// normal approximation with the tie correction otherwise. The interval of
// the change comes from the same U distribution (ChangeOf), so
// "significant" and "the interval excludes 0" agree.
type Comparison struct {
	Change
	// Shift is the Hodges–Lehmann estimate of the shift of log(B) from
	// log(A) as a fraction (0.05: B 5 % higher): the median of the
	// pairwise log ratios, not the ratio of the medians, so it is printed
	// under its own name ("HL shift"), never as the change. For values
	// not all positive it is the shift of the values over A's median.
	Shift   float64
	P       float64 // two-sided
	Verdict Verdict
}

// MaxExact is the largest sample size on either side for which Compare
// computes the exact U distribution.
const MaxExact = 50

// Compare compares b against a at confidence conf (0.95).
func Compare(a, b []float64, conf float64) Comparison {
	ch, diffs := changeOf(a, b, conf)
	c := Comparison{Change: ch, Shift: math.NaN(), P: 1, Verdict: TooFew}
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return c
	}
	if allPositive(a) && allPositive(b) {
		c.Shift = math.Expm1(Median(diffs))
	} else if c.A != 0 {
		c.Shift = Median(diffs) / math.Abs(c.A)
	}
	u := uStatistic(a, b)
	exact := m <= MaxExact && n <= MaxExact
	switch {
	case !exact:
		c.P = twoSidedNormal(a, b, u)
	case hasTies(a, b):
		c.P = twoSidedTies(a, b)
	default:
		c.P = twoSidedExact(uDistribution(m, n), u)
	}
	// Below the level no data could show a difference. The normal
	// approximation would claim one for 3 tied values against 3.
	if exact && smallestP(m, n) > 1-conf {
		return c // TooFew: the interval stays infinite
	}
	if c.P < 1-conf {
		c.Verdict = Significant
	} else {
		c.Verdict = NotSignificant
	}
	return c
}

// RepeatsNeeded is the fewest repeats the other side needs, against m on
// one side, for Compare to be able to reach confidence conf at all: with
// 3 repeats, 5 on the other side (3 vs 3 cannot reach 95 %). That bound
// is reached only when the two sides do not overlap at all; a few more
// give the test room for overlap. 0 for m < 1 or when no count up to
// MaxExact would do.
func RepeatsNeeded(m int, conf float64) int {
	if m < 1 {
		return 0
	}
	for n := 1; n <= MaxExact; n++ {
		if smallestP(m, n) <= 1-conf {
			return n
		}
	}
	return 0
}

// smallestP is the smallest two-sided p the exact test can give for m
// values against n: that of both extremes, ties or not (ties only
// coarsen the distribution).
func smallestP(m, n int) float64 { return 2 / math.Exp(lchoose(m+n, m)) }

// RepeatsEach is the fewest repeats on each side for Compare to be able
// to reach confidence conf: 4 at 95 %, 5 at 99 %.
func RepeatsEach(conf float64) int {
	for n := 1; n <= MaxExact; n++ {
		if k := RepeatsNeeded(n, conf); k > 0 && k <= n {
			return n
		}
	}
	return 0
}

// String reads as a table cell, the change named by its statistic and
// samples: "+12.3 % [+8.10 %, +16.0 %] (median ratio, n=6 vs 6) p=0.0022,
// significant".
func (c Comparison) String() string {
	switch {
	case c.NA == 0 || c.NB == 0:
		return "no values"
	case c.Verdict == TooFew:
		return fmt.Sprintf("%s (%s; %s)", c.Text(), c.Label(), c.Verdict)
	}
	return fmt.Sprintf("%s [%s, %s] (%s) p=%.2g, %s", c.Text(), PercentText(c.Lo), PercentText(c.Hi), c.Label(), c.P, c.Verdict)
}

func allPositive(v []float64) bool {
	for _, x := range v {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// uStatistic counts the pairs (a_i, b_j) with b_j < a_i, ties counting one
// half: Mann–Whitney's U for a.
func uStatistic(a, b []float64) float64 {
	var u float64
	for _, x := range a {
		for _, y := range b {
			switch {
			case y < x:
				u++
			case y == x:
				u += 0.5
			}
		}
	}
	return u
}

func hasTies(a, b []float64) bool {
	all := append(slices.Clone(a), b...)
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return true
		}
	}
	return false
}

// uDistribution is P(U = k), k = 0..m*n, for samples of m and n values
// with no ties under the null hypothesis, by the classic recurrence
// f(m, n, k) = f(m-1, n, k-n) + f(m, n-1, k) over arrangements.
func uDistribution(m, n int) []float64 {
	// f[j][k] for the current i (rows of a), j values of b.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = make([]float64, m*n+1)
		prev[j][0] = 1 // i = 0: one arrangement, U = 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = make([]float64, m*n+1)
		cur[0][0] = 1
		for j := 1; j <= n; j++ {
			cur[j] = make([]float64, m*n+1)
			for k := 0; k <= i*j; k++ {
				// The largest of the i+j values is from a (adds j to U) or b.
				v := cur[j-1][k]
				if k >= j {
					v += prev[j][k-j]
				}
				cur[j][k] = v
			}
		}
		prev = cur
	}
	counts := prev[n]
	total := math.Exp(lchoose(m+n, m))
	out := make([]float64, m*n+1)
	for k, v := range counts {
		out[k] = v / total
	}
	return out
}

func twoSidedExact(dist []float64, u float64) float64 {
	mn := len(dist) - 1
	lo := math.Min(u, float64(mn)-u)
	var p float64
	for k := 0; float64(k) <= lo; k++ {
		p += dist[k]
	}
	return math.Min(1, 2*p)
}

// twoSidedTies is the exact two-sided p of the rank-sum test with ties:
// the share of the ways of choosing which len(a) of the pooled values
// are a's whose rank sum (midranks for ties) lies at least as far from
// its mean as a's does. Ranks are doubled so that midranks are whole.
func twoSidedTies(a, b []float64) float64 {
	m := len(a)
	pooled := append(slices.Clone(a), b...)
	slices.Sort(pooled)
	N := len(pooled)
	// Twice the midrank of each pooled value, in order.
	ranks := make([]int, N)
	for i := 0; i < N; {
		j := i
		for j < N && pooled[j] == pooled[i] {
			j++
		}
		for k := i; k < j; k++ {
			ranks[k] = i + 1 + j // (i+1 + j) / 2, doubled
		}
		i = j
	}
	rankOf := func(x float64) int {
		i, _ := slices.BinarySearch(pooled, x)
		return ranks[i]
	}
	obs := 0
	for _, x := range a {
		obs += rankOf(x)
	}
	// ways[k][s]: subsets of k of the values seen so far with doubled
	// rank sum s, as fractions of C(N, m) to stay finite.
	maxSum := 0
	for _, r := range ranks {
		maxSum += r
	}
	ways := make([][]float64, m+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1 / math.Exp(lchoose(N, m))
	for _, r := range ranks {
		for k := m; k >= 1; k-- {
			row, prev := ways[k], ways[k-1]
			for s := maxSum; s >= r; s-- {
				row[s] += prev[s-r]
			}
		}
	}
	mean := m * (N + 1) // doubled
	dev := abs(obs - mean)
	var p float64
	for s, w := range ways[m] {
		if w != 0 && abs(s-mean) >= dev {
			p += w
		}
	}
	return math.Min(1, p)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func twoSidedNormal(a, b []float64, u float64) float64 {
	m, n := float64(len(a)), float64(len(b))
	N := m + n
	// Tie correction: sum over tie groups of t^3 - t.
	all := append(slices.Clone(a), b...)
	slices.Sort(all)
	var tt float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tt += t*t*t - t
		i = j
	}
	variance := m * n / 12 * ((N + 1) - tt/(N*(N-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-m*n/2) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// normalQuantile is the standard normal quantile function.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// Holm reports which of the p-values ps still reject their hypothesis at
// level alpha when all of them are taken together (Holm's step-down
// correction): the chance that any of those it keeps is a false
// difference stays within alpha, however the tests depend on each other.
// Comparing a table of points at 95 % each, one in twenty comes out
// significant by chance alone; Holm says which would not.
func Holm(ps []float64, alpha float64) []bool {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(ps[a], ps[b]) })
	out := make([]bool, len(ps))
	for rank, i := range idx {
		if !(ps[i] <= alpha/float64(len(ps)-rank)) {
			break
		}
		out[i] = true
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
