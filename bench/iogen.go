package bench

import "time"

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

	dirRand, offRand rng
	perm             []blockPerm // per file
	seqNext          [][2]uint64 // per file, per direction: the next sequential block

	total   uint64 // bytes a size-based job issues
	issued  uint64
	timeEnd bool // time_based: never done
}

// newIOGen sets up the generator of clone index of job j over files.
func newIOGen(j *Job, files []genFile, index int) *ioGen {
	seed := j.RandSeed + uint64(index)*0x9e3779b97f4a7c15
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	g := &ioGen{j: j, files: files, random: j.Random(), reads: j.Reads(), writes: j.Writes(), mix: uint64(j.RWMixRead),
		bs: j.BS, dirRand: newRand(seed ^ 0xd1), offRand: newRand(seed ^ 0x0ff), timeEnd: j.TimeBased,
		perm: make([]blockPerm, len(files)), seqNext: make([][2]uint64, len(files))}
	for i, f := range files {
		g.perm[i] = newBlockPerm(f.blocks, seed+uint64(i))
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
	var blk uint64
	switch {
	case !g.random:
		blk = g.seqNext[file][op]
		g.seqNext[file][op]++
		if g.seqNext[file][op] >= f.blocks {
			g.seqNext[file][op] = 0
		}
	case g.j.NoRandomMap:
		blk = g.offRand.below(f.blocks)
	default:
		blk = g.perm[file].next()
	}
	g.issued += uint64(g.bs)
	return op, file, f.start + int64(blk)*g.bs, uint32(g.bs), true
}
