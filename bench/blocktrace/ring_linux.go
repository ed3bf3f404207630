package blocktrace

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring reads a BPF ring buffer in place, as the kernel lays it out
// (kernel/bpf/ringbuf.c): a page with the consumer's position, which the
// reader writes, then a page with the producer's and the data, mapped
// twice in a row so that a record across the end reads straight. Each
// record is an 8-byte header — its length, with a busy bit while the
// program writes it and a discard bit — and its data, 8-byte aligned.
// Reading a batch is a few loads and one store, where a record at a
// time through a library costs a lock and a check of the poller each.
type ring struct {
	cons []byte // the consumer's page
	data []byte // the producer's page, then the data twice
	mask uint64
	page int
}

const (
	ringBusy    = 1 << 31
	ringDiscard = 1 << 30
	ringHdr     = 8
)

func newRing(fd, size int) (*ring, error) {
	page := os.Getpagesize()
	cons, err := unix.Mmap(fd, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the ring buffer's consumer page: %w", err)
	}
	data, err := unix.Mmap(fd, int64(page), page+2*size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(cons)
		return nil, fmt.Errorf("mapping the ring buffer: %w", err)
	}
	return &ring{cons: cons, data: data, mask: uint64(size - 1), page: page}, nil
}

func (r *ring) close() {
	unix.Munmap(r.data)
	unix.Munmap(r.cons)
}

// size is the data's size in bytes.
func (r *ring) size() int { return int(r.mask) + 1 }

// drain hands each committed record's data to each, in order, and frees
// them; it stops at a record still being written. It returns the bytes
// it freed.
func (r *ring) drain(each func([]byte)) int {
	consPos := (*uint64)(unsafe.Pointer(&r.cons[0]))
	prodPos := (*uint64)(unsafe.Pointer(&r.data[0]))
	cons := atomic.LoadUint64(consPos)
	start := cons
	prod := atomic.LoadUint64(prodPos)
	for cons < prod {
		off := r.page + int(cons&r.mask)
		hdr := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[off])))
		if hdr&ringBusy != 0 {
			break
		}
		n := int(hdr &^ (ringBusy | ringDiscard))
		if hdr&ringDiscard == 0 {
			each(r.data[off+ringHdr : off+ringHdr+n])
		}
		cons += uint64((n + ringHdr + 7) &^ 7)
		atomic.StoreUint64(consPos, cons)
	}
	return int(cons - start)
}
