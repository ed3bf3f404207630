package fio

import (
	"fmt"
	"strings"

	"iolab/bench"
	"iolab/bench/hist"
)

// writeBlock prints a direction's time in the block layer (--trace-block)
// after its lat line: the four parts' median, then their 99th percentile,
// in one unit chosen as fio's percentiles choose theirs, of the I/Os
// timed (one-to-one, and splits with every piece seen), and how the I/Os
// mapped. fio has no such lines; without --trace-block none is
// printed.
func writeBlock(b *strings.Builder, bt *bench.BlockTime) {
	if bt == nil {
		return
	}
	parts := []struct {
		name string
		l    *hist.Lat
	}{{"submit", &bt.Submit}, {"queue", &bt.Queue}, {"device", &bt.Device}, {"completion", &bt.Completion}}
	var vals [2][4]uint64
	hi := uint64(0)
	for i, p := range parts {
		if p.l.Stat.N == 0 {
			continue
		}
		v := p.l.Hist.Percentiles([]float64{50, 99})
		vals[0][i], vals[1][i] = v[0], v[1]
		hi = max(hi, v[1])
	}
	unit, div := "nsec", 1.0
	switch {
	case hi > 99_999_999:
		unit, div = "msec", 1e6
	case hi > 99_999:
		unit, div = "usec", 1e3
	}
	if bt.Timed() > 0 {
		for k, pct := range []string{"p50", "p99"} {
			fmt.Fprintf(b, "    block (%s): %s", unit, pct)
			for i, p := range parts {
				sep := ","
				if i == len(parts)-1 {
					sep = "\n"
				}
				fmt.Fprintf(b, " %s=%.2f%s", p.name, float64(vals[k][i])/div, sep)
			}
		}
	}
	fmt.Fprintf(b, "    block I/Os : one-to-one=%d of %d, merged=%d, split=%d (timed %d), unmatched=%d\n", bt.OneToOne, bt.IOs(), bt.Merged, bt.Split, bt.SplitTimed, bt.Unmatched)
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
