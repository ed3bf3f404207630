package bench

import (
	"math"

	"iolab/bench/engine"
	"iolab/bench/randgen"
)

// ioOp is what an I/O does: the engines' own type, since the loop hands
// each I/O's to its engine as it is.
type ioOp = engine.Op

// The operations a job issues.
const (
	opRead      = engine.OpRead      // = Read
	opWrite     = engine.OpWrite     // = Write
	opTrim      = engine.OpTrim      // = Trim
	opFsync     = engine.OpFsync     // fsync(2) of the file (fio's fsync=N, end_fsync)
	opFdatasync = engine.OpFdatasync // fdatasync(2) (fio's fdatasync=N)
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
	trims  bool
	// trimWrite: rw=trimwrite or randtrimwrite, each block trimmed and
	// then written (iogen_trim.go).
	trimWrite bool
	mix       uint64 // rwmixread

	// fio's read/write mix (get_rw_ddir): the direction drawn last
	// (td->rwmix_ddir), the count of its I/Os issued at which fio draws
	// again (rwmix_issues), the I/Os issued in each direction (io_issues;
	// fsync=N counts the writes) and the mix's own generator
	// (rwmix_state, always 32-bit).
	mixDir    ioOp
	mixIssues uint64
	issues    [3]uint64
	mixRand   randgen.Taus88

	seeds randSeeds // fio's seed slots for this job (randseed.go)
	index int       // the job's place in the run, for the picker's seeds
	pick  *picker   // random jobs: generator, distribution, random map

	files  []genFile
	fileAt fileService

	// Block sizes and alignment per direction, and each direction's
	// generator of bsrange and bssplit sizes (fio's bsrange_state).
	minBS, maxBS, align [3]int64
	bsRand              [3]randgen.Frand

	seqNr, seqLeft int  // rw=randread:N: random every seqNr I/Os
	identical      bool // rw_sequencer=identical
	strided        bool // zonemode=strided on the job's one file
	zoneBytes      int64

	passLimit  uint64 // bytes per pass (fio's o->size)
	passBreak  uint64 // bytes after which a pass ends: passLimit, or none (syncEngine)
	limit      uint64 // bytes in all (io_size or size, times loops); trimwrite's writes only
	issuedAll  uint64 // bytes issued in every direction (keep_running's ddir_rw_sum)
	maxIOs     uint64 // number_ios times loops; 0: none
	loopsLeft  int
	passIssued uint64
	passDone   uint64 // bytes of this pass, for "a pass that did nothing ends the job"
	issued     uint64
	ios        uint64
	timeEnd    bool // time_based: never done
	ended      bool

	genSync // fsync=N, fdatasync=N

	// reseeds counts the passes that re-seeded the job's random
	// sources (fio's clear_io_state): the loop's own (cmdprio) follow.
	reseeds int

	// rate is fio's rate_ddir for a job with a rate (pacer_linux.go): it
	// may wait, or switch the direction; false ends the job.
	rate func(ioOp) (ioOp, bool)
}

// newIOGen sets up the generator of job j, at index among the run's jobs
// (fio's thread_number - 1), over the regions of its files (jobLayout).
func newIOGen(j *Job, lay jobLayout, index int) *ioGen {
	g := &ioGen{j: j, random: j.Random(), reads: j.Reads(), writes: j.Writes(), trims: j.Trims(), trimWrite: j.TrimWrite(), mix: uint64(j.RWMixRead),
		seeds: j.seeds(index), index: index, timeEnd: j.TimeBased, seqNr: max(j.RWSeqNr, 1)}
	// fio starts td->ddir_seq_nr at 1, not at N (init.c): the first
	// I/O of rw=randread:N is random.
	g.seqLeft = 1
	g.setupFiles(lay)
	g.seedDraws()
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
	if g.trimWrite {
		// fio's do_io: each byte is trimmed and then written, so a pass
		// may issue its bytes and the job's in all (total_io_size), and
		// twice number_ios; the job's size counts its writes alone
		// (io_bytes_exceeded: td_write).
		g.passBreak += g.limit
		g.maxIOs *= 2
	}
	g.startPass(true)
	return g
}

