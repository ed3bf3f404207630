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
	// Sectors is the length; for a Split, the sectors before the split
	// point (new_sector − sector).
	Sectors uint32
	Dev     uint32 // the kernel's dev_t: major<<20 | minor
	TID     uint32 // the thread the tracepoint fired in
	Kind    Kind
	// RWBS is the tracepoint's first two rwbs letters: 'R', 'W', 'D'
	// (discard), 'F' (flush), 'N'; then 'S' (sync) or others, or 0.
	RWBS [2]byte
	// Own: the thread belongs to the traced process (for a Queue, the
	// bio is one of its own; a request's later events fire anywhere).
	Own bool
}

// eventSize is the size of an event record in the ring buffer:
// time, sector, sectors, dev, tid, kind, rwbs, own.
const eventSize = 32

func decodeEvent(b []byte) Event {
	return Event{
		Time:    int64(binary.LittleEndian.Uint64(b[0:])),
		Sector:  binary.LittleEndian.Uint64(b[8:]),
		Sectors: binary.LittleEndian.Uint32(b[16:]),
		Dev:     binary.LittleEndian.Uint32(b[20:]),
		TID:     binary.LittleEndian.Uint32(b[24:]),
		Kind:    Kind(b[28]),
		RWBS:    [2]byte{b[29], b[30]},
		Own:     b[31] != 0,
	}
}
