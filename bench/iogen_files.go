package bench

import (
	"math/bits"

	"iolab/bench/randgen"
)

// genFile is one file (or device) a job does I/O on, as the generator sees
// it: fio's struct fio_file, as setup_files leaves it and the job moves it
// on.
type genFile struct {
	start    int64 // where the region starts (get_start_offset)
	ioSize   int64 // the region's length (io_size)
	realSize int64 // the file's size (real_file_size)

	offset    int64    // file_offset now: zonemode=strided moves it
	lastPos   [3]int64 // where each direction's next sequential I/O goes
	lastStart [3]int64 // each direction's last offset; -1: none yet
	done      bool

	idx int // its place in the job's files (and the picker's)
}

// fileService picks the file of each I/O, fio's __get_next_file.
type fileService struct {
	random, sequential bool
	nr                 int           // I/Os per file before switching
	rand               randgen.Frand // random's generator (fio's next_file_state)
	next               int           // round robin's next file
	cur                int           // the file being served; -1: none
	left               int           // I/Os left on it
	nrDone             int           // files done (fio's nr_done_files)
}

// setupFiles takes the job's regions and works out block sizes, alignment
// and the kind of random map (fio's fixup_options and init_random_map).
func (g *ioGen) setupFiles(lay jobLayout) {
	j := g.j
	for i, r := range lay.Files {
		g.files = append(g.files, genFile{start: r.Offset, ioSize: r.IOSize, realSize: r.RealSize, idx: i})
	}
	for d := range Trim + 1 {
		g.minBS[d], g.maxBS[d] = j.BlockSizes(d)
		g.align[d] = j.Align(d)
	}
	g.identical = j.RWSequencer == "identical"
	// fio turns strided zones off for a job with several files open.
	g.strided = j.ZoneMode == "strided" && len(g.files) == 1
	if g.random {
		// fio: any use of blockalign turns the random map off.
		useMap := !j.NoRandomMap && g.align[Read] == g.minBS[Read] && g.align[Write] == g.minBS[Write] && g.align[Trim] == g.minBS[Trim]
		sizes := make([]uint64, len(g.files))
		names := make([]string, len(g.files))
		for i, f := range g.files {
			sizes[i] = uint64(min(f.ioSize, f.realSize))
			if j.ZoneMode == "strided" {
				sizes[i] = uint64(j.ZoneRange) // fio's init_random_map
			}
			names[i] = lay.Files[i].Path
		}
		g.pick = newPicker(j, sizes, names, g.index, g.seeds, useMap)
	}
	g.fileAt = fileService{random: j.FileService == "random", sequential: j.FileService == "sequential",
		nr: max(j.FileServiceNr, 1), cur: -1}
}

// startPass sets the files up for a pass (fio's clear_io_state and the
// file opens after it): regions back at their start, random maps cleared,
// the random sequences started over under randrepeat.
func (g *ioGen) startPass(first bool) {
	// fio's clear_io_state re-seeds a repeatable job for each pass.
	if !first && g.j.repeatable() {
		if g.pick != nil {
			g.pick.reseed()
		}
		g.seedDraws()
		g.reseeds++
	}
	g.passIssued, g.passDone, g.zoneBytes = 0, 0, 0
	g.mixIssues = 0 // reset_io_counters
	// fio resets its count of done files to start over for loops, and
	// (as fio 3.33 shows, psync with io_size past the region) for io_size.
	if first || g.timeEnd || g.j.Loops > 1 || g.j.IOSize > 0 {
		g.fileAt.nrDone = 0
	}
	g.fileAt.cur = -1
	for i := range g.files {
		f := &g.files[i]
		f.offset, f.done = f.start, false
		g.resetFile(f)
	}
}

// resetFile is fio's fio_file_reset.
func (g *ioGen) resetFile(f *genFile) {
	f.lastPos = [3]int64{f.offset, f.offset, f.offset}
	f.lastStart = [3]int64{-1, -1, -1}
	if g.pick != nil {
		g.pick.restart(f.idx)
	}
}

func (g *ioGen) doneFiles() int { return g.fileAt.nrDone }

// place picks the file, direction, offset and length of a read or
// write (fio's set_io_u_file and fill_io_u); ok is false when every file
// is done, or a rate's time is up (ended). As in fio, each file tried
// draws its direction anew (set_rw_ddir is fill_io_u's first step).
func (g *ioGen) place() (op ioOp, file int, off int64, n uint32, ok bool) {
	for {
		i := g.pickFile()
		if i < 0 {
			return 0, 0, 0, 0, false
		}
		op = g.direction()
		if g.trimWrite {
			op = g.trimWriteDir(&g.files[i])
		}
		if g.rate != nil {
			if op, ok = g.rate(op); !ok {
				g.ended = true
				return 0, 0, 0, 0, false
			}
			g.mixDir = op // fio's get_rw_ddir keeps rate_ddir's choice
		}
		if off, n, ok := g.fill(&g.files[i], int(op)); ok {
			return op, i, off, n, true
		}
		// The file has nothing more to give in this pass.
		g.files[i].done = true
		g.fileAt.nrDone++
		g.fileAt.cur = -1
	}
}

