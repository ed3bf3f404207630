package bench

// holds records when the engine held a paced job's thread — inside a
// submit or a reap — so that an I/O's latency from its intended start
// counts what the device did to it and not what the generator did.
//
// An I/O that went out after it was due was held back by one of two
// things. The device: the job was inside a submit that stalled, or
// waiting for a completion to free a slot, when the I/O fell due. Or the
// generator: a sleep that overshot, a thread the CPU scheduler ran late,
// the job's own work. Only the first is the device's latency (the
// coordinated omission that fio's lat hides); counting the second would
// make a loaded machine look like a slow device. So the latency from the
// intended start is fio's lat plus the time the engine held the job from
// the due time on, counted when the engine was holding the job at the
// due time; it equals lat when the I/O fell due while the job was free.
type holds struct {
	ring  []hold // the latest holds, oldest at head
	head  int
	n     int
	lost  bool  // older holds were dropped from the ring
	total int64 // the time of every hold so far, in ns
}

// hold is one engine call: from start to end, with the time of the
// holds before it.
type hold struct{ start, end, before int64 }

// holdsKept bounds the ring: an I/O that fell due more engine calls ago
// than this is so late that the device held it all along (heldSince).
const holdsKept = 1024

func newHolds() *holds { return &holds{ring: make([]hold, holdsKept)} }

// add records an engine call from start to end (loop times, in order).
func (h *holds) add(start, end int64) {
	if end <= start {
		return
	}
	i := (h.head + h.n) % len(h.ring)
	if h.n == len(h.ring) {
		h.head = (h.head + 1) % len(h.ring)
		h.lost = true
	} else {
		h.n++
	}
	h.ring[i] = hold{start, end, h.total}
	h.total += end - start
}

func (h *holds) at(k int) *hold { return &h.ring[(h.head+k)%len(h.ring)] }

// heldSince is how long the engine has held the job since due, when it
// was holding the job at due: the rest of that hold and every hold after
// it. It is 0 when the job was free at due. -1 means the hold that held
// it was dropped from the ring: the job was held from due on.
func (h *holds) heldSince(due int64) int64 {
	if h.n == 0 {
		return 0
	}
	if due < h.at(0).start {
		if h.lost {
			return -1
		}
		return 0
	}
	// The last hold that started at or before due.
	lo, hi := 0, h.n
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if h.at(mid).start <= due {
			lo = mid
		} else {
			hi = mid
		}
	}
	k := h.at(lo)
	if due >= k.end {
		return 0
	}
	return h.total - (k.before + due - k.start)
}
