package blocktrace

import (
	"bufio"
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
	// Tracefs is where tracefs is mounted; "" finds it.
	Tracefs string
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
}

// ErrNoTracefs: the block tracepoints cannot be found because tracefs is
// not mounted.
var ErrNoTracefs = errors.New("tracefs is not mounted, so the block tracepoints cannot be found: mount it (mount -t tracefs nodev /sys/kernel/tracing) and try again")

// Open loads and attaches the programs and starts handing events to
// sink, in batches, from one goroutine, in the order each CPU recorded
// them (events of different CPUs interleave only roughly: sort by Time
// where order matters).
func Open(o Options, sink func([]Event)) (*Tracer, error) {
	if len(o.Devs) == 0 {
		return nil, errors.New("blocktrace: no device to trace")
	}
	dir := o.Tracefs
	if dir == "" {
		var err error
		if dir, err = findTracefs(); err != nil {
			return nil, err
		}
	}
	var layouts [numKinds]layout
	for k := range numKinds {
		l, err := readLayout(dir, k)
		if err != nil {
			return nil, err
		}
		layouts[k] = l
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
	for k := range numKinds {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: fmt.Sprintf("iolab_%s_%d", k.Letter2(), o.TGID), Type: ebpf.TracePoint, License: "GPL",
			Instructions: program(k, layouts[k], rb, devs, t.drops, uint32(o.TGID)),
		})
		if err != nil {
			return fail(fmt.Errorf("blocktrace: loading the program for %s: %w", k, err))
		}
		t.objs = append(t.objs, prog)
		t.progs = append(t.progs, prog)
		l, err := link.Tracepoint("block", tracepoints[k], prog, nil)
		if err != nil {
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

// findTracefs is where tracefs is mounted (/proc/self/mountinfo).
func findTracefs() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		for i, w := range fields {
			if w == "-" && i+1 < len(fields) && fields[i+1] == "tracefs" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	return "", ErrNoTracefs
}

// program is the BPF program of one tracepoint: for an event on a traced
// device it writes an Event record to the ring buffer (without waking the
// reader, which polls) or, when the buffer is full, counts a drop.
func program(k Kind, l layout, rb, devs, drops *ebpf.Map, tgid uint32) asm.Instructions {
	ld := func(dst asm.Register, f field) asm.Instruction {
		size := asm.Word
		if f.size == 8 {
			size = asm.DWord
		}
		return asm.LoadMem(dst, asm.R6, int16(f.off), size)
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // the tracepoint's record
		// Is the device traced?
		ld(asm.R2, l.dev),
		asm.StoreMem(asm.RFP, -4, asm.R2, asm.Word),
		asm.LoadMapPtr(asm.R1, devs.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMapPtr(asm.R1, rb.FD()),
		asm.Mov.Imm(asm.R2, eventSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "drop"),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.StoreMem(asm.R8, 0, asm.R7, asm.DWord),
		ld(asm.R1, l.sector),
		asm.StoreMem(asm.R8, 8, asm.R1, asm.DWord),
	}
	if k == Split {
		insns = append(insns,
			ld(asm.R2, l.newSector),
			asm.Sub.Reg(asm.R2, asm.R1),
			asm.StoreMem(asm.R8, 16, asm.R2, asm.Word))
	} else {
		insns = append(insns,
			ld(asm.R1, l.sectors),
			asm.StoreMem(asm.R8, 16, asm.R1, asm.Word))
	}
	insns = append(insns,
		ld(asm.R1, l.dev),
		asm.StoreMem(asm.R8, 20, asm.R1, asm.Word),
		asm.StoreImm(asm.R8, 28, int64(k), asm.Byte),
		asm.LoadMem(asm.R1, asm.R6, int16(l.rwbs.off), asm.Byte),
		asm.StoreMem(asm.R8, 29, asm.R1, asm.Byte),
		asm.LoadMem(asm.R1, asm.R6, int16(l.rwbs.off+1), asm.Byte),
		asm.StoreMem(asm.R8, 30, asm.R1, asm.Byte),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.R8, 24, asm.R0, asm.Word), // the thread id, the low half
		asm.RSh.Imm(asm.R0, 32),
		asm.Mov.Imm(asm.R1, 0),
		asm.JNE.Imm(asm.R0, int32(tgid), "store-own"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.R8, 31, asm.R1, asm.Byte).WithSymbol("store-own"),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Mov.Imm(asm.R2, 1), // BPF_RB_NO_WAKEUP: the reader polls
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label("exit"),
		// The buffer is full: count the event lost.
		asm.StoreImm(asm.RFP, -4, 0, asm.Word).WithSymbol("drop"),
		asm.LoadMapPtr(asm.R1, drops.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	return insns
}
