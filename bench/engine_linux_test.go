package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
	"iolab/bench/randgen"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// engineVariant is one engine, or one of its modes, that the engine tests
// run.
type engineVariant struct {
	name string
	set  func(*Job)
}

// engineVariants are every engine in the table that does I/O, alone and
// with each of its modes but polling (hipri needs poll queues, which the
// test machine's devices lack; preflight and the hipri tests cover it), so
// an engine added to the table is tested without touching this file.
func engineVariants() []engineVariant {
	var out []engineVariant
	for _, e := range Engines() {
		if e.Has(Diskless) {
			continue
		}
		names := []string{e.Name}
		for _, m := range e.Modes {
			if m.Option != "hipri" {
				names = append(names, e.Name+"+"+m.Name)
			}
		}
		for _, n := range names {
			out = append(out, engineVariant{n, func(j *Job) {
				if _, err := ApplyEngineVariant(j, n); err != nil {
					panic(err)
				}
			}})
		}
	}
	return out
}

// pattern fills b with bytes that depend on block, so a block read back
// from the wrong place or not written at all cannot match.
func pattern(b []byte, block int) {
	r := randgen.NewSplitMix(uint64(block)*7919 + 1)
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Next())
	}
}

// TestEngineWriteReadBack writes a known pattern through each engine's
// real kernel path, checks it landed (read with ordinary file I/O), then
// reads it back through the engine into cleared buffers.
func TestEngineWriteReadBack(t *testing.T) {
	const bs, blocks, depth = 4096, 48, 8
	targets := []struct {
		name string
		make func(t *testing.T) string
	}{
		{"file", func(t *testing.T) string { return testdev.TempFile(t, blocks*bs) }},
		{"loop", func(t *testing.T) string { return testdev.Loop(t, blocks*bs) }},
	}
	for _, tg := range targets {
		for _, v := range engineVariants() {
			t.Run(tg.name+"/"+v.name, func(t *testing.T) {
				path := tg.make(t)
				j := NewJob()
				j.BS, j.IODepth, j.Direct = bs, depth, true
				v.set(&j)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(fd)
				bufs, err := newBuffers(bs, depth, 1, memPolicy{})
				if err != nil {
					t.Fatal(err)
				}
				defer bufs.free()
				eng, _, err := newEngine(&j, []int{fd}, bufs, depth)
				if err != nil {
					t.Fatal(err)
				}
				defer eng.Close()

				// Blocks in a scrambled order, depth at a time.
				order := make([]int, blocks)
				walk, _ := randgen.NewLFSR(uint64(blocks), 3)
				for i := range order {
					b, _ := walk.Next()
					order[i] = int(b)
				}
				doAll(t, eng, order, depth, bufs, true)
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]byte, bs)
				for blk := range blocks {
					pattern(want, blk)
					if !bytes.Equal(got[blk*bs:(blk+1)*bs], want) {
						t.Fatalf("block %d on disk does not hold what the engine wrote", blk)
					}
				}
				doAll(t, eng, order, depth, bufs, false)
			})
		}
	}
}

// doAll runs one I/O per block through eng, depth at a time. Writes fill
// each slot with the block's pattern first; reads clear the slot and check
// it holds the pattern after completion.
func doAll(t *testing.T, eng engine.IO, order []int, depth int, bufs *buffers, write bool) {
	t.Helper()
	comps := make([]engine.Completion, depth)
	want := make([]byte, bufs.BS)
	for start := 0; start < len(order); start += depth {
		chunk := order[start:min(start+depth, len(order))]
		slotBlock := map[int]int{}
		for slot, blk := range chunk {
			b := bufs.slice(slot)
			if write {
				pattern(b, blk)
			} else {
				clear(b)
			}
			slotBlock[slot] = blk
			op := opRead
			if write {
				op = opWrite
			}
			eng.Queue(slot, op, 0, int64(blk*bufs.BS), uint32(bufs.BS))
		}
		if n, err := eng.Commit(); err != nil || n != len(chunk) {
			t.Fatalf("commit: %d of %d, %v", n, len(chunk), err)
		}
		done := 0
		for done < len(chunk) {
			n, err := eng.GetEvents(1, len(chunk)-done, true, comps)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range comps[:n] {
				if int(c.Res) != bufs.BS {
					t.Fatalf("slot %d: result %d, want %d", c.Slot, c.Res, bufs.BS)
				}
				if !write {
					pattern(want, slotBlock[int(c.Slot)])
					if !bytes.Equal(bufs.slice(int(c.Slot)), want) {
						t.Fatalf("block %d read back through the engine differs from what was written", slotBlock[int(c.Slot)])
					}
				}
			}
			done += n
		}
	}
}

