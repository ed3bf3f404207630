package blocktrace

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// eventRing is the ring buffer the event programs write to: 16 MiB holds
// half a million events, well over what the devices here make between two
// reads (every pollEvery). pairedRing is the paired programs': 2 MiB,
// 29,000 bios, 145 ms of zram's 200,000 a second. Each wake-up of the
// reader costs two context switches (the timer's thread wakes the
// reader's): every 25 ms the tracer's process took 96-146 ns a bio,
// every 10 ms 124-212. Small enough that the
// line a record goes to is still in the cache when the program writes
// it and when the reader reads it: at 16 MiB the completion's program
// took 380-530 ns a run, at 4 MiB 190-250, at 2 MiB 120-220 (zram 4 KiB
// randread at iodepth 32, bpf stats on, load 11).
const (
	eventRing  = 16 << 20
	pairedRing = 2 << 20
	pollEvery  = 25 * time.Millisecond
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
	// slotBits sizes the paired programs' array of bios in flight
	// (2^slotBits slots; 0: bioSlotBits): tests make it small, so that
	// bios share slots.
	slotBits int
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
	names []string // the programs' tracepoints
	drops *ebpf.Map
	rd    *ring
	// each takes a record, flush hands what each gathered to the sink;
	// both on the reading goroutine.
	each  func([]byte)
	flush func()

	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	events uint64
	err    error
	// readerCPU is the reading thread's CPU time, set as it ends.
	readerCPU time.Duration
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
	// ByProgram are the runs and CPU time of each program, by its
	// tracepoint's name.
	ByProgram map[string]ProgramStats
	// ReaderCPU is the CPU time of the thread that read the ring buffer
	// and ran the sink: the tracer's cost in user space (and the system
	// calls of its polling), beside the programs' RunTime in the kernel.
	ReaderCPU time.Duration
}

// ProgramStats are one program's runs and the CPU time they took.
type ProgramStats struct {
	Runs    uint64
	RunTime time.Duration
}

// Open loads and attaches the programs and starts handing events to
// sink, in batches, from one goroutine, in the order each CPU recorded
// them (events of different CPUs interleave only roughly: sort by Time
// where order matters).
func Open(o Options, sink func([]Event)) (*Tracer, error) {
	t := &Tracer{}
	batcher(t, eventSize, decodeEvent, sink)
	return t.open(o, func(k Kind, l *kernelLayout, m progMaps) asm.Instructions {
		return program(k, l, m, o.Devs, uint32(o.TGID))
	}, allKinds, eventRing)
}

var allKinds = func() []Kind {
	var ks []Kind
	for k := range numKinds {
		ks = append(ks, k)
	}
	return ks
}()

