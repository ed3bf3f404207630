package sweeptest

import (
	"iolab/bench"
	"iolab/bench/hist"
)

// Traced gives direction d of j the block-layer time a --trace-block
// step would have: of each I/O of its lat histogram, a share oneToOne
// mapped one-to-one onto a request and is split into submit, queue,
// device and completion in the proportions parts (which add up to 1), so
// that the parts add up to the I/O's lat; the rest count as merged.
func Traced(j *bench.JobResult, d int, parts [4]float64, oneToOne float64) {
	b := &bench.BlockTime{}
	var all uint64
	for idx, c := range j.Dirs[d].Lat.Hist.Counts {
		if c == 0 {
			continue
		}
		all += c
		v := float64(hist.BucketValue(idx))
		for range uint64(float64(c)*oneToOne + 0.5) {
			b.AddTimed(int64(v*parts[0]), int64(v*parts[1]), int64(v*parts[2]), int64(v*parts[3]))
		}
	}
	b.OneToOne = b.Submit.Stat.N
	b.Merged = all - b.OneToOne
	j.Dirs[d].Block = b
}