// TestRunEveryEngineAndPattern runs each engine through the job loop for
// each rw pattern on an O_DIRECT file and checks what it measured, and that
// every sector a write job touched carries the stamp of its own offset.
func TestRunEveryEngineAndPattern(t *testing.T) {
	const size = 4 << 20
	for _, v := range engineVariants() {
		for _, rw := range []string{"read", "write", "randread", "randwrite", "randrw"} {
			t.Run(v.name+"/"+rw, func(t *testing.T) {
				path := testdev.TempFile(t, size)
				j := NewJob()
				j.Name, j.Filename, j.RW, j.BS, j.IODepth, j.Direct = "t", path, rw, 4096, 4, true
				j.RWMixRead = 70
				j.Runtime, j.TimeBased = 300*time.Millisecond, true
				v.set(&j)
				res := runOne(t, j)
				r := res.Groups[0].Jobs[0]
				if r.Error != "" {
					t.Fatal(r.Error)
				}
				for d, want := range []bool{j.Reads(), j.Writes()} {
					dr := r.Dirs[d]
					if want != (dr.IOs > 0) {
						t.Fatalf("direction %d: %d I/Os, want some: %v", d, dr.IOs, want)
					}
					if dr.Clat.Stat.N != dr.IOs || dr.Lat.Stat.N != dr.IOs || dr.Clat.Hist.N() != dr.IOs {
						t.Fatalf("direction %d: %d I/Os but clat N %d, lat N %d", d, dr.IOs, dr.Clat.Stat.N, dr.Lat.Stat.N)
					}
					if dr.Bytes != dr.IOs*4096 {
						t.Fatalf("direction %d: %d bytes for %d I/Os", d, dr.Bytes, dr.IOs)
					}
				}
				if r.Runtime < 250*time.Millisecond || r.Runtime > 2*time.Second {
					t.Fatalf("runtime %v for a 300ms job", r.Runtime)
				}
				if j.Writes() {
					if n := checkStamps(t, path); n == 0 {
						t.Fatal("no sector carries a write stamp")
					}
				}
			})
		}
	}
}

// checkStamps returns how many 512-byte sectors of the file were written by
// a job, failing if any written sector names another offset.
func checkStamps(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	for off := 0; off < len(data); off += stampSize {
		sector := data[off : off+stampSize]
		if bytes.Count(sector, []byte{0}) == stampSize {
			continue
		}
		if got := binary.LittleEndian.Uint64(sector); got != uint64(off) {
			t.Fatalf("sector at %d carries the stamp of offset %d", off, got)
		}
		written++
	}
	return written
}

func runOne(t *testing.T, jobs ...Job) *Result {
	t.Helper()
	cfg := &Config{Groups: Expand(jobs)}
	rn := &Runner{Sys: system.FS{}, Interval: 100 * time.Millisecond}
	res, err := rn.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRandomMapCoversEveryBlockOnce: a size-based randwrite without
// norandommap writes every block exactly once, like fio's random map.
func TestRandomMapCoversEveryBlockOnce(t *testing.T) {
	const size = 1 << 20
	for _, eng := range EngineNames() {
		if e, _ := LookupEngine(eng); e.Has(Diskless) {
			continue
		}
		t.Run(eng, func(t *testing.T) {
			path := testdev.TempFile(t, size)
			j := NewJob()
			j.Name, j.Filename, j.RW, j.BS, j.IODepth, j.Direct, j.IOEngine = "t", path, "randwrite", 4096, 8, true, eng
			res := runOne(t, j)
			r := res.Groups[0].Jobs[0]
			if r.Dirs[Write].IOs != size/4096 {
				t.Fatalf("%d writes, want %d", r.Dirs[Write].IOs, size/4096)
			}
			if n := checkStamps(t, path); n != size/stampSize {
				t.Fatalf("%d sectors written, want all %d", n, size/stampSize)
			}
		})
	}
}

func TestWriteDataIsUnique(t *testing.T) {
	path := testdev.TempFile(t, 1<<20)
	j := NewJob()
	j.Name, j.Filename, j.RW, j.BS, j.IODepth, j.Direct, j.IOEngine = "t", path, "write", 4096, 4, true, "io_uring"
	runOne(t, j)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for off := 0; off < len(data); off += 4096 {
		blk := string(data[off : off+4096])
		if seen[blk] {
			t.Fatalf("block at %d repeats an earlier block", off)
		}
		seen[blk] = true
		// Incompressible apart from the stamps: few repeated bytes.
		if zeros := strings.Count(blk, "\x00"); zeros > 200 {
			t.Fatalf("block at %d has %d zero bytes: not random data", off, zeros)
		}
	}
}
