package bench

// ioOp is what an I/O does.
type ioOp uint8

// The operations a job issues.
const (
	opRead      ioOp = iota // = Read
	opWrite                 // = Write
	opFsync                 // fsync(2) of the file (fio's fsync=N, end_fsync)
	opFdatasync             // fdatasync(2) (fio's fdatasync=N)
)

// genFile is one file (or device) a job does I/O on, as the generator sees
// it: the region of it the job covers, in blocks of the job's bs.
type genFile struct {
	start  int64  // first byte of the region
	blocks uint64 // the region's size in bs-blocks
}

// ioGen picks each I/O of a job — direction, file, offset, length — the
// way fio's get_io_u and fill_io_u do, and says when a size-based job has
// issued all it should. One per job thread; nothing here allocates per
// I/O.
type ioGen struct {
	j      *Job
	files  []genFile
	file   int // the file the next I/O goes to
	random bool
	reads  bool
	writes bool
	mix    uint64 // rwmixread
	bs     int64

	dirRand rng
	pick    *picker     // random jobs: which I/Os are random and their blocks
	seqNext [][2]uint64 // per file, per direction: the next sequential block

	total   uint64 // bytes a size-based job issues
	issued  uint64
	timeEnd bool // time_based: never done
}

// newIOGen sets up the generator of job j, at index among the run's jobs
// (fio's thread_number - 1), over files.
func newIOGen(j *Job, files []genFile, index int) *ioGen {
	g := &ioGen{j: j, files: files, random: j.Random(), reads: j.Reads(), writes: j.Writes(), mix: uint64(j.RWMixRead),
		bs: j.BS, dirRand: newRand(j.seeds(index)[seedMix]), timeEnd: j.TimeBased, seqNext: make([][2]uint64, len(files))}
	if g.random {
		g.pick = newPicker(j, files, []string{j.Filename}, index)
	}
	for _, f := range files {
		g.total += f.blocks * uint64(j.BS)
	}
	if j.IOSize > 0 {
		// io_size: this much I/O, over the region as often as it takes.
		g.total = uint64(j.IOSize)
	}
	return g
}

// next returns the next I/O; ok is false when a size-based job has issued
// its size.
func (g *ioGen) next() (op ioOp, file int, off int64, n uint32, ok bool) {
	if !g.timeEnd && g.issued >= g.total {
		return 0, 0, 0, 0, false
	}
	op = opRead
	if !g.reads || (g.writes && g.dirRand.below(100) >= g.mix) {
		op = opWrite
	}
	file = g.file
	f := &g.files[file]
	blk := g.seqNext[file][op]
	if g.random {
		blk = g.pick.next(file, op, blk)
	} else if blk >= f.blocks {
		blk = 0
	}
	g.seqNext[file][op] = blk + 1 // a sequential I/O goes on from the last one (fio's last_pos)
	g.issued += uint64(g.bs)
	return op, file, f.start + int64(blk)*g.bs, uint32(g.bs), true
}
