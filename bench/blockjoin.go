package bench

import (
	"math"

	"iolab/bench/blocktrace"
)

// blockJoin joins a traced group's I/Os, as its job loops timed them, with
// the bios the block layer's trace saw (bench/blocktrace's paired records)
// into each direction's BlockTime (result_block.go). An I/O is joined with
// the bios on its device that start at its first sector and were queued
// (or, for a split's pieces, which the kernel never queues, completed)
// between its start and its reaping; one bio covering it exactly is
// one-to-one and its parts go into the histograms, several are a split, one
// whose request held other bios, or one larger than the I/O, a merge, none
// unmatched. Bios of other
// processes are counted as foreign.
//
// I/Os and bios arrive in batches, in different orders and late: an I/O
// waits until settle is told that every bio completed before its reaping
// has arrived; a bio waits for an I/O until settle's horizon has passed
// its completion by bioKeep. Both waits are bounded by time, so what is
// held does not grow with a run's length, and the slab and queues are
// reused, so a long run allocates nothing once they have grown.
type blockJoin struct {
	// disk maps a traced device (a partition's, or the disk's) to its
	// disk's: bios carry a partition's device and requests the disk's,
	// with sectors of the disk.
	disk map[uint32]uint32

	slab   []pendingBio
	free   []int32
	byKey  map[bioKey]int32 // the newest bio at a sector; older ones follow next
	order  []int32          // the bios held, in arrival order (roughly of completion)
	orderH int              // order's head

	ios  []joinIO // the I/Os waiting for their bios, in arrival order
	iosH int

	// out is each job's BlockTime per direction, of its I/Os started
	// from from[job] on (its window's latest opening).
	out  [][3]BlockTime
	from []int64
	// foreign counts other processes' bios queued from foreignFrom on.
	foreign     uint64
	foreignFrom int64
}

// bioKeep is how long after its completion a bio that no I/O claimed is
// held: the I/O it belongs to reaches the join within a job's flush
// interval of its reaping (blockFlushAfter).
const bioKeep = 5_000_000_000

// joinIO is one I/O of a job, on CLOCK_MONOTONIC and the disk's sectors.
type joinIO struct {
	dev         uint32 // the disk's
	sector      uint64
	sectors     uint32
	start, reap int64
	job         int32
	dir         uint8
	miss        uint8 // missUnmatched or missSplit: a file's I/O its extents cannot place (blockextent.go)
}

type bioKey struct {
	dev    uint32
	sector uint64
}

type pendingBio struct {
	b    blocktrace.Bio
	at   int64 // Queue, or Complete for a piece never queued
	next int32 // the next older bio at the same key, or -1
	live bool  // not yet claimed or dropped
}

func newBlockJoin(disk map[uint32]uint32, jobs int) *blockJoin {
	return &blockJoin{disk: disk, byKey: map[bioKey]int32{}, out: make([][3]BlockTime, jobs), from: make([]int64, jobs), foreignFrom: math.MaxInt64}
}

// restart drops what job measured before at: its window opened again
// (latency_target), and its counts start over.
func (bj *blockJoin) restart(job int32, at int64) {
	bj.out[job] = [3]BlockTime{}
	bj.from[job] = at
}

// addBios takes a batch of the trace's bios.
func (bj *blockJoin) addBios(bios []blocktrace.Bio) {
	for i := range bios {
		b := &bios[i]
		queued := b.Queue != 0
		if queued && !b.Own {
			if b.Queue >= bj.foreignFrom {
				bj.foreign++
			}
			continue
		}
		disk, ok := bj.disk[b.Dev]
		if !ok {
			continue
		}
		var n int32
		if k := len(bj.free); k > 0 {
			n, bj.free = bj.free[k-1], bj.free[:k-1]
		} else {
			bj.slab = append(bj.slab, pendingBio{})
			n = int32(len(bj.slab) - 1)
		}
		p := &bj.slab[n]
		p.b, p.at, p.live = *b, b.Queue, true
		if !queued {
			p.at = b.Complete
		}
		key := bioKey{disk, b.Sector}
		p.next = -1
		if h, ok := bj.byKey[key]; ok {
			p.next = h
		}
		bj.byKey[key] = n
		bj.order = append(bj.order, n)
	}
}

