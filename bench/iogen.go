package bench

import "math"

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

	dirRand rng
	seeds   randSeeds // fio's seed slots for this job (randseed.go)
	index   int       // the job's place in the run, for the picker's seeds
	pick    *picker   // random jobs: generator, distribution, random map

	files  []genFile
	fileAt fileService

	// Block sizes, alignment and the random-map unit per direction.
	minBS, maxBS, align [2]int64
	bsRand              rng
	mapUnit             int64 // the random map's block: the smallest block size

	seqNr, seqLeft int  // rw=randread:N: random every seqNr I/Os
	identical      bool // rw_sequencer=identical
	strided        bool // zonemode=strided on the job's one file
	zoneBytes      int64

	passLimit  uint64 // bytes per pass (fio's o->size)
	passBreak  uint64 // bytes after which a pass ends: passLimit, or none (syncEngine)
	limit      uint64 // bytes in all (io_size or size, times loops)
	maxIOs     uint64 // number_ios times loops; 0: none
	loopsLeft  int
	passIssued uint64
	passDone   uint64 // bytes of this pass, for "a pass that did nothing ends the job"
	issued     uint64
	ios        uint64
	timeEnd    bool // time_based: never done
	ended      bool

	genSync // fsync=N, fdatasync=N
}

// newIOGen sets up the generator of job j, at index among the run's jobs
// (fio's thread_number - 1), over the regions of its files (jobLayout).
func newIOGen(j *Job, lay jobLayout, index int) *ioGen {
	g := &ioGen{j: j, random: j.Random(), reads: j.Reads(), writes: j.Writes(), mix: uint64(j.RWMixRead),
		seeds: j.seeds(index), index: index, timeEnd: j.TimeBased, seqNr: max(j.RWSeqNr, 1)}
	g.dirRand, g.bsRand = newRand(g.seeds[seedMix]), newRand(g.seeds[seedBS])
	g.seqLeft = g.seqNr
	g.setupFiles(lay)
	loops := uint64(max(j.Loops, 1))
	g.loopsLeft = max(j.Loops, 1)
	g.passLimit = uint64(lay.Size)
	g.passBreak = g.passLimit
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
		if !g.timeEnd && g.passIssued >= g.passBreak {
			if !g.nextPass() {
				return 0, 0, 0, 0, false
			}
			continue
		}
		if sync, due := g.syncDue(); due {
			// A sync goes to the file the next I/O would (set_io_u_file
			// picks the file before fill_io_u picks the direction).
			if i := g.pickFile(); i >= 0 {
				return sync, i, 0, 0, true
			}
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

// syncEngine tells the generator the job's engine does each I/O inside
// its submit (psync, fio's FIO_Q_COMPLETED): fio's do_io counts only I/O
// an engine queues against the pass's size, so with such an engine a pass
// ends when its files are done — when a random job's map is full, the
// draw that found no free block spent — and never on its byte count.
func (g *ioGen) syncEngine() { g.passBreak = math.MaxUint64 }

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
