package blocktrace

import (
	"encoding/binary"
	"io"
)

// blktrace's binary format (include/uapi/linux/blktrace_api.h): each
// event a struct blk_io_trace of 48 bytes, then its payload.
const (
	blkMagic   = 0x65617400 | 0x07 // BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION
	blkRecSize = 48

	tcRead     = 1 << 0
	tcWrite    = 1 << 1
	tcFlush    = 1 << 2
	tcQueue    = 1 << 4
	tcRequeue  = 1 << 5
	tcIssue    = 1 << 6
	tcComplete = 1 << 7
	tcDiscard  = 1 << 13
	tcShift    = 16
)

// blkActions is blktrace's __BLK_TA_ code and categories (BLK_TC_ACT)
// for each kind, as the kernel's blk_add_trace_* set them.
var blkActions = map[Kind]struct{ code, cat uint32 }{
	Queue: {1, tcQueue}, BackMerge: {2, tcQueue}, FrontMerge: {3, tcQueue}, GetRq: {4, tcQueue},
	Requeue: {6, tcRequeue}, Issue: {7, tcIssue}, Complete: {8, tcComplete}, BioComplete: {8, tcComplete},
	Insert: {12, tcQueue}, Split: {13, tcQueue},
}

// blkAction is blktrace's action word for an event: its kind's code and
// categories, and its direction's.
func blkAction(e *Event) uint32 {
	a := blkActions[e.Kind]
	code, cat := a.code, a.cat
	switch e.Op {
	case 'W':
		cat |= tcWrite
	case 'D':
		cat |= tcDiscard | tcWrite
	case 'F':
		cat |= tcFlush
	default:
		cat |= tcRead
	}
	return code | cat<<tcShift
}

// WriteBlktrace writes events, in time order, in blktrace's binary format
// as blkparse -d writes it, which btt and blkparse read: times from the
// first event's, the thread as the pid, CPU 0.
func WriteBlktrace(w io.Writer, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	t0 := evs[0].Time
	buf := make([]byte, blkRecSize+8)
	le := binary.LittleEndian
	for i := range evs {
		e := &evs[i]
		clear(buf)
		le.PutUint32(buf[0:], blkMagic)
		le.PutUint32(buf[4:], uint32(i+1))
		le.PutUint64(buf[8:], uint64(e.Time-t0))
		le.PutUint64(buf[16:], e.Sector)
		bytes := e.Sectors * 512
		if e.Kind == Split {
			bytes = 0
		}
		le.PutUint32(buf[24:], bytes)
		le.PutUint32(buf[28:], blkAction(e))
		le.PutUint32(buf[32:], e.TID)
		le.PutUint32(buf[36:], e.Dev)
		n := blkRecSize
		if e.Kind == Split {
			// The payload is the sector the bio goes on at, big-endian.
			le.PutUint16(buf[46:], 8)
			binary.BigEndian.PutUint64(buf[48:], e.Link)
			n += 8
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
	}
	return nil
}
