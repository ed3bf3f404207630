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

// ioGen picks each I/O of a job — direction, file, offset, length — the
// way fio's get_io_u and fill_io_u do, and says when a size-based job has
// issued all it should. One per job thread; nothing here allocates per
// I/O. Files, offsets and lengths are in iogen_files.go.
type ioGen struct {
	j      *Job
	random bool
	reads  bool
	writes bool
	mix    uint64 // rwmixread

	dirRand, offRand rng
	seed             uint64

	files  []genFile
	fileAt fileService

	// Block sizes, alignment and the random-map unit per direction.
	minBS, maxBS, align [2]int64
	bsRand              rng
	fixedMap            bool // every block the same size: a blockPerm per file
	mapUnit             int64

	seqNr, seqLeft int  // rw=randread:N: random every seqNr I/Os
	identical      bool // rw_sequencer=identical
	strided        bool // zonemode=strided on the job's one file
	zoneBytes      int64

	passLimit  uint64 // bytes per pass (fio's o->size)
	limit      uint64 // bytes in all (io_size or size, times loops)
	maxIOs     uint64 // number_ios times loops; 0: none
	loopsLeft  int
	passIssued uint64
	passDone   uint64 // bytes of this pass, for "a pass that did nothing ends the job"
	issued     uint64
	ios        uint64
	timeEnd    bool // time_based: never done
	ended      bool
}

// newIOGen sets up the generator of clone index of job j over the
// regions of its files (jobLayout).
func newIOGen(j *Job, lay jobLayout, index int) *ioGen {
	seed := j.RandSeed + uint64(index)*0x9e3779b97f4a7c15
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	g := &ioGen{j: j, random: j.Random(), reads: j.Reads(), writes: j.Writes(), mix: uint64(j.RWMixRead),
		dirRand: newRand(seed ^ 0xd1), offRand: newRand(seed ^ 0x0ff), bsRand: newRand(seed ^ 0xb5), seed: seed,
		timeEnd: j.TimeBased, seqNr: max(j.RWSeqNr, 1)}
	g.seqLeft = g.seqNr
	g.setupFiles(lay)
	loops := uint64(max(j.Loops, 1))
	g.loopsLeft = max(j.Loops, 1)
	g.passLimit = uint64(lay.Size)
	g.limit = uint64(lay.Size)
	if j.IOSize > 0 {
		// io_size: this much I/O, over the region as often as it takes.
		g.limit = uint64(j.IOSize)
	}
	g.limit *= loops
	g.maxIOs = j.NumberIOs * loops
	g.startPass(true)
	return g
}

// next returns the next I/O; ok is false when a size-based job has issued
// its size.
func (g *ioGen) next() (op ioOp, file int, off int64, n uint32, ok bool) {
	for {
		if g.ended || (!g.timeEnd && (g.issued >= g.limit || (g.maxIOs > 0 && g.ios >= g.maxIOs))) {
			return 0, 0, 0, 0, false
		}
		if !g.timeEnd && g.passIssued >= g.passLimit {
			if !g.nextPass() {
				return 0, 0, 0, 0, false
			}
			continue
		}
		op = opRead
		if !g.reads || (g.writes && g.dirRand.below(100) >= g.mix) {
			op = opWrite
		}
		file, off, n, ok = g.place(op)
		if !ok {
			// Every file is done: the pass ends (fio's do_io returns).
			if !g.nextPass() {
				return 0, 0, 0, 0, false
			}
			continue
		}
		g.issued += uint64(n)
		g.passIssued += uint64(n)
		g.passDone += uint64(n)
		g.ios++
		return op, file, off, n, true
	}
}

// nextPass starts the job over once a pass (fio's do_io) has ended, as
// fio's keep_running decides: every loop runs; after the last, io_size
// asks for more passes until it is reached; time_based never ends; a pass
// that did nothing ends the job.
func (g *ioGen) nextPass() bool {
	switch {
	case g.passDone == 0:
	case g.timeEnd:
		g.startPass(false)
		return true
	case g.loopsLeft > 1:
		g.loopsLeft--
		g.startPass(false)
		return true
	case g.maxIOs > 0 && g.ios >= g.maxIOs:
	default:
		limit := uint64(g.j.Size)
		if g.j.IOSize > 0 {
			limit = uint64(g.j.IOSize)
		} else {
			limit = g.passLimit
		}
		if g.issued < limit && limit-g.issued >= uint64(max(g.maxBS[Read], g.maxBS[Write])) &&
			(g.j.IOSize > 0 || g.doneFiles() < len(g.files)) {
			g.startPass(false)
			return true
		}
	}
	g.ended = true
	return false
}