// next returns the next I/O; ok is false when a size-based job has issued
// its size.
func (g *ioGen) next() (op ioOp, file int, off int64, n uint32, ok bool) {
	for {
		if g.ended || g.sizeIssued() {
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
		op, file, off, n, ok = g.place()
		if !ok {
			// Every file is done: the pass ends (fio's do_io returns).
			if g.ended || !g.nextPass() {
				return 0, 0, 0, 0, false
			}
			continue
		}
		g.issues[op]++ // fio's td_io_queue counts it; the loop queues it next
		if !g.trimWrite || op == opWrite {
			g.issued += uint64(n)
		}
		g.issuedAll += uint64(n)
		g.passIssued += uint64(n)
		g.passDone += uint64(n)
		g.ios++
		return op, file, off, n, true
	}
}

// sizeIssued reports whether a size-based job has issued its size (fio's
// io_issue_bytes_exceeded): its next I/O, if asked, would be none.
func (g *ioGen) sizeIssued() bool {
	return !g.timeEnd && (g.issued >= g.limit || (g.maxIOs > 0 && g.ios >= g.maxIOs))
}

// direction is the direction of the next read or write, as fio's
// get_rw_ddir draws it for a job that does both: a new draw (1 to 100,
// reads up to rwmixread) only once the direction drawn last has issued
// rwmix_issues I/Os in all, and on a change of direction rwmix_issues
// becomes the I/Os the old direction has issued in all times the new
// one's share (set_rwmix_bytes): the new direction keeps the turn until
// its own count catches up with that.
func (g *ioGen) direction() ioOp {
	switch {
	case g.trims && !g.writes:
		return opTrim
	case !g.writes:
		return opRead
	case !g.reads:
		return opWrite
	}
	if g.issues[g.mixDir] >= g.mixIssues {
		d := opWrite
		if uint64(g.mixRand.Between(1, 100)) <= g.mix {
			d = opRead
		}
		if d != g.mixDir {
			share := g.mix
			if d == opWrite {
				share = 100 - g.mix
			}
			g.mixIssues = g.issues[g.mixDir] * share / 100
		}
		g.mixDir = d
	}
	return g.mixDir
}

// seedDraws (re)seeds the generators of the mix, the block sizes and
// file_service_type=random from the job's seeds, as fio's
// td_fill_rand_seeds does: 64-bit ones with random_generator=tausworthe64
// (or once fio has switched to it for a file of more than 2^32 blocks),
// except the mix's; a verifying job's writes draw their sizes from the
// reads' seed (so that its reads back match them).
func (g *ioGen) seedDraws() {
	use64 := g.use64()
	g.mixRand = randgen.NewTaus88(g.seeds[seedMix])
	wseed := g.seeds[seedBS1]
	if g.j.Verify != "" {
		wseed = g.seeds[seedBS]
	}
	g.bsRand = [3]randgen.Frand{randgen.NewFrand(g.seeds[seedBS], use64), randgen.NewFrand(wseed, use64), randgen.NewFrand(g.seeds[seedBS2], use64)}
	g.fileAt.rand = randgen.NewFrand(g.seeds[seedFile], use64)
}

// use64 reports whether the job's generators are 64-bit: with
// random_generator=tausworthe64, or once fio has switched to it for a
// file of more than 2^32 blocks (td_fill_rand_seeds' use64).
func (g *ioGen) use64() bool {
	return g.j.RandomGenerator == genTausworthe64 || (g.pick != nil && g.pick.gen == genTausworthe64)
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
		// fio's keep_running counts every direction's bytes: a
		// trimwrite job's trims too.
		done := g.issued
		if g.trimWrite {
			done = g.issuedAll
		}
		if done < limit && limit-done >= uint64(max(g.maxBS[Read], g.maxBS[Write], g.maxBS[Trim])) &&
			(g.j.IOSize > 0 || g.doneFiles() < len(g.files)) {
			g.startPass(false)
			return true
		}
	}
	g.ended = true
	return false
}
