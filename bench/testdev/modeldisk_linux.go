package testdev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// DiskModel is how long a ModelDisk takes over a request: Latency, plus
// the request's bytes at Bandwidth (bytes per second; 0: no transfer
// time). Requests are served one at a time, in the order they arrive.
type DiskModel struct {
	Latency   time.Duration
	Bandwidth float64
	// LatencyAt, when set, is the latency instead of Latency, by how
	// long the disk has been attached: a disk that slows down as its
	// cache fills and then settles, or one whose garbage collection
	// comes and goes.
	LatencyAt func(since time.Duration) time.Duration
	// Parallel serves reads side by side, each taking the model's time
	// from when it arrives, instead of one at a time: a device with a
	// fixed latency and room for many I/Os at once (a networked or
	// striped disk), where what a job keeps in flight decides its rate.
	Parallel bool
	// Bad are the disk's bad sectors: a read or write that touches one
	// fails with EIO, as a medium error would (what device-mapper's error
	// target gives, on machines without device-mapper). The loop device
	// passes the error on, so a job on it sees EIO where it crosses them.
	Bad []Extent
	// DiscardKeepsData acknowledges a discard and leaves the data as it
	// was: a device that does not read zeros after a trim (no
	// deterministic read-zero after TRIM), where a trimmed block reads
	// back what it held. The loop device discards through fallocate's
	// PUNCH_HOLE, which comes here as FUSE_FALLOCATE; without this, the
	// server answers ENOSYS and the loop device's discards fail.
	DiscardKeepsData bool
}

// Extent is Len bytes of a disk from Off.
type Extent struct{ Off, Len int64 }

// bad reports whether n bytes at off touch one of the model's bad
// extents.
func (m DiskModel) bad(off, n int64) bool {
	for _, e := range m.Bad {
		if off < e.Off+e.Len && e.Off < off+n {
			return true
		}
	}
	return false
}

// take sleeps for a request of n bytes, since after the disk was
// attached. nanosleep, not time.Sleep: the Go timer rounds a 100 µs
// sleep up to about a millisecond here, where nanosleep overshoots by the
// thread's timer slack (50 µs).
func (m DiskModel) take(n int, since time.Duration) {
	d := m.Latency
	if m.LatencyAt != nil {
		d = m.LatencyAt(since)
	}
	if m.Bandwidth > 0 {
		d += time.Duration(float64(n) / m.Bandwidth * 1e9)
	}
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// ModelDisk attaches a loop device (direct I/O) to a file of size bytes
// served by a FUSE file system in this process that takes the model's
// time over each request, one request at a time: a disk whose service
// times are set by the test, not by the machine. On a loop device over
// tmpfs or the machine's own disk, the time an I/O takes is the CPU's
// and the host's, which swing with whatever else runs; here it is a
// sleep, so a queue behind a writer's 1 MiB requests is as long every
// time, and what an I/O scheduler reorders shows. The device, the mount
// and the server go when the test ends. It skips where FUSE or loop
// devices are missing.
//
// The protocol is the kernel's (include/uapi/linux/fuse.h): INIT, then
// LOOKUP, GETATTR, OPEN, READ, WRITE and their like on one file, "disk".
func ModelDisk(t testing.TB, size int64, model DiskModel) string {
	t.Helper()
	NeedLoopTools(t)
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE: %v", err)
	}
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("open /dev/fuse: %v", err)
	}
	dir := t.TempDir()
	srv := &fuseServer{fd: fd, size: size, model: model, start: time.Now(), chunks: map[int64][]byte{}, done: make(chan struct{})}
	opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd)
	if err := unix.Mount("iolab-modeldisk", dir, "fuse.iolab-modeldisk", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		unix.Close(fd)
		t.Skipf("mount FUSE: %v", err)
	}
	go srv.serve()
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
		<-srv.done // the kernel ends the connection: the server's read fails
		unix.Close(fd)
	})
	file := filepath.Join(dir, "disk")
	// Registered after the unmount's cleanup, so it runs before it.
	return attach(t, file, "--direct-io=on")
}

