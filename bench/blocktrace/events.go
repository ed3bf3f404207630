package blocktrace

import (
	"encoding/binary"
	"fmt"
)

// Kind is what a block event says happened, by blktrace's action letter.
type Kind uint8

// The events the tracer records, each from one tracepoint of
// include/trace/events/block.h.
const (
	Queue       Kind = iota // Q: block_bio_queue, a bio enters the block layer
	GetRq                   // G: block_getrq, a request is allocated for it
	Insert                  // I: block_rq_insert, into the I/O scheduler
	Issue                   // D: block_rq_issue, to the driver
	Complete                // C: block_rq_complete
	BackMerge               // M: block_bio_backmerge, appended to a request
	FrontMerge              // F: block_bio_frontmerge
	BioComplete             // C of a bio-based driver (zram): block_bio_complete
	Split                   // X: block_split
	Requeue                 // R: block_rq_requeue, back from the driver to be issued again
	numKinds
)

// tracepoints are the kinds' tracepoints, in Kind order.
var tracepoints = [numKinds]string{
	"block_bio_queue", "block_getrq", "block_rq_insert", "block_rq_issue", "block_rq_complete",
	"block_bio_backmerge", "block_bio_frontmerge", "block_bio_complete", "block_split", "block_rq_requeue",
}

// Letter is the kind's blktrace action letter.
func (k Kind) Letter() byte {
	if k >= numKinds {
		return '?'
	}
	return "QGIDCMFCXR"[k]
}

func (k Kind) String() string {
	if k >= numKinds {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return tracepoints[k]
}

// Event is one tracepoint hit on a traced device.
type Event struct {
	Time   int64  // CLOCK_MONOTONIC, ns (bpf_ktime_get_ns)
	Sector uint64 // first 512-byte sector
	// Sectors is the length; for a Complete, the sectors completed (a
	// request may complete in parts).
	Sectors uint32
	Dev     uint32 // the kernel's dev_t: major<<20 | minor
	TID     uint32 // the thread the tracepoint fired in
	Kind    Kind
	// Op is the operation as blktrace's rwbs letter: 'R', 'W', 'D'
	// (discard), 'F' (flush), 'N' (other).
	Op byte
	// Own: the thread belongs to the traced process (for a Queue, the
	// bio is one of its own; a request's later events fire anywhere).
	Own bool
	// Ptr is the kernel's address of the bio (bio events) or request
	// (request events): what pairs events exactly, where btt pairs them
	// by sector. Link is a request's first bio; for a Split, the sector
	// the rest of the bio goes on at.
	Ptr, Link uint64
}

// eventSize is the size of an event record in the ring buffer:
// time, sector, ptr, link, sectors, dev, tid, kind, op, own.
const eventSize = 48

// opLetter is the letter of the kernel's REQ_OP_ number.
func opLetter(op uint8) byte {
	switch op {
	case 0:
		return 'R'
	case 1, 9: // write, write zeroes
		return 'W'
	case 2:
		return 'F'
	case 3, 5: // discard, secure erase
		return 'D'
	}
	return 'N'
}

func decodeEvent(b []byte) Event {
	le := binary.LittleEndian
	return Event{
		Time:    int64(le.Uint64(b[0:])),
		Sector:  le.Uint64(b[8:]),
		Ptr:     le.Uint64(b[16:]),
		Link:    le.Uint64(b[24:]),
		Sectors: le.Uint32(b[32:]),
		Dev:     le.Uint32(b[36:]),
		TID:     le.Uint32(b[40:]),
		Kind:    Kind(b[44]),
		Op:      opLetter(b[45]),
		Own:     b[46] != 0,
	}
}
