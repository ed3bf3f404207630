package fio

import (
	"fmt"
	"strings"

	"iolab/bench"
)

// writeBlock prints a direction's time in the block layer (--trace-block)
// after its lat line: the timed I/Os (one-to-one, and splits with every
// piece seen) at lat's median, then at its 99th percentile, split into
// the four parts, which add up to that lat (bench.SplitByLat), in one
// unit chosen as fio's percentiles choose theirs; then how the I/Os
// mapped. fio has no such lines; without --trace-block none is printed.
func writeBlock(b *strings.Builder, bt *bench.BlockTime) {
	if bt == nil {
		return
	}
	var at [2]bench.LatSplit
	var ok bool
	for k, p := range []float64{50, 99} {
		at[k], ok = bt.ByLat.SplitAt(p)
	}
	if ok {
		unit, div := latUnit(at[1].Lat)
		for k, pct := range []string{"p50", "p99"} {
			fmt.Fprintf(b, "    block (%s): lat %s=%.2f: submit=%.2f, queue=%.2f, device=%.2f, completion=%.2f\n", unit, pct,
				float64(at[k].Lat)/div, at[k].Parts[0]/div, at[k].Parts[1]/div, at[k].Parts[2]/div, at[k].Parts[3]/div)
		}
	}
	fmt.Fprintf(b, "    block I/Os : one-to-one=%d of %d, merged=%d, split=%d (timed %d), unmatched=%d\n", bt.OneToOne, bt.IOs(), bt.Merged, bt.Split, bt.SplitTimed, bt.Unmatched)
}

// latUnit is the unit fio's percentiles would print hi in, and its size
// in ns.
func latUnit(hi uint64) (string, float64) {
	switch {
	case hi > 99_999_999:
		return "msec", 1e6
	case hi > 99_999:
		return "usec", 1e3
	}
	return "nsec", 1
}

// writeBlockTrace prints, after a traced group's run status, what its
// trace saw besides the jobs' I/Os and what it lost: a count of I/Os
// unmatched is read beside them.
func writeBlockTrace(b *strings.Builder, tr *bench.BlockTrace) {
	if tr == nil {
		return
	}
	fmt.Fprintf(b, "  BLOCK: traced %s; foreign bios=%d, dropped=%d, missed=%d\n",
		strings.Join(tr.Devices, ","), tr.Foreign, tr.Dropped, tr.Missed)
}
