package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/blocktrace"
	"iolab/bench/system"
)

// --trace-block (Config.TraceBlock): while a phase runs, the block layer's
// tracer (bench/blocktrace's paired programs) watches its targets' devices
// for iolab's own bios, each job loop hands its measured I/Os to the
// phase's collector in chunks, and the collector joins the two
// (blockjoin.go) into each job's Dirs[d].Block and the groups' Trace.

// ioRecord is one measured I/O as the job loop saw it, on its clock.
type ioRecord struct {
	start, reap int64
	off         int64
	len         uint32
	file        int32
	dir         uint8
}

// Chunks: a loop hands its records over when a chunk is full or its
// oldest is blockFlushAfter old, so the join never waits long for them.
const (
	blockChunk      = 1024
	blockFlushAfter = int64(100 * time.Millisecond)
	// blockSettleAfter is how long after an I/O's reaping the collector
	// joins it: the tracer reads its ring every few tens of
	// milliseconds, so by then every bio completed before it has come.
	blockSettleAfter = int64(time.Second)
	blockTick        = 200 * time.Millisecond
)

// jobTrace is a traced job's side of the collector: the loop appends to
// buf on its thread and hands full chunks over a channel, so no I/O
// takes a lock.
type jobTrace struct {
	k     int32
	clk   *jobClock
	files []traceFile // by the loop's file index
	out   chan<- recChunk
	free  chan []ioRecord
	buf   []ioRecord
	// begun is the loop-clock time its window opened, or -1.
	begun atomic.Int64
	mm    monoMap // the collector's
}

// traceFile is how a job's file appears in the trace: its disk and where
// it starts there.
type traceFile struct {
	disk  uint32
	start uint64 // sectors: the device's (a partition's, or the file's filesystem's) on its disk
	// file: a regular file, placed on the device by extents (its map as
	// the phase started); a block device's offsets are its own.
	file    bool
	extents []fileExtent
}

// place is the disk's sector of an I/O of n bytes at off, or why it has
// none (missUnmatched, missSplit).
func (f *traceFile) place(off int64, n uint32) (uint64, uint8) {
	if !f.file {
		return f.start + uint64(off)/512, missNone
	}
	return placeInExtents(f.extents, f.start, off, n)
}

type recChunk struct {
	jt   *jobTrace
	recs []ioRecord
	// restart: the job's window opened again at this time on its clock
	// (latency_target's restarts); what it measured before is dropped,
	// as its counts are. -1: none.
	restart int64
}

// begin is called as the loop's window opens, at t on its clock.
func (jt *jobTrace) begin(clk *jobClock, t int64) {
	jt.clk = clk
	if jt.begun.Swap(t) >= 0 {
		jt.buf = jt.buf[:0]
		jt.out <- recChunk{jt: jt, restart: t}
	}
}

// add records one measured I/O.
func (jt *jobTrace) add(r ioRecord) {
	jt.buf = append(jt.buf, r)
	if len(jt.buf) == cap(jt.buf) || r.reap-jt.buf[0].reap > blockFlushAfter {
		jt.flush()
	}
}

// flush hands what the loop recorded to the collector.
func (jt *jobTrace) flush() {
	if len(jt.buf) == 0 {
		return
	}
	jt.out <- recChunk{jt: jt, recs: jt.buf, restart: -1}
	select {
	case b := <-jt.free:
		jt.buf = b[:0]
	default:
		jt.buf = make([]ioRecord, 0, blockChunk)
	}
}

// blockCollector is a phase's tracer and join.
type blockCollector struct {
	tr      *blocktrace.Tracer
	join    *blockJoin
	jobs    []*jobTrace
	devices []string
	bios    chan []blocktrace.Bio
	bioFree chan []blocktrace.Bio
	recs    chan recChunk
	stop    chan struct{}
	done    chan struct{}
	closed  bool
	stats   blocktrace.Stats
	err     error // the tracer's, from its Close
}

func monotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// traceDevices are the kernel's devices for the targets of a phase's jobs
// (jobs[k] are job k's files): the devices to trace, each job's files
// and the map of a traced device to its disk. A file's device is its
// filesystem's; with mapFiles, its extents are taken (the files laid
// out), and without, those of a file already there are asked for, to
// refuse a filesystem without FIEMAP before any I/O. A file is opened for
// its extents through the job's guard, as the job opens it: the file that
// was checked, or an error. A file on a filesystem with no block device
// under it, or on btrfs, is refused.
func traceDevices(sys system.FS, jobs []JobFiles, mapFiles bool) (devs []uint32, files [][]traceFile, disk map[uint32]uint32, err error) {
	disk = map[uint32]uint32{}
	files = make([][]traceFile, len(jobs))
	for k, jf := range jobs {
		for i, t := range jf.Targets {
			var extents []fileExtent
			if !t.IsBlock {
				if err := CheckTraceFile(t); err != nil {
					return nil, nil, nil, err
				}
				path := t.Resolved
				if i < len(jf.layout.Files) {
					path = jf.layout.Files[i].Path
				}
				switch {
				case t.Inode != 0:
					es, err := traceFileExtents(jf, path, t)
					if err != nil {
						return nil, nil, nil, fmt.Errorf("--trace-block: %w", err)
					}
					extents = fileExtents(es)
				case mapFiles:
					return nil, nil, nil, fmt.Errorf("--trace-block: %s was not there when the trace started, so where it lies on the disk is not known", path)
				}
			}
			td, err := sys.TraceDevice(t)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("--trace-block: %w", err)
			}
			dev := blocktrace.DevT(td.Dev[0], td.Dev[1])
			d := blocktrace.DevT(td.Disk[0], td.Disk[1])
			for _, x := range []uint32{dev, d} {
				if _, ok := disk[x]; !ok {
					disk[x] = d
					devs = append(devs, x)
				}
			}
			files[k] = append(files[k], traceFile{disk: d, start: td.Start, file: !t.IsBlock, extents: extents})
		}
	}
	slices.Sort(devs)
	return devs, files, disk, nil
}

