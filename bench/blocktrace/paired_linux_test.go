package blocktrace

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"iolab/bench/testdev"
)

// TestPairedMatchesEvents: the paired programs, pairing in the kernel,
// find for every bio of four threads' reads on a loop device under
// mq-deadline the times the event programs and the matcher find from the
// same tracepoints at the same time (each program reads the clock itself:
// means and medians within 2 % and 1 µs, p99s within 5 % and 5 µs), and
// the same bios.
func TestPairedMatchesEvents(t *testing.T) {
	dev := testdev.LoopInMemory(t, 64<<20)
	sched := filepath.Join("/sys/block", filepath.Base(dev), "queue", "scheduler")
	if err := os.WriteFile(sched, []byte("mq-deadline"), 0o644); err != nil {
		t.Fatalf("%s: %v", sched, err)
	}
	d := devT(t, dev)
	c := traceDev(t, d)
	var mu sync.Mutex
	var paired []Bio
	pt, err := OpenPaired(Options{Devs: []uint32{d}, TGID: os.Getpid()}, func(bs []Bio) {
		mu.Lock()
		paired = append(paired, bs...)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	const threads, reads = 4, 1000
	// Sectors of its own, each read once.
	directReads(t, dev, threads, reads, func(th, i int, _ *rand.Rand) int64 { return int64(i*threads+th) * 4096 })
	pst, err := pt.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, ms := c.close(t)
	if ms.Bios != threads*reads || len(paired) != threads*reads || pst.Dropped != 0 {
		t.Fatalf("events paired %+v, the kernel %d (%+v), want %d each", ms, len(paired), pst, threads*reads)
	}
	bySector := map[uint64]Bio{}
	for _, b := range c.bios {
		bySector[b.Sector] = b
	}
	// The same bios, as the same I/Os.
	var pq, eq, pd, ed []float64
	for _, p := range paired {
		e, ok := bySector[p.Sector]
		if !ok || p.Sectors != e.Sectors || p.Own != e.Own || p.Op != e.Op || p.Merged != e.Merged || p.TID != e.TID ||
			(p.Insert == 0) != (e.Insert == 0) || p.Issue == 0 || p.Queue == 0 {
			t.Fatalf("paired %+v\nevents %+v", p, e)
		}
		pq, eq = append(pq, float64(p.Complete-p.Queue)), append(eq, float64(e.Complete-e.Queue))
		pd, ed = append(pd, float64(p.Complete-p.Issue)), append(ed, float64(e.Complete-e.Issue))
	}
	// The same times, but for each program reading the clock itself a
	// little after the other on the same tracepoint.
	for _, part := range []struct {
		name         string
		paired, evts []float64
	}{{"q2c", pq, eq}, {"d2c", pd, ed}} {
		for _, s := range []struct {
			stat string
			of   func([]float64) float64
		}{{"mean", mean}, {"p50", pct(50)}, {"p99", pct(99)}} {
			a, b := s.of(part.paired), s.of(part.evts)
			// The 99th percentile is the 40th largest of 4,000: a few
			// reads whose two programs were parted by an interrupt or a
			// preemption move it by microseconds on a busy machine.
			tol := 0.02*b + 1000
			if s.stat == "p99" {
				tol = 0.05*b + 5000
			}
			if math.Abs(a-b) > tol {
				t.Errorf("%s %s: paired in the kernel %.0f ns, from the events %.0f ns", part.name, s.stat, a, b)
			}
		}
	}
}

// TestPairedSlotsShared: with two slots for the bios in flight, sixteen
// threads' reads share them all the time (a bio whose slot another holds
// goes to the hash map, a freed slot is claimed again), and every read
// still comes out once, with its own times.
func TestPairedSlotsShared(t *testing.T) {
	dev := testdev.LoopInMemory(t, 64<<20)
	d := devT(t, dev)
	var mu sync.Mutex
	var paired []Bio
	pt, err := OpenPaired(Options{Devs: []uint32{d}, TGID: os.Getpid(), slotBits: 1}, func(bs []Bio) {
		mu.Lock()
		paired = append(paired, bs...)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	const threads, reads = 16, 300
	directReads(t, dev, threads, reads, func(th, i int, _ *rand.Rand) int64 { return int64(i*threads+th) * 4096 })
	st, err := pt.Close()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, b := range paired {
		if !b.Own || seen[b.Sector] || b.Sector%8 != 0 || b.Sector/8 >= threads*reads || b.Sectors != 8 ||
			b.Queue == 0 || b.Issue < b.Queue || b.Complete < b.Issue {
			t.Fatalf("bio %+v (seen before: %v)", b, seen[b.Sector])
		}
		seen[b.Sector] = true
	}
	if len(seen) != threads*reads || st.Dropped != 0 {
		t.Fatalf("%d reads paired of %d (%+v)", len(seen), threads*reads, st)
	}
}

// directReads reads dev with O_DIRECT, 4 KiB at a time, from threads
// goroutines, reads each, at the offsets at gives (th, the goroutine; i,
// its read; rng, its own source, seeded by th).
func directReads(t *testing.T, dev string, threads, reads int, at func(th, i int, rng *rand.Rand) int64) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wg sync.WaitGroup
	for th := range threads {
		wg.Go(func() {
			buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
			if err != nil {
				t.Error(err)
				return
			}
			defer unix.Munmap(buf)
			rng := rand.New(rand.NewPCG(uint64(th), 9))
			for i := range reads {
				if _, err := unix.Pread(int(f.Fd()), buf, at(th, i, rng)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
