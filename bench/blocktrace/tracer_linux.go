package blocktrace

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// ringSize is the ring buffer the programs write events to: 16 MiB holds
// half a million events, well over what the devices here make between two
// reads (every pollEvery).
const (
	ringSize  = 16 << 20
	pollEvery = 10 * time.Millisecond
)

// Options say what to trace.
type Options struct {
	// Devs are the devices (dev_t as the kernel keeps it: major<<20 |
	// minor; see DevT) whose events are recorded; all others are dropped
	// in the kernel.
	Devs []uint32
	// TGID is the process whose threads' bios are its own (Event.Own):
	// iolab's.
	TGID int
}

// DevT is a device's dev_t as the block tracepoints record it.
func DevT(major, minor uint32) uint32 { return major<<20 | minor }

// Tracer records the block events of some devices until closed. Its
// programs are attached through file descriptors of this process: when
// the process ends, however it ends, the kernel detaches them and frees
// their buffers, so nothing is left enabled.
type Tracer struct {
	objs  []interface{ Close() error }
	links []link.Link
	progs []*ebpf.Program
	drops *ebpf.Map
	rd    *ringbuf.Reader
	sink  func([]Event)

	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	events uint64
	err    error
}

// Stats are what a tracer saw.
type Stats struct {
	Events  uint64 // handed to the sink
	Dropped uint64 // lost because the ring buffer was full
	// Missed are events the kernel did not run a program for because
	// another BPF program was running on the CPU (a completion's
	// interrupt during an issue's program): rare, and counted so that
	// the bios they leave unpaired are accounted for.
	Missed uint64
	// Runs and RunTime are the programs' runs and the CPU time they
	// took, where the kernel counts them (sysctl kernel.bpf_stats_enabled).
	Runs    uint64
	RunTime time.Duration
}

// Open loads and attaches the programs and starts handing events to
// sink, in batches, from one goroutine, in the order each CPU recorded
// them (events of different CPUs interleave only roughly: sort by Time
// where order matters).
func Open(o Options, sink func([]Event)) (*Tracer, error) {
	if len(o.Devs) == 0 {
		return nil, errors.New("blocktrace: no device to trace")
	}
	kl, err := readKernelLayout()
	if err != nil {
		return nil, err
	}
	t := &Tracer{sink: sink, stop: make(chan struct{}), done: make(chan struct{})}
	fail := func(err error) (*Tracer, error) {
		t.closeObjs()
		return nil, rights(err)
	}
	rb, err := ebpf.NewMap(&ebpf.MapSpec{Name: "iolab_blk_rb", Type: ebpf.RingBuf, MaxEntries: ringSize})
	if err != nil {
		return fail(fmt.Errorf("blocktrace: ring buffer: %w", err))
	}
	t.objs = append(t.objs, rb)
	devs, err := ebpf.NewMap(&ebpf.MapSpec{Name: "iolab_blk_devs", Type: ebpf.Hash, KeySize: 4, ValueSize: 1, MaxEntries: uint32(len(o.Devs))})
	if err != nil {
		return fail(fmt.Errorf("blocktrace: device map: %w", err))
	}
	t.objs = append(t.objs, devs)
	for _, d := range o.Devs {
		if err := devs.Put(d, uint8(1)); err != nil {
			return fail(fmt.Errorf("blocktrace: device map: %w", err))
		}
	}
	t.drops, err = ebpf.NewMap(&ebpf.MapSpec{Name: "iolab_blk_drops", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		return fail(fmt.Errorf("blocktrace: drop counter: %w", err))
	}
	t.objs = append(t.objs, t.drops)
	// What each queue and block device pointer is: its dev_t when
	// traced, else 0, learnt as the programs meet them.
	cache, err := ebpf.NewMap(&ebpf.MapSpec{Name: "iolab_blk_ptrs", Type: ebpf.LRUHash, KeySize: 8, ValueSize: 4, MaxEntries: 4096})
	if err != nil {
		return fail(fmt.Errorf("blocktrace: device cache: %w", err))
	}
	t.objs = append(t.objs, cache)
	m := progMaps{rb: rb, devs: devs, drops: t.drops, cache: cache}
	for k := range numKinds {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: fmt.Sprintf("iolab_%s_%d", k.Letter2(), o.TGID), Type: ebpf.RawTracepoint, License: "GPL",
			Instructions: program(k, &kl, m, uint32(o.TGID)),
		})
		if err != nil {
			return fail(fmt.Errorf("blocktrace: loading the program for %s: %w", k, err))
		}
		t.objs = append(t.objs, prog)
		t.progs = append(t.progs, prog)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: tracepoints[k], Program: prog})
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				err = fmt.Errorf("this kernel has no tracepoint block:%s: it cannot trace the block layer (%w)", tracepoints[k], err)
			}
			return fail(fmt.Errorf("blocktrace: attaching to block:%s: %w", tracepoints[k], err))
		}
		t.links = append(t.links, l)
	}
	if t.rd, err = ringbuf.NewReader(rb); err != nil {
		return fail(fmt.Errorf("blocktrace: reading the ring buffer: %w", err))
	}
	go t.read()
	return t, nil
}