// checkTraceTargets refuses a job's file that cannot be traced
// (CheckTraceFile) before Prepare lays it out, judged where it is or
// would be made: a file not there yet by its directory's filesystem, and
// one the job makes only as it opens it (create_on_open) outright. A name
// that does not resolve is left to Prepare to refuse.
func (rn *Runner) checkTraceTargets(j *Job) error {
	if j.Diskless() {
		return nil
	}
	for _, p := range j.FilePaths() {
		t, err := rn.Sys.ResolveTarget(p)
		if err != nil {
			continue
		}
		if _, err := os.Lstat(t.Resolved); j.CreateOnOpen && errors.Is(err, os.ErrNotExist) {
			t.Dev = ""
		}
		if err := CheckTraceFile(t); err != nil {
			return fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	return nil
}

// traceFileExtents opens a job's file t (named path) read-only through the
// job's guard, only if it is still the file that was checked, and takes
// its extents.
func traceFileExtents(jf JobFiles, path string, t system.Target) ([]system.Extent, error) {
	fd, err := jf.opener().Open(path, identityOf(t), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return system.FileExtents(fd, path)
}

// CheckTraceBlock refuses a run whose targets (files, as Prepare worked
// them out) cannot be traced, or a kernel or process that cannot trace,
// before any I/O: it opens the tracer on the run's devices and closes it
// again.
func (rn *Runner) CheckTraceBlock(files [][]JobFiles) error {
	var jobs []JobFiles
	for g := range files {
		jobs = append(jobs, files[g]...)
	}
	devs, _, _, err := traceDevices(rn.Sys, jobs, false)
	if err != nil {
		return err
	}
	tr, err := blocktrace.OpenPaired(blocktrace.Options{Devs: devs, TGID: os.Getpid()}, func([]blocktrace.Bio) {})
	if err != nil {
		return fmt.Errorf("--trace-block: %w", err)
	}
	_, err = tr.Close()
	return err
}

// startBlockTrace starts the phase's tracer and collector; jobs[k] are
// the phase's job k's files, laid out: their extents are taken now.
func (rn *Runner) startBlockTrace(jobs []JobFiles) (*blockCollector, error) {
	devs, files, disk, err := traceDevices(rn.Sys, jobs, true)
	if err != nil {
		return nil, err
	}
	c := &blockCollector{
		join: newBlockJoin(disk, len(jobs)),
		bios: make(chan []blocktrace.Bio, 64), bioFree: make(chan []blocktrace.Bio, 64),
		recs: make(chan recChunk, 64), stop: make(chan struct{}), done: make(chan struct{}),
	}
	for _, d := range devs {
		c.devices = append(c.devices, fmt.Sprintf("%d:%d", d>>20, d&(1<<20-1)))
	}
	for k := range jobs {
		jt := &jobTrace{k: int32(k), files: files[k], out: c.recs, free: make(chan []ioRecord, 4), buf: make([]ioRecord, 0, blockChunk)}
		jt.begun.Store(-1)
		c.jobs = append(c.jobs, jt)
	}
	c.tr, err = blocktrace.OpenPaired(blocktrace.Options{Devs: devs, TGID: os.Getpid()}, c.sink)
	if err != nil {
		return nil, fmt.Errorf("--trace-block: %w", err)
	}
	go c.collect()
	return c, nil
}

// sink takes the tracer's batch (reused once it returns) on its goroutine.
func (c *blockCollector) sink(bios []blocktrace.Bio) {
	var b []blocktrace.Bio
	select {
	case b = <-c.bioFree:
	default:
	}
	c.bios <- append(b[:0], bios...)
}

// collect is the collector's goroutine: it alone touches the join.
func (c *blockCollector) collect() {
	defer close(c.done)
	tick := time.NewTicker(blockTick)
	defer tick.Stop()
	for {
		select {
		case b := <-c.bios:
			c.takeBios(b)
		case ch := <-c.recs:
			c.takeRecords(ch)
		case <-tick.C:
			c.join.settle(monotonicNow() - blockSettleAfter)
		case <-c.stop:
			for {
				select {
				case b := <-c.bios:
					c.takeBios(b)
					continue
				case ch := <-c.recs:
					c.takeRecords(ch)
					continue
				default:
				}
				break
			}
			c.join.settle(math.MaxInt64)
			return
		}
	}
}

func (c *blockCollector) takeBios(b []blocktrace.Bio) {
	from := c.join.foreignFrom
	for _, jt := range c.jobs {
		if t := jt.begun.Load(); t >= 0 && jt.mm.set {
			from = min(from, jt.mm.mono(t))
		}
	}
	c.join.foreignFrom = from
	c.join.addBios(b)
	select {
	case c.bioFree <- b:
	default:
	}
}

func (c *blockCollector) takeRecords(ch recChunk) {
	jt := ch.jt
	jt.mm.anchor(takeAnchor(jt.clk.since, monotonicNow))
	if ch.restart >= 0 {
		c.join.restart(jt.k, jt.mm.mono(ch.restart))
		return
	}
	for i := range ch.recs {
		r := &ch.recs[i]
		if int(r.file) >= len(jt.files) {
			continue
		}
		f := &jt.files[r.file]
		sector, miss := f.place(r.off, r.len)
		c.join.addIO(joinIO{
			dev: f.disk, sector: sector, sectors: r.len / 512,
			start: jt.mm.mono(r.start), reap: jt.mm.mono(r.reap), job: jt.k, dir: r.dir, miss: miss,
		})
	}
	select {
	case jt.free <- ch.recs:
	default:
	}
}

// finish stops the tracer after the phase's jobs have ended (their loops
// flushed), joins what is left, and writes each job's Block into its
// result (results[k], the phase's job k's) and what the trace saw.
func (c *blockCollector) finish(results []*JobResult) (BlockTrace, error) {
	c.close()
	st, err := c.stats, c.err
	for k, res := range results {
		for d := range res.Dirs {
			bt := c.join.out[k][d]
			if res.Dirs[d].IOs == 0 && bt.OneToOne+bt.Merged+bt.Split+bt.Unmatched == 0 {
				continue
			}
			res.Dirs[d].Block = &bt
		}
	}
	tr := BlockTrace{Devices: c.devices, Foreign: c.join.foreign, Dropped: st.Dropped, Missed: st.Missed}
	if err != nil {
		err = fmt.Errorf("--trace-block: %w", err)
	}
	return tr, err
}

// close stops the tracer, then the collector once the tracer's last
// batches have reached it; a second call does nothing.
func (c *blockCollector) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.stats, c.err = c.tr.Close()
	close(c.stop)
	<-c.done
}
