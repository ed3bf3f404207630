package bench

// blockGen draws the blocks (of j.BS) a job's generator picks over one
// file of blocks blocks, at index among the run's jobs: the picker as the
// job loop uses it. A size-based job goes on over the file pass after
// pass (loops), as fio's does with loops or io_size.
func blockGen(j *Job, blocks uint64, index int) func() uint64 {
	if !j.TimeBased && j.Loops < 1<<20 {
		j.Loops = 1 << 20
	}
	size := int64(blocks) * j.BS
	name := j.Filename
	if name == "" {
		name = "/dev/nvme0n1"
	}
	g := newIOGen(j, jobLayout{Files: []fileRegion{{Path: name, IOSize: size, RealSize: size}}, Size: size}, index)
	return func() uint64 {
		_, _, off, _, ok := g.next()
		if !ok {
			panic("the generator ended")
		}
		return uint64(off / j.BS)
	}
}