// Letter2 is the kind's name in a program's name: "q", "g", … ("cb" for a
// bio's completion).
func (k Kind) Letter2() string {
	if k == BioComplete {
		return "cb"
	}
	return strings.ToLower(string(k.Letter()))
}

// rights turns the kernel's "not permitted" into what to do about it.
func rights(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("tracing the block layer needs root (CAP_BPF and CAP_PERFMON), which this process lacks: run iolab as root, or leave out --trace-block (%w)", err)
	}
	return err
}

// read hands the ring buffer's events to the sink every pollEvery until
// Close, then what is left.
func (t *Tracer) read() {
	defer close(t.done)
	var rec ringbuf.Record
	batch := make([]Event, 0, 4096)
	for {
		stopping := false
		select {
		case <-t.stop:
			stopping = true
		default:
		}
		t.rd.SetDeadline(time.Now())
		for {
			if err := t.rd.ReadInto(&rec); err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.mu.Lock()
					t.err = err
					t.mu.Unlock()
					stopping = true
				}
				break
			}
			if len(rec.RawSample) >= eventSize {
				batch = append(batch, decodeEvent(rec.RawSample))
			}
			if len(batch) == cap(batch) {
				t.hand(batch)
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			t.hand(batch)
			batch = batch[:0]
		}
		if stopping {
			return
		}
		select {
		case <-t.stop:
		case <-time.After(pollEvery):
		}
	}
}

func (t *Tracer) hand(batch []Event) {
	t.sink(batch)
	t.mu.Lock()
	t.events += uint64(len(batch))
	t.mu.Unlock()
}

// Close detaches the programs, hands the sink the events still in the
// ring buffer, and frees everything.
func (t *Tracer) Close() (Stats, error) {
	for _, l := range t.links {
		l.Close()
	}
	t.links = nil
	close(t.stop)
	<-t.done
	var st Stats
	for _, p := range t.progs {
		if ps, err := p.Stats(); err == nil {
			st.Missed += ps.RecursionMisses
			st.Runs += ps.RunCount
			st.RunTime += ps.Runtime
		}
	}
	var drops uint64
	if err := t.drops.Lookup(uint32(0), &drops); err == nil {
		st.Dropped = drops
	}
	t.rd.Close()
	t.closeObjs()
	t.mu.Lock()
	defer t.mu.Unlock()
	st.Events = t.events
	return st, t.err
}

func (t *Tracer) closeObjs() {
	for _, l := range t.links {
		l.Close()
	}
	for i := len(t.objs) - 1; i >= 0; i-- {
		t.objs[i].Close()
	}
	t.objs = nil
}

// progMaps are the maps the programs use.
type progMaps struct{ rb, devs, drops, cache *ebpf.Map }

// Stack slots of the programs (below the frame pointer).
const (
	stWindow = -64 // a struct's fields, read at once (64 bytes)
	stKey    = -72 // a pointer, the cache's key
	stTmp    = -80 // 8 bytes read from the kernel
	stDev    = -84 // a dev_t
	stTime   = -96 // the event's time, read first
	windowSz = 64
)

