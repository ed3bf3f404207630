package blocktrace

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/testdev"
)

// devT is the traced form of block device path's number.
func devT(t *testing.T, path string) uint32 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return DevT(unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// collect traces dev for the test's own process and pairs its events.
type collect struct {
	keep   bool // keep every event in events
	events []Event
	mu     sync.Mutex
	m      *Matcher
	bios   []Bio
	tr     *Tracer
}

func traceDev(t *testing.T, devs ...uint32) *collect {
	t.Helper()
	c := &collect{}
	c.m = NewMatcher(func(b *Bio) { c.bios = append(c.bios, *b) })
	tr, err := Open(Options{Devs: devs, TGID: os.Getpid()}, func(evs []Event) {
		c.mu.Lock()
		if c.keep {
			c.events = append(c.events, evs...)
		}
		c.m.Add(evs)
		c.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	c.tr = tr
	return c
}

func (c *collect) close(t *testing.T) (Stats, MatchStats) {
	t.Helper()
	st, err := c.tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return st, c.m.Flush()
}

// TestTraceOwnReads: each of 64 direct reads this process makes on a
// loop device is one bio of its own at its sector, whose kernel times
// lie between the clock read before its pread and after, in order
// (queued, issued, completed); another process's reads on the device are
// traced as not its own; nothing is lost.
func TestTraceOwnReads(t *testing.T) {
	dev := testdev.LoopInMemory(t, 16<<20)
	c := traceDev(t, devT(t, dev))
	f, err := os.OpenFile(dev, os.O_RDWR|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	type span struct{ before, after int64 }
	spans := map[uint64]span{}
	for i := range int64(64) {
		before := monotonic()
		if _, err := unix.Pread(int(f.Fd()), buf, i*65536); err != nil {
			t.Fatal(err)
		}
		spans[uint64(i*65536/512)] = span{before, monotonic()}
	}
	out, err := exec.Command("dd", "if="+dev, "of=/dev/null", "bs=4k", "count=4", "skip=1000", "iflag=direct").CombinedOutput()
	if err != nil {
		t.Fatalf("dd: %v %s", err, out)
	}
	time.Sleep(3 * pollEvery)
	st, ms := c.close(t)
	if st.Dropped != 0 || ms.Orphans != 0 {
		t.Errorf("stats %+v, %+v", st, ms)
	}
	own, foreign := 0, 0
	for _, b := range c.bios {
		if !b.Own {
			if b.Sector >= 8000 && b.Sector < 8032 && b.Op == 'R' {
				foreign++
			}
			continue
		}
		own++
		s, ok := spans[b.Sector]
		switch {
		case !ok || b.Sectors != 8 || b.Op != 'R':
			t.Errorf("own bio %+v: not one of the reads", b)
		case !b.OneToOne() || b.BioBased:
			t.Errorf("own bio %+v: not one request of its own", b)
		case !(s.before <= b.Queue && b.Queue <= b.GetRq && b.GetRq <= b.Issue && b.Issue <= b.Complete && b.Complete <= s.after):
			t.Errorf("own bio at %d: Q %d G %d D %d C %d, not in order within the pread's [%d, %d]",
				b.Sector, b.Queue-s.before, b.GetRq-s.before, b.Issue-s.before, b.Complete-s.before, 0, s.after-s.before)
		}
	}
	if own != 64 {
		t.Errorf("%d bios of its own, want 64", own)
	}
	if foreign != 4 {
		t.Errorf("%d of dd's reads traced as another process's, want 4", foreign)
	}
}

// TestTraceRefusals: a kernel without one of the block tracepoints and a
// process without the rights (root with every capability dropped) are
// refused, each saying why and what to do.
func TestTraceRefusals(t *testing.T) {
	dev := testdev.LoopInMemory(t, 1<<20)
	saved := tracepoints[Requeue]
	tracepoints[Requeue] = "block_rq_nonesuch"
	_, err := Open(Options{Devs: []uint32{devT(t, dev)}}, func([]Event) {})
	tracepoints[Requeue] = saved
	if err == nil || !strings.Contains(err.Error(), "no tracepoint block:block_rq_nonesuch") || !strings.Contains(err.Error(), "cannot trace the block layer") {
		t.Errorf("without a tracepoint: %v", err)
	}
	out, err := childCommand(t, "refuse", dev, "setpriv", "--inh-caps=-all", "--bounding-set=-all", "--").CombinedOutput()
	if err != nil {
		t.Fatalf("the child without capabilities: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "needs root (CAP_BPF and CAP_PERFMON)") {
		t.Errorf("without capabilities: %s", out)
	}
}

// TestTraceKilledLeavesNothing: a process killed (SIGKILL) while tracing
// leaves none of its programs loaded: they hang on its descriptors.
func TestTraceKilledLeavesNothing(t *testing.T) {
	dev := testdev.LoopInMemory(t, 1<<20)
	cmd := childCommand(t, "hold", dev)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "tracing") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child: %q %v", line, err)
	}
	suffix := "_" + strconv.Itoa(cmd.Process.Pid)
	if n := testdev.ProgramsEnding(t, suffix); n != int(numKinds) {
		t.Errorf("%d programs of the tracing child, want %d", n, numKinds)
	}
	cmd.Process.Signal(unix.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for testdev.ProgramsEnding(t, suffix) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the killed child's programs are still loaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childCommand runs this test binary as a child that traces dev: "hold"
// prints "tracing" and waits to be killed; "refuse" prints Open's error.
// wrap, if given, is a command (and its arguments) to run it under.
func childCommand(t *testing.T, what, dev string, wrap ...string) *exec.Cmd {
	t.Helper()
	args := append(wrap, os.Args[0], "-test.run=^TestTraceChild$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "IOLAB_BLOCKTRACE_CHILD="+what, "IOLAB_BLOCKTRACE_DEV="+dev)
	return cmd
}

// TestTraceChild is the child of childCommand; it does nothing in a
// test run of its own.
func TestTraceChild(t *testing.T) {
	what := os.Getenv("IOLAB_BLOCKTRACE_CHILD")
	if what == "" {
		return
	}
	dev := devT(t, os.Getenv("IOLAB_BLOCKTRACE_DEV"))
	tr, err := Open(Options{Devs: []uint32{dev}, TGID: os.Getpid()}, func([]Event) {})
	if what == "refuse" {
		fmt.Println(err)
		if tr != nil {
			tr.Close()
		}
		return
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("tracing")
	time.Sleep(time.Minute)
}