// open loads and attaches the programs gen makes for kinds, which write
// to a ring buffer of ringSize bytes.
func (t *Tracer) open(o Options, gen func(Kind, *kernelLayout, progMaps) asm.Instructions, kinds []Kind, ringSize int) (*Tracer, error) {
	if len(o.Devs) == 0 {
		return nil, errors.New("blocktrace: no device to trace")
	}
	if len(o.Devs) > maxDevs {
		return nil, fmt.Errorf("blocktrace: %d devices to trace; at most %d", len(o.Devs), maxDevs)
	}
	kl, err := readKernelLayout()
	if err != nil {
		return nil, err
	}
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	fail := func(err error) (*Tracer, error) {
		t.closeObjs()
		return nil, rights(err)
	}
	newMap := func(spec *ebpf.MapSpec) (*ebpf.Map, error) {
		mp, err := ebpf.NewMap(spec)
		if err != nil {
			return nil, fmt.Errorf("blocktrace: map %s: %w", spec.Name, err)
		}
		t.objs = append(t.objs, mp)
		return mp, nil
	}
	var m progMaps
	if m.rb, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_rb", Type: ebpf.RingBuf, MaxEntries: uint32(ringSize)}); err != nil {
		return fail(err)
	}
	if m.drops, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_drops", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}); err != nil {
		return fail(err)
	}
	t.drops = m.drops
	if m.bios, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_bios", Type: ebpf.Hash, KeySize: 8, ValueSize: bioValSize, MaxEntries: inFlight}); err != nil {
		return fail(err)
	}
	m.slotBits = bioSlotBits
	if o.slotBits > 0 {
		m.slotBits = o.slotBits
	}
	if m.slots, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_slots", Type: ebpf.Array, KeySize: 4, ValueSize: bioSlotSize, MaxEntries: 1 << m.slotBits}); err != nil {
		return fail(err)
	}
	if m.scratch, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_scr", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1}); err != nil {
		return fail(err)
	}
	if m.reqs, err = newMap(&ebpf.MapSpec{Name: "iolab_blk_reqs", Type: ebpf.Hash, KeySize: 8, ValueSize: rqValSize, MaxEntries: inFlight}); err != nil {
		return fail(err)
	}
	for _, k := range kinds {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: fmt.Sprintf("iolab_%s_%d", k.Letter2(), o.TGID), Type: ebpf.Tracing, License: "GPL",
			AttachType: ebpf.AttachTraceRawTp, AttachTo: tracepoints[k],
			Instructions: gen(k, &kl, m),
		})
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, ebpf.ErrNotSupported) {
				err = fmt.Errorf("this kernel has no tracepoint block:%s: it cannot trace the block layer (%w)", tracepoints[k], err)
			}
			return fail(fmt.Errorf("blocktrace: loading the program for block:%s: %w", tracepoints[k], err))
		}
		t.objs = append(t.objs, prog)
		t.progs = append(t.progs, prog)
		t.names = append(t.names, tracepoints[k])
		l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			return fail(fmt.Errorf("blocktrace: attaching to block:%s: %w", tracepoints[k], err))
		}
		t.links = append(t.links, l)
	}
	if t.rd, err = newRing(m.rb.FD(), ringSize); err != nil {
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
	// On a thread of its own, so that its CPU time is the reader's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	defer func() { t.readerCPU = threadCPU() - cpu0 }()
	wait := time.NewTimer(pollEvery)
	defer wait.Stop()
	for {
		stopping := false
		select {
		case <-t.stop:
			stopping = true
		case <-wait.C:
		}
		n := t.rd.drain(t.each)
		t.flush()
		if stopping {
			return
		}
		// A buffer found a quarter full is read again soon: a faster
		// device than pollEvery was sized for, or a late wake-up.
		if n > t.rd.size()/4 {
			wait.Reset(pollEvery / 8)
		} else {
			wait.Reset(pollEvery)
		}
	}
}