// window is the span of a struct that holds members: read at once.
func window(ms ...member) (start, size int, ok bool) {
	start, end := ms[0].off, 0
	for _, m := range ms {
		start = min(start, m.off)
		end = max(end, m.off+m.size)
	}
	return start, end - start, end-start <= windowSz
}

// program is the BPF program of one raw tracepoint: for an event on a
// traced device it writes an Event record to the ring buffer (without
// waking the reader, which polls) or, when the buffer is full, counts a
// drop. A bio event reads the bio's fields and its block device's
// number; a request event the request's, and its disk's number through
// its queue. What a pointer is (a traced device or not) is cached, so
// most events read one span of one struct.
func program(k Kind, l *kernelLayout, m progMaps, tgid uint32) asm.Instructions {
	isRq := k == Insert || k == Issue || k == Complete || k == Requeue
	var win []member
	if isRq {
		win = []member{l.rqQ, l.rqCmdFlags, l.rqDataLen, l.rqSector, l.rqBio}
	} else {
		win = []member{l.bioBdev, l.bioOpf, l.bioSector, l.bioSize}
	}
	start, size, ok := window(win...)
	if !ok {
		panic(fmt.Sprintf("blocktrace: the fields of %s span %d bytes", k, size))
	}
	arg := int16(0)
	if k == BioComplete {
		arg = 1 // (struct request_queue *q, struct bio *bio)
	}
	// ld loads member m of the window into dst.
	ld := func(dst asm.Register, m member) asm.Instruction {
		sz := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[m.size]
		return asm.LoadMem(dst, asm.RFP, int16(stWindow+m.off-start), sz)
	}
	// probe reads n bytes at src+off into the stack at slot.
	probe := func(slot int16, n int32, src asm.Register, off int) asm.Instructions {
		return asm.Instructions{
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(slot)),
			asm.Mov.Imm(asm.R2, n),
			asm.Mov.Reg(asm.R3, src),
			asm.Add.Imm(asm.R3, int32(off)),
			asm.FnProbeReadKernel.Call(),
		}
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, stTime, asm.R0, asm.DWord),
		asm.LoadMem(asm.R7, asm.R6, arg*8, asm.DWord), // the bio or request
	}
	insns = append(insns, probe(stWindow, int32(size), asm.R7, start)...)
	insns = append(insns, asm.JNE.Imm(asm.R0, 0, "exit"))
	// The pointer that says which device: the queue or the bdev.
	if isRq {
		insns = append(insns, ld(asm.R8, l.rqQ))
	} else {
		insns = append(insns, ld(asm.R8, l.bioBdev))
	}
	insns = append(insns,
		asm.StoreMem(asm.RFP, stKey, asm.R8, asm.DWord),
		asm.LoadMapPtr(asm.R1, m.cache.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stKey),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "resolve"),
		asm.LoadMem(asm.R9, asm.R0, 0, asm.Word),
		asm.Ja.Label("known"),
	)
	// First meeting: read the device's number and whether it is traced.
	resolve := asm.Instructions{}
	if isRq {
		resolve = append(resolve, probe(stTmp, 8, asm.R8, l.qDisk.off)...)
		resolve[0] = resolve[0].WithSymbol("resolve")
		resolve = append(resolve,
			asm.JNE.Imm(asm.R0, 0, "exit"),
			asm.LoadMem(asm.R9, asm.RFP, stTmp, asm.DWord), // the gendisk
			asm.JEq.Imm(asm.R9, 0, "exit"))
		resolve = append(resolve, probe(stTmp, 4, asm.R9, l.diskMajor.off)...)
		resolve = append(resolve,
			asm.LoadMem(asm.R1, asm.RFP, stTmp, asm.Word),
			asm.StoreMem(asm.RFP, stDev, asm.R1, asm.Word))
		resolve = append(resolve, probe(stTmp, 4, asm.R9, l.diskFirstMinor.off)...)
		resolve = append(resolve,
			asm.LoadMem(asm.R1, asm.RFP, stDev, asm.Word),
			asm.LSh.Imm(asm.R1, 20),
			asm.LoadMem(asm.R2, asm.RFP, stTmp, asm.Word),
			asm.Or.Reg(asm.R1, asm.R2),
			asm.StoreMem(asm.RFP, stDev, asm.R1, asm.Word))
	} else {
		resolve = append(resolve, probe(stTmp, 4, asm.R8, l.bdevDev.off)...)
		resolve[0] = resolve[0].WithSymbol("resolve")
		resolve = append(resolve,
			asm.LoadMem(asm.R1, asm.RFP, stTmp, asm.Word),
			asm.StoreMem(asm.RFP, stDev, asm.R1, asm.Word))
	}
	resolve = append(resolve,
		asm.LoadMapPtr(asm.R1, m.devs.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stDev),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, "traced"),
		asm.StoreImm(asm.RFP, stDev, 0, asm.Word), // not traced: remember 0
		asm.LoadMapPtr(asm.R1, m.cache.FD()).WithSymbol("traced"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stKey),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, stDev),
		asm.Mov.Imm(asm.R4, 0), // BPF_ANY
		asm.FnMapUpdateElem.Call(),
		asm.LoadMem(asm.R9, asm.RFP, stDev, asm.Word),
	)
	insns = append(insns, resolve...)
	insns = append(insns,
		asm.JEq.Imm(asm.R9, 0, "exit").WithSymbol("known"), // R9: the dev_t, 0 when not traced
		asm.LoadMapPtr(asm.R1, m.rb.FD()),
		asm.Mov.Imm(asm.R2, eventSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "drop"),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.StoreMem(asm.R8, 36, asm.R9, asm.Word),
		asm.StoreMem(asm.R8, 16, asm.R7, asm.DWord), // the pointer
		asm.StoreImm(asm.R8, 44, int64(k), asm.Byte),
		asm.StoreImm(asm.R8, 47, 0, asm.Byte),
	)
	if isRq {
		insns = append(insns,
			ld(asm.R1, l.rqSector),
			asm.StoreMem(asm.R8, 8, asm.R1, asm.DWord),
			ld(asm.R1, l.rqBio),
			asm.StoreMem(asm.R8, 24, asm.R1, asm.DWord),
			ld(asm.R1, l.rqCmdFlags),
			asm.StoreMem(asm.R8, 45, asm.R1, asm.Byte), // REQ_OP_ is the low byte
		)
		if k == Complete {
			// (struct request *rq, blk_status_t error, unsigned int nr_bytes)
			insns = append(insns, asm.LoadMem(asm.R1, asm.R6, 16, asm.DWord))
		} else {
			insns = append(insns, ld(asm.R1, l.rqDataLen))
		}
	} else {
		insns = append(insns,
			ld(asm.R1, l.bioSector),
			asm.StoreMem(asm.R8, 8, asm.R1, asm.DWord),
			ld(asm.R1, l.bioOpf),
			asm.StoreMem(asm.R8, 45, asm.R1, asm.Byte),
		)
		if k == Split {
			// (struct bio *bio, unsigned int new_sector)
			insns = append(insns,
				asm.LoadMem(asm.R1, asm.R6, 8, asm.DWord),
				asm.LSh.Imm(asm.R1, 32),
				asm.RSh.Imm(asm.R1, 32))
		} else {
			insns = append(insns, asm.Mov.Imm(asm.R1, 0))
		}
		insns = append(insns,
			asm.StoreMem(asm.R8, 24, asm.R1, asm.DWord),
			ld(asm.R1, l.bioSize))
	}
	insns = append(insns,
		asm.RSh.Imm(asm.R1, 9), // bytes to sectors
		asm.StoreMem(asm.R8, 32, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.RFP, stTime, asm.DWord),
		asm.StoreMem(asm.R8, 0, asm.R1, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.R8, 40, asm.R0, asm.Word), // the thread id, the low half
		asm.RSh.Imm(asm.R0, 32),
		asm.Mov.Imm(asm.R1, 0),
		asm.JNE.Imm(asm.R0, int32(tgid), "store-own"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.R8, 46, asm.R1, asm.Byte).WithSymbol("store-own"),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Mov.Imm(asm.R2, 1), // BPF_RB_NO_WAKEUP: the reader polls
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label("exit"),
		// The buffer is full: count the event lost.
		asm.StoreImm(asm.RFP, stDev, 0, asm.Word).WithSymbol("drop"),
		asm.LoadMapPtr(asm.R1, m.drops.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, stDev),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	return insns
}