// addIO takes one I/O.
func (bj *blockJoin) addIO(io joinIO) { bj.ios = append(bj.ios, io) }

// settle joins every I/O reaped before horizon — every bio completed
// before it has arrived — and lets go of the bios completed more than
// bioKeep before it.
func (bj *blockJoin) settle(horizon int64) {
	for bj.iosH < len(bj.ios) && bj.ios[bj.iosH].reap < horizon {
		bj.join(&bj.ios[bj.iosH])
		bj.iosH++
	}
	if bj.iosH == len(bj.ios) {
		bj.ios, bj.iosH = bj.ios[:0], 0
	} else if bj.iosH > len(bj.ios)/2 {
		bj.ios = bj.ios[:copy(bj.ios, bj.ios[bj.iosH:])]
		bj.iosH = 0
	}
	for bj.orderH < len(bj.order) {
		n := bj.order[bj.orderH]
		p := &bj.slab[n]
		if p.live && horizon != math.MaxInt64 && p.b.Complete >= horizon-bioKeep {
			break
		}
		if p.live {
			bj.drop(n)
		}
		bj.free = append(bj.free, n)
		bj.orderH++
	}
	if bj.orderH > len(bj.order)/2 {
		bj.order = bj.order[:copy(bj.order, bj.order[bj.orderH:])]
		bj.orderH = 0
	}
}

// drop unlinks bio n from its key's chain.
func (bj *blockJoin) drop(n int32) {
	p := &bj.slab[n]
	p.live = false
	key := bioKey{bj.disk[p.b.Dev], p.b.Sector}
	h, ok := bj.byKey[key]
	if !ok {
		return
	}
	if h == n {
		if p.next < 0 {
			delete(bj.byKey, key)
		} else {
			bj.byKey[key] = p.next
		}
		return
	}
	for h >= 0 {
		q := &bj.slab[h]
		if q.next == n {
			q.next = p.next
			return
		}
		h = q.next
	}
}

// maxPieces bounds the walk over a split I/O's pieces.
const maxPieces = 256

// join files io under its job and direction.
func (bj *blockJoin) join(io *joinIO) {
	if io.start < bj.from[io.job] {
		return // before its window's restart
	}
	bt := &bj.out[io.job][io.dir]
	switch io.miss {
	case missUnmatched:
		bt.Unmatched++
		return
	case missSplit:
		bt.Split++
		return
	}
	// The bios at io's first sector in its time. Whole ones (queued,
	// covering io exactly) are claimed oldest first: of two I/Os of one
	// sector in flight one after the other, the first reaped takes the
	// first queued. A piece never queued, or one covering part of io,
	// makes it a split.
	var first, bigFirst int32 = -1, -1
	n, whole, bigger := 0, 0, 0
	for h := bj.at(io.dev, io.sector); h >= 0; h = bj.slab[h].next {
		if !bj.fits(h, io) {
			continue
		}
		n++
		p := &bj.slab[h]
		switch {
		case !p.b.Split && p.b.Sectors == io.sectors:
			whole++
			if first < 0 || p.at < bj.slab[first].at {
				first = h
			}
		case !p.b.Split && p.b.Sectors > io.sectors:
			bigger++
			if bigFirst < 0 || p.at < bj.slab[bigFirst].at {
				bigFirst = h
			}
		}
	}
	if n == 0 {
		bt.Unmatched++
		return
	}
	if bigger == n {
		// A bio larger than the I/O from its first sector on: the I/O was
		// one of several in it (the page cache's readahead, a plug's
		// merge before the bio was made).
		bj.drop(bigFirst)
		bt.Merged++
		return
	}
	if whole == n {
		b := bj.slab[first].b
		bj.drop(first)
		switch {
		case b.Merged:
			bt.Merged++
		case !b.BioBased && b.Issue == 0:
			bt.Unmatched++ // its request was not seen issued
		default:
			bj.addParts(bt, io, &b)
		}
		return
	}
	// Split: the kernel queued the I/O whole and cut a front piece off it
	// (never queued), or the I/O's bios each cover part of it. Claim
	// every bio of its time at each sector from its first on; with every
	// piece seen, the I/O is timed over its pieces (splitParts).
	bt.Split++
	var sp splitTimes
	sector := io.sector
	for range maxPieces {
		covered := uint32(0)
		for h := bj.at(io.dev, sector); h >= 0; {
			next := bj.slab[h].next
			if p := &bj.slab[h]; bj.fits(h, io) {
				if p.b.Split || p.b.Sector+uint64(p.b.Sectors) <= io.sector+uint64(io.sectors) {
					covered = max(covered, p.b.Sectors)
				}
				sp.add(&p.b)
				bj.drop(h)
			}
			h = next
		}
		sector += uint64(covered)
		if covered == 0 {
			return // a piece not seen: the split is counted, not timed
		}
		if sector >= io.sector+uint64(io.sectors) {
			bj.splitParts(bt, io, &sp)
			return
		}
	}
}

