// Package stats holds the small statistics iolab reports over repeats and
// rounds: medians and min/median/max spreads. Everything here accepts an
// empty input and says what it returns for it.
package stats

import (
	"cmp"
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
// whiskers of the write-ups' charts.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// SpreadOf returns the spread of vals; the zero Spread for none.
func SpreadOf(vals []float64) Spread {
	if len(vals) == 0 {
		return Spread{}
	}
	return Spread{Min: slices.Min(vals), Median: Median(vals), Max: slices.Max(vals)}
}
