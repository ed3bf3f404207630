package chart

import (
	"slices"

	"iolab/bench"
	"iolab/bench/summary"
)

// trims reports whether a step of runs trimmed (rw=trim, randtrim,
// trimwrite, randtrimwrite): fio's third direction, which the charts add
// to reads and writes unless the query picks one (dir=trim).
func trims(runs []*runView) bool {
	return slices.ContainsFunc(runs, func(r *runView) bool {
		return slices.ContainsFunc(r.steps, func(st summary.StepView) bool {
			return st.Result != nil && stepDoes(st.Result, bench.Trim)
		})
	})
}

// dirsNote is what a chart of all directions says of them when runs trim:
// that its I/Os are reads, writes and trims added up; "" otherwise, or
// when the query picks a direction.
func dirsNote(q Query, runs []*runView) string {
	if q.dirIndex() >= 0 || !trims(runs) {
		return ""
	}
	return "; reads, writes and trims added up (dir=trim: trims alone)"
}