// The FUSE opcodes and structures ModelDisk uses (include/uapi/linux/fuse.h).
const (
	fuseLookup      = 1
	fuseForget      = 2
	fuseGetattr     = 3
	fuseSetattr     = 4
	fuseOpen        = 14
	fuseRead        = 15
	fuseWrite       = 16
	fuseStatfs      = 17
	fuseRelease     = 18
	fuseFsync       = 20
	fuseFlush       = 25
	fuseInit        = 26
	fuseOpendir     = 27
	fuseReaddir     = 28
	fuseReleasedir  = 29
	fuseInterrupt   = 36
	fuseDestroy     = 38
	fuseBatchForget = 42
	fuseFallocate   = 43

	fuseBigWrites = 1 << 5
	fuseAsyncDIO  = 1 << 15 // the loop device's direct I/O goes on without waiting for each
	fuseMaxPages  = 1 << 22

	inHeaderSize = 40 // len, opcode, unique, nodeid, uid, gid, pid, total_extlen, padding
	maxWrite     = 1 << 20
	rootID       = 1
	fileID       = 2
	chunkSize    = 64 << 10
)

type fuseServer struct {
	fd     int
	size   int64
	model  DiskModel
	start  time.Time        // when the disk was attached: LatencyAt's zero
	chunks map[int64][]byte // the file's data, by chunk; absent chunks read as zeros
	done   chan struct{}
}

func (s *fuseServer) serve() {
	defer close(s.done)
	buf := make([]byte, maxWrite+64<<10)
	for {
		n, err := unix.Read(s.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EAGAIN) {
			continue // an interrupted or abandoned request
		}
		if err != nil || n < inHeaderSize {
			return // ENODEV: unmounted
		}
		s.handle(buf[:n])
	}
}

var le = binary.LittleEndian