// batcher gathers decoded records into batches for a sink, counting them.
func batcher[T any](t *Tracer, size int, decode func([]byte) T, sink func([]T)) {
	batch := make([]T, 0, 4096)
	t.flush = func() {
		if len(batch) == 0 {
			return
		}
		sink(batch)
		t.mu.Lock()
		t.events += uint64(len(batch))
		t.mu.Unlock()
		batch = batch[:0]
	}
	t.each = func(rec []byte) {
		if len(rec) >= size {
			batch = append(batch, decode(rec))
		}
		if len(batch) == cap(batch) {
			t.flush()
		}
	}
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
	for i, p := range t.progs {
		if ps, err := p.Stats(); err == nil {
			st.Missed += ps.RecursionMisses
			st.Runs += ps.RunCount
			st.RunTime += ps.Runtime
			if st.ByProgram == nil {
				st.ByProgram = map[string]ProgramStats{}
			}
			st.ByProgram[t.names[i]] = ProgramStats{ps.RunCount, ps.Runtime}
		}
	}
	var drops uint64
	if err := t.drops.Lookup(uint32(0), &drops); err == nil {
		st.Dropped = drops
	}
	st.ReaderCPU = t.readerCPU
	t.rd.close()
	t.closeObjs()
	t.mu.Lock()
	defer t.mu.Unlock()
	st.Events = t.events
	return st, t.err
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
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
type progMaps struct {
	rb, drops, bios, reqs, slots, scratch *ebpf.Map
	slotBits                              int // slots holds 2^slotBits bios
}

// inFlight bounds the bios and requests the paired programs keep in
// flight at once.
const inFlight = 1 << 16

// maxDevs is the most devices one tracer traces: the programs compare
// each event's device with every traced one.
const maxDevs = 16

// Stack slots of the programs (below the frame pointer).
const (
	stDev  = -4  // a dev_t, the device map's key
	stTime = -16 // the event's time, read first
)

// program is the BPF program of one block tracepoint, attached as a
// BTF-typed raw tracepoint: it is handed the kernel's bio or request and
// reads their fields directly (the verifier checks each load against the
// kernel's types; a fault reads 0). For an event on a traced device it
// writes an Event record to the ring buffer (without waking the reader,
// which polls) or, when the buffer is full, counts a drop. A bio's
// device is its block device's number, a request's its disk's, through
// its queue.
func program(k Kind, l *kernelLayout, m progMaps, devs []uint32, tgid uint32) asm.Instructions {
	isRq := k == Insert || k == Issue || k == Complete || k == Requeue
	arg := int16(0)
	if k == BioComplete {
		arg = 1 // (struct request_queue *q, struct bio *bio)
	}
	// ld loads member mb of the struct at src into dst.
	ld := func(dst, src asm.Register, mb member) asm.Instruction {
		sz := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[mb.size]
		return asm.LoadMem(dst, src, int16(mb.off), sz)
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, arg*8, asm.DWord), // the bio or request
	}
	if isRq {
		insns = append(insns,
			ld(asm.R1, asm.R7, l.rqQ),
			ld(asm.R1, asm.R1, l.qDisk),
			ld(asm.R2, asm.R1, l.diskMajor),
			ld(asm.R3, asm.R1, l.diskFirstMinor),
			asm.LSh.Imm(asm.R2, 20),
			asm.Or.Reg(asm.R2, asm.R3),
		)
	} else {
		insns = append(insns,
			ld(asm.R1, asm.R7, l.bioBdev),
			ld(asm.R2, asm.R1, l.bdevDev),
		)
	}
	// Traced? The devices are compared one by one: no map lookup for
	// the machine's other block events, which run the program too.
	for _, d := range devs {
		insns = append(insns, asm.JEq.Imm(asm.R2, int32(d), "traced"))
	}
	insns = append(insns,
		asm.Ja.Label("exit"),
		asm.Mov.Reg(asm.R9, asm.R2).WithSymbol("traced"),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, stTime, asm.R0, asm.DWord),
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
			ld(asm.R1, asm.R7, l.rqSector),
			asm.StoreMem(asm.R8, 8, asm.R1, asm.DWord),
			ld(asm.R1, asm.R7, l.rqBio),
			asm.StoreMem(asm.R8, 24, asm.R1, asm.DWord),
			ld(asm.R1, asm.R7, l.rqCmdFlags),
			asm.StoreMem(asm.R8, 45, asm.R1, asm.Byte), // REQ_OP_ is the low byte
		)
		if k == Complete {
			// (struct request *rq, blk_status_t error, unsigned int nr_bytes)
			insns = append(insns, asm.LoadMem(asm.R1, asm.R6, 16, asm.DWord))
		} else {
			insns = append(insns, ld(asm.R1, asm.R7, l.rqDataLen))
		}
	} else {
		insns = append(insns,
			ld(asm.R1, asm.R7, l.bioSector),
			asm.StoreMem(asm.R8, 8, asm.R1, asm.DWord),
			ld(asm.R1, asm.R7, l.bioOpf),
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
			ld(asm.R1, asm.R7, l.bioSize))
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