// pickFile is fio's __get_next_file: stay on the current file for
// file_service_type's :N I/Os (sequential: until it is done), then take
// the next one round robin or at random, skipping done files.
func (g *ioGen) pickFile() int {
	s := &g.fileAt
	n := len(g.files)
	if s.nrDone >= n {
		return -1
	}
	if s.cur >= 0 && !g.files[s.cur].done {
		if s.sequential {
			return s.cur
		}
		if s.left > 0 {
			s.left--
			return s.cur
		}
	}
	i := -1
	if s.random {
		for {
			// fio's __get_next_fileno_rand; a 64-bit draw can round
			// up to n.
			if i = min(int(s.rand.Scale(uint64(n))), n-1); !g.files[i].done {
				break
			}
		}
	} else {
		for range n {
			k := s.next
			s.next = (s.next + 1) % n
			if !g.files[k].done {
				i = k
				break
			}
		}
		if i < 0 {
			return -1
		}
	}
	s.cur, s.left = i, s.nr-1
	return i
}

// fill works out the offset and length of an I/O on f (fio's fill_io_u,
// get_next_offset, get_next_buflen); ok is false when f is done.
func (g *ioGen) fill(f *genFile, d int) (off int64, n uint32, ok bool) {
	if g.strided {
		g.zone(f, d)
	}
	hit := false
	if g.seqLeft--; g.seqLeft <= 0 {
		hit, g.seqLeft = true, g.seqNr
	}
	isRandom := false
	paired := g.trimWrite && g.random && d == Write
	var pairedSize int64
	switch {
	case paired:
		off, pairedSize = g.pairedWrite(f)
	case hit && g.random && g.pick.random(ioOp(d)):
		b, ok := g.randBlock(f, d)
		if !ok {
			return 0, 0, false
		}
		off, isRandom = int64(b)*g.align[d], true
	case hit || !g.identical:
		if off, ok = g.seqOffset(f, d); !ok {
			if !g.random {
				return 0, 0, false
			}
			b, ok := g.randBlock(f, d)
			if !ok {
				return 0, 0, false
			}
			off = int64(b) * g.align[d]
		}
	default: // identical: the last offset again
		if f.lastStart[d] >= 0 {
			off = f.lastStart[d] - f.offset
		}
	}
	if off >= f.ioSize {
		return 0, 0, false
	}
	off += f.offset
	if off >= f.realSize {
		return 0, 0, false
	}
	if g.trimWrite && g.random && d == Trim && f.lastStart[Trim] == off {
		// fio: a trim drawn where the last pair was would look like a
		// pair done; moving the last write's start keeps the next I/O
		// its write.
		f.lastStart[Write]--
	}
	size := g.buflen(f, d, off)
	if paired {
		size = pairedSize
	}
	if size == 0 || off+size > f.realSize {
		return 0, 0, false
	}
	if isRandom && g.pick.mapped(f.idx) {
		size = g.mark(f, d, off, size)
	}
	f.lastStart[d], f.lastPos[d] = off, off+size
	g.zoneBytes += size
	return off, uint32(size), true
}

// zone is fio's setup_strided_zone_mode: after zonesize bytes, move on by
// zonerange+zoneskip (back to the start past the end of the file).
func (g *ioGen) zone(f *genFile, d int) {
	j := g.j
	if g.zoneBytes >= j.ZoneSize {
		g.zoneBytes = 0
		f.offset += j.ZoneRange + j.ZoneSkip
		if f.offset >= f.realSize {
			f.offset = f.start
		}
		f.lastPos[d] = f.offset
	}
	if f.lastPos[d] >= f.offset+j.ZoneRange {
		f.lastPos[d] = f.offset
	}
	if g.zoneBytes%j.ZoneRange == 0 {
		g.resetFile(f)
	}
}

