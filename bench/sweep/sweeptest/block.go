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
	dst := [4]*hist.Lat{&b.Submit, &b.Queue, &b.Device, &b.Completion}
	var all uint64
	for idx, c := range j.Dirs[d].Lat.Hist.Counts {
		if c == 0 {
			continue
		}
		all += c
		v := float64(hist.BucketValue(idx))
		for range uint64(float64(c)*oneToOne + 0.5) {
			for k, l := range dst {
				l.Add(uint64(v * parts[k]))
			}
		}
	}
	b.OneToOne = b.Submit.Stat.N
	b.Merged = all - b.OneToOne
	j.Dirs[d].Block = b
}
