package fio

import (
	"slices"

	"iolab/bench"
)

// optionPrio is fio 3.33's option priority (struct fio_option's prio in
// options.c): a job file section's options are sorted by it, highest
// first (parse.c's sort_options, from fio_options_parse), so that
// filename comes after directory — and that is the order fio's JSON
// lists them in ("job options").
var optionPrio = map[string]int{
	"filename": -1, "filename_format": -1,
	"lockfile": 1, "cpus_allowed_policy": 1, "kb_base": 1, "unit_base": 1,
}

// sortOptions orders a job file section's options as fio does: by
// priority, in the order given otherwise (glibc's qsort, a merge sort
// for arrays this small, keeps equal elements in order).
func sortOptions(opts []bench.Option) {
	slices.SortStableFunc(opts, func(a, b bench.Option) int {
		return optionPrio[b.Name] - optionPrio[a.Name]
	})
}