func (s *fuseServer) handle(req []byte) {
	opcode := le.Uint32(req[4:])
	unique := le.Uint64(req[8:])
	node := le.Uint64(req[16:])
	body := req[inHeaderSize:]
	switch opcode {
	case fuseForget, fuseBatchForget, fuseInterrupt:
		return // no reply
	case fuseInit:
		out := make([]byte, 64)
		le.PutUint32(out[0:], 7)  // major
		le.PutUint32(out[4:], 31) // minor: max_pages is known
		le.PutUint32(out[8:], le.Uint32(body[8:]))
		flags := uint32(fuseBigWrites | fuseMaxPages)
		if s.model.Parallel {
			flags |= fuseAsyncDIO
		}
		le.PutUint32(out[12:], flags)
		le.PutUint16(out[16:], 16)       // max_background
		le.PutUint16(out[18:], 12)       // congestion_threshold
		le.PutUint32(out[20:], maxWrite) // max_write
		le.PutUint32(out[24:], 1)        // time_gran
		le.PutUint16(out[28:], maxWrite/4096)
		s.reply(unique, 0, out)
	case fuseLookup:
		name := body
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if node != rootID || string(name) != "disk" {
			s.reply(unique, -int32(syscall.ENOENT), nil)
			return
		}
		out := make([]byte, 40+88)
		le.PutUint64(out[0:], fileID)
		s.putAttr(out[40:], fileID)
		s.reply(unique, 0, out)
	case fuseGetattr, fuseSetattr:
		out := make([]byte, 16+88)
		s.putAttr(out[16:], node)
		s.reply(unique, 0, out)
	case fuseOpen, fuseOpendir:
		out := make([]byte, 16)
		le.PutUint64(out[0:], 1) // fh
		if opcode == fuseOpen {
			// FOPEN_DIRECT_IO: every read and write comes to the server
			// as the loop device sent it, none served by a page cache.
			le.PutUint32(out[8:], 1)
		}
		s.reply(unique, 0, out)
	case fuseRead:
		off, size := int64(le.Uint64(body[8:])), int64(le.Uint32(body[16:]))
		size = max(0, min(size, s.size-off)) // nothing past the end
		if s.model.bad(off, size) {
			s.reply(unique, -int32(syscall.EIO), nil)
			return
		}
		out := make([]byte, size)
		s.copyData(off, out, false)
		if s.model.Parallel {
			go func() {
				s.model.take(len(out), time.Since(s.start))
				s.reply(unique, 0, out)
			}()
			return
		}
		s.model.take(len(out), time.Since(s.start))
		s.reply(unique, 0, out)
	case fuseWrite:
		off, size := int64(le.Uint64(body[8:])), int(le.Uint32(body[16:]))
		data := body[40:]
		if size > len(data) || off+int64(size) > s.size {
			s.reply(unique, -int32(syscall.ENOSPC), nil)
			return
		}
		if s.model.bad(off, int64(size)) {
			s.reply(unique, -int32(syscall.EIO), nil)
			return
		}
		s.copyData(off, data[:size], true)
		s.model.take(size, time.Since(s.start))
		out := make([]byte, 8)
		le.PutUint32(out[0:], uint32(size))
		s.reply(unique, 0, out)
	case fuseFallocate:
		if !s.model.DiscardKeepsData {
			s.reply(unique, -int32(syscall.ENOSYS), nil)
			return
		}
		s.reply(unique, 0, nil)
	case fuseStatfs:
		out := make([]byte, 80)
		le.PutUint64(out[0:], uint64(s.size/4096))
		le.PutUint32(out[40:], 4096) // bsize
		le.PutUint32(out[44:], 255)  // namelen
		le.PutUint32(out[48:], 4096) // frsize
		s.reply(unique, 0, out)
	case fuseReaddir:
		s.reply(unique, 0, nil) // an empty directory, as far as listing goes
	case fuseRelease, fuseReleasedir, fuseFlush, fuseFsync, fuseDestroy:
		s.reply(unique, 0, nil)
	default:
		s.reply(unique, -int32(syscall.ENOSYS), nil)
	}
}

// putAttr writes struct fuse_attr of node.
func (s *fuseServer) putAttr(out []byte, node uint64) {
	le.PutUint64(out[0:], node) // ino
	mode, nlink, size := uint32(syscall.S_IFDIR|0o755), uint32(2), int64(0)
	if node == fileID {
		mode, nlink, size = syscall.S_IFREG|0o600, 1, s.size
	}
	le.PutUint64(out[8:], uint64(size))
	le.PutUint64(out[16:], uint64((size+511)/512)) // blocks
	le.PutUint32(out[60:], mode)
	le.PutUint32(out[64:], nlink)
	le.PutUint32(out[80:], 4096) // blksize
}

// copyData copies between the file at off and p, chunk by chunk.
func (s *fuseServer) copyData(off int64, p []byte, write bool) {
	for len(p) > 0 {
		c, in := off/chunkSize, off%chunkSize
		n := min(int64(len(p)), chunkSize-in)
		chunk := s.chunks[c]
		if write {
			if chunk == nil {
				chunk = make([]byte, chunkSize)
				s.chunks[c] = chunk
			}
			copy(chunk[in:in+n], p[:n])
		} else if chunk != nil {
			copy(p[:n], chunk[in:in+n])
		} else {
			clear(p[:n])
		}
		p, off = p[n:], off+n
	}
}

func (s *fuseServer) reply(unique uint64, errno int32, data []byte) {
	out := make([]byte, 16+len(data))
	le.PutUint32(out[0:], uint32(len(out)))
	le.PutUint32(out[4:], uint32(errno))
	le.PutUint64(out[8:], unique)
	copy(out[16:], data)
	// A reply to a request the kernel has since dropped fails with
	// ENOENT: nothing waits for it.
	_, _ = unix.Write(s.fd, out)
}