// splitTimes are a split I/O's times over its pieces: the first queueing
// (the I/O's bio before the kernel cut it), the first issue and the last
// completion; untimed when a piece came from a merged request or a
// request not seen issued.
type splitTimes struct {
	queue, issue, complete int64
	bioBased, untimed      bool
}

func (s *splitTimes) add(b *blocktrace.Bio) {
	if b.Merged || (!b.BioBased && b.Issue == 0) {
		s.untimed = true
	}
	s.bioBased = s.bioBased || b.BioBased
	if b.Queue > 0 && (s.queue == 0 || b.Queue < s.queue) {
		s.queue = b.Queue
	}
	if b.Issue > 0 && (s.issue == 0 || b.Issue < s.issue) {
		s.issue = b.Issue
	}
	s.complete = max(s.complete, b.Complete)
}

// splitParts files a split I/O whose pieces were all seen under the
// four parts, taken over its pieces so that they add up to its lat:
// submit to its queueing, queue to its first piece's issue, device to
// its last piece's completion.
func (bj *blockJoin) splitParts(bt *BlockTime, io *joinIO, s *splitTimes) {
	if s.untimed || s.queue == 0 {
		return
	}
	issue := s.issue
	if s.bioBased {
		issue = s.queue
	}
	submit, queue, device, completion := s.queue-io.start, issue-s.queue, s.complete-issue, io.reap-s.complete
	if submit < 0 || queue < 0 || device < 0 || completion < 0 {
		return
	}
	bt.SplitTimed++
	bt.AddTimed(submit, queue, device, completion)
}

// at is the newest bio held at a sector of dev, or -1.
func (bj *blockJoin) at(dev uint32, sector uint64) int32 {
	if h, ok := bj.byKey[bioKey{dev, sector}]; ok {
		return h
	}
	return -1
}

// fits reports whether bio h can be io's: queued (or, never queued,
// completed) after io started, and completed before io was reaped.
func (bj *blockJoin) fits(h int32, io *joinIO) bool {
	p := &bj.slab[h]
	return p.live && p.at >= io.start && p.b.Complete <= io.reap && p.b.Complete >= io.start
}

// addParts splits a one-to-one I/O's lat into its four parts, which add
// up to it exactly.
func (bj *blockJoin) addParts(bt *BlockTime, io *joinIO, b *blocktrace.Bio) {
	submit := b.Queue - io.start
	var queue, device int64
	if b.BioBased {
		device = b.Complete - b.Queue
	} else {
		queue, device = b.Issue-b.Queue, b.Complete-b.Issue
	}
	completion := io.reap - b.Complete
	if queue < 0 || device < 0 {
		bt.Unmatched++ // an issue before the queueing: not this I/O's request
		return
	}
	bt.OneToOne++
	bt.AddTimed(submit, queue, device, completion)
}