// seqOffset is fio's get_next_seq_offset: the end of the last I/O, plus
// rw's :N hole, relative to the region's start.
func (g *ioGen) seqOffset(f *genFile, d int) (int64, bool) {
	add := g.j.RWSeqAdd
	if f.lastPos[d] >= f.ioSize+f.start && g.timeEnd && len(g.files) == 1 {
		f.lastPos[d] = f.offset
	}
	if f.lastPos[d] >= f.realSize {
		return 0, false
	}
	end := f.realSize
	if f.realSize > f.ioSize {
		end = f.ioSize
	}
	if f.lastPos[d] == f.offset && f.offset != 0 && add < 0 {
		f.lastPos[d] = end
	}
	pos := f.lastPos[d] - f.offset
	if pos != 0 && add != 0 {
		pos += add
		// Past the end (or, going backwards, before the start: fio's
		// unsigned pos wraps), it goes round.
		if pos < 0 || pos >= f.realSize {
			if add > 0 {
				pos = f.offset
			} else {
				pos = end + add
			}
		}
	}
	return pos, true
}

// lastBlock is fio's last_block: how many aligned blocks random offsets
// are drawn from.
func (g *ioGen) lastBlock(f *genFile, d int) uint64 {
	size := min(f.ioSize, f.realSize)
	if g.strided && g.j.ZoneRange > 0 {
		size = g.j.ZoneRange
	}
	if g.minBS[d] > g.align[d] {
		size -= g.minBS[d] - g.align[d]
	}
	if size <= 0 {
		return 0
	}
	return uint64(size / g.align[d])
}

// randBlock is fio's get_next_rand_block: a random aligned block not yet
// used in this pass; a time-based job starts the file over when all are.
func (g *ioGen) randBlock(f *genFile, d int) (uint64, bool) {
	b, ok := g.randOffset(f, d)
	if !ok && g.timeEnd {
		g.resetFile(f)
		b, ok = g.randOffset(f, d)
	}
	return b, ok
}

func (g *ioGen) randOffset(f *genFile, d int) (uint64, bool) {
	lastb := g.lastBlock(f, d)
	if lastb == 0 {
		return 0, false
	}
	return g.pick.draw(f.idx, d, lastb)
}

// mark records a random I/O in direction d in the random map, cut short
// at the first block already done (fio's mark_random_map). fio counts
// the I/O's blocks in d's smallest block size (io_u.c:43), the map's bits
// in the smallest of all (rw_min_bs, filesetup.c:1541): where the
// directions' sizes differ, the larger marks a bit per block of its own,
// as if the map's bits were its blocks — the bits its draws look up the
// same way (picker.uniform). fio's bug, copied for the bytes it makes.
func (g *ioGen) mark(f *genFile, d int, off, size int64) int64 {
	m := g.pick.files[f.idx].bmap
	bs := g.minBS[d]
	first := uint64((off - f.offset) / bs)
	nr := uint64((size + bs - 1) / bs)
	k := m.SetNr(first, nr)
	if k == 0 {
		// fio asserts that a block was marked: the block drawn was free.
		return size
	}
	return min(size, int64(k)*bs)
}

// buflen is fio's get_next_buflen: the I/O's size, drawn from d's own
// generator — bssplit's shares (the first entry, in fio's order by share,
// whose running share covers the draw and that fits), or bsrange's
// smallest plus the draw's share of its largest (not of the range: fio
// 3.33 io_u.c:583, so the largest size, where the overshoot is capped,
// comes up more often than the others, in fio's numbers as in iolab's) —
// aligned down to the smallest size and no larger than the largest,
// drawn again until it fits in the region. 0 when not even the smallest
// fits: the file is done (fill_io_u fails).
func (g *ioGen) buflen(f *genFile, d int, off int64) int64 {
	lo, hi := g.minBS[d], g.maxBS[d]
	if lo == hi {
		return lo
	}
	fits := func(n int64) bool { return off+n <= f.ioSize+f.start }
	if !fits(lo) {
		return 0
	}
	split := g.j.BSSplit[min(d, Write)] // trims take the writes' bssplit
	r := &g.bsRand[d]
	// fio draws until a size fits. The smallest fits, so a split draws
	// one at once; but a split whose smallest size has no share (its
	// share filled in as 0) can draw none that fits, where fio spins for
	// ever: after many draws iolab takes the smallest.
	for range 1000 {
		v := r.Next()
		var n int64
		if len(split) == 0 {
			n = lo + int64(float64(hi)*(float64(v)/(float64(r.Max())+1)))
		} else {
			perc := uint64(0)
			for _, e := range split {
				if e.Percent == 0 {
					continue
				}
				n = e.BS
				perc += uint64(e.Percent)
				if v/perc <= r.Max()/100 && fits(n) {
					break
				}
			}
		}
		if bits.OnesCount64(uint64(lo)) == 1 {
			n &^= lo - 1
		} else {
			n -= n % lo
		}
		if n = min(n, hi); fits(n) {
			return n
		}
	}
	return lo
}
