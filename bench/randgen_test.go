package bench

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestBlockMap checks the random map against a plain slice of bools:
// nextFree finds the first free block after b, going round, whatever the
// map's levels hold.
func TestBlockMap(t *testing.T) {
	for _, n := range []uint64{1, 2, 63, 64, 65, 100, 4096, 4097, 64*64*64 + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := newBlockMap(n)
			ref := make([]bool, n)
			r := newTaus88(n)
			want := func(b uint64) (uint64, bool) {
				for i := uint64(1); i <= n; i++ {
					if c := (b + i) % n; !ref[c] {
						return c, true
					}
				}
				return 0, false
			}
			// Fill the map in a random order, checking every step, then
			// once more after a reset.
			for pass := range 2 {
				for done := uint64(0); done < n; done++ {
					b := uint64(r.next()) % n
					if m.isSet(b) != ref[b] {
						t.Fatalf("pass %d: block %d set %v, want %v", pass, b, m.isSet(b), ref[b])
					}
					if ref[b] {
						got, ok := m.nextFree(b)
						w, wok := want(b)
						if got != w || ok != wok {
							t.Fatalf("pass %d: next free after %d = %d,%v, want %d,%v", pass, b, got, ok, w, wok)
						}
						b = got
					}
					m.setNr(b, 1)
					ref[b] = true
				}
				for b := range n {
					if _, ok := m.nextFree(b); ok {
						t.Fatalf("pass %d: a full map has a free block after %d", pass, b)
					}
				}
				m.reset()
				clear(ref)
			}
		})
	}
}

// TestBlockMapSetNr pins fio's axmap_set_nr: a run of blocks marked up
// to the first one already done, across words, and past the last block
// to the end of its word, which then counts as full, as in fio.
func TestBlockMapSetNr(t *testing.T) {
	m := newBlockMap(100)
	for _, tc := range []struct{ b, nr, want uint64 }{
		{10, 5, 5},   // 10..14
		{8, 5, 2},    // 8 and 9: 10 is done
		{12, 3, 0},   // done already
		{60, 10, 10}, // 60..63 and 64..69, across a word
		{96, 40, 32}, // 96..99 and on past the map's 100 blocks to the word's end
		{101, 1, 0},  // fio's __axmap_set sets nothing past block 100
		{100, 1, 0},  // done by the run that went past the end
		{70, 26, 26}, // 70..95: the last word is full
	} {
		if got := m.setNr(tc.b, tc.nr); got != tc.want {
			t.Errorf("setNr(%d, %d) = %d, want %d", tc.b, tc.nr, got, tc.want)
		}
	}
	if !m.isSet(100) || !m.isSet(69) || m.isSet(7) || m.isSet(15) {
		t.Error("isSet disagrees with the blocks marked")
	}
	if m.levels[1][0]&2 == 0 {
		t.Error("the last word is full, its unused bits included, but not marked so a level up")
	}
	if b, ok := m.nextFree(99); !ok || b != 0 {
		t.Errorf("next free after 99 = %d, %v; want 0 (going round)", b, ok)
	}
	if b, ok := m.nextFree(8); !ok || b != 15 {
		t.Errorf("next free after 8 = %d, %v; want 15", b, ok)
	}
}

// TestBlockMapLarge: a map big enough to live outside the Go heap works
// the same, and goes away with the collector.
func TestBlockMapLarge(t *testing.T) {
	const n = 1<<23 + 5 // 2^17 words and more
	m := newBlockMap(n)
	for b := uint64(0); b < n-1; b++ {
		m.setNr(b, 1)
	}
	if b, ok := m.nextFree(7); !ok || b != n-1 {
		t.Errorf("next free after 7 = %d, %v; want %d", b, ok, uint64(n-1))
	}
	m.setNr(n-1, 1)
	if _, ok := m.nextFree(0); ok {
		t.Error("a full map has a free block")
	}
	m.reset()
	if b, ok := m.nextFree(n - 1); !ok || b != 0 {
		t.Errorf("after a reset, next free after the last = %d, %v; want 0", b, ok)
	}
	m = nil
	runtime.GC()
}

// TestLFSRWalksEveryBlockOnce: an LFSR over n returns each of 0..n-1
// exactly once, then stops, and after a reset walks them all again.
func TestLFSRWalksEveryBlockOnce(t *testing.T) {
	for _, n := range []uint64{1, 2, 7, 8, 9, 255, 256, 1000, 1 << 16} {
		l, ok := lfsrInit(n, 0x89)
		if !ok {
			t.Fatalf("n=%d: no LFSR", n)
		}
		for pass := range 2 {
			seen := make([]bool, n)
			for range n {
				v, ok := l.next()
				if !ok || v >= n || seen[v] {
					t.Fatalf("n=%d pass %d: %d, %v (seen %v)", n, pass, v, ok, v < n && seen[v])
				}
				seen[v] = true
			}
			if v, ok := l.next(); ok {
				t.Fatalf("n=%d pass %d: a value (%d) beyond the n", n, pass, v)
			}
			l.reset(0x89)
		}
	}
	if _, ok := lfsrInit(100, 0x7f); ok {
		t.Error("a seed whose low 7 bits are all ones (the XNOR LFSR's dead state) was taken")
	}
}

func TestTausBetween(t *testing.T) {
	r := newTaus88(1)
	var seen [101]int
	for range 100000 {
		v := r.between(1, 100)
		if v < 1 || v > 100 {
			t.Fatalf("between(1, 100) = %d", v)
		}
		seen[v]++
	}
	for v := 1; v <= 100; v++ {
		if seen[v] < 800 || seen[v] > 1200 {
			t.Errorf("%d drawn %d times in 100000, want about 1000", v, seen[v])
		}
	}
}

// drawBlocks is the first n blocks job j (at index) picks over blocks.
func drawBlocks(j *Job, blocks uint64, index, n int) []uint64 {
	next := blockGen(j, blocks, index)
	out := make([]uint64, n)
	for i := range out {
		out[i] = next()
	}
	return out
}

// TestPickerPasses: with the random map (tausworthe) or an LFSR each pass
// does every block once; a size-based repeatable job repeats its first
// pass, a time-based one or one with randrepeat=0 does not.
func TestPickerPasses(t *testing.T) {
	const blocks = 300
	for _, tc := range []struct {
		name   string
		set    func(j *Job)
		repeat bool
	}{
		{"tausworthe", func(j *Job) {}, true},
		{"tausworthe64", func(j *Job) { j.RandomGenerator = genTausworthe64 }, true},
		{"lfsr", func(j *Job) { j.RandomGenerator = genLFSR }, true},
		{"time_based", func(j *Job) { j.TimeBased = true }, false},
		{"randrepeat=0", func(j *Job) { j.RandRepeat = false }, false},
		{"randseed", func(j *Job) { j.RandSeedSet = true }, false}, // fio: randseed overrides randrepeat
		// fio restarts an LFSR from its seed, time-based or not.
		{"lfsr time_based", func(j *Job) { j.RandomGenerator, j.TimeBased = genLFSR, true }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJob()
			j.Name, j.RW = "p", "randread"
			tc.set(&j)
			got := drawBlocks(&j, blocks, 0, 3*blocks)
			for pass := range 3 {
				b := slices.Clone(got[pass*blocks : (pass+1)*blocks])
				slices.Sort(b)
				if b = slices.Compact(b); len(b) != blocks {
					t.Fatalf("pass %d did %d distinct blocks of %d", pass, len(b), blocks)
				}
			}
			if same := slices.Equal(got[:blocks], got[blocks:2*blocks]); same != tc.repeat {
				t.Errorf("second pass repeats the first: %v, want %v", same, tc.repeat)
			}
		})
	}
}

// TestSeeds checks randrepeat, randseed and allrandrepeat as fio 3.33
// applies them (setup_random_seeds, td_fill_rand_seeds).
func TestSeeds(t *testing.T) {
	job := func(set func(j *Job)) *Job {
		j := NewJob()
		j.RW = "randrw"
		set(&j)
		return &j
	}
	def := job(func(*Job) {})
	seed7 := job(func(j *Job) { j.RandSeed, j.RandSeedSet = 7, true })
	norepeat := job(func(j *Job) { j.RandRepeat = false })
	norepeat7 := job(func(j *Job) { j.RandRepeat, j.RandSeed, j.RandSeedSet = false, 7, true })
	all := job(func(j *Job) { j.RandRepeat, j.AllRandRepeat = false, true })

	if def.seeds(0) != def.seeds(0) {
		t.Error("randrepeat: two runs, different seeds")
	}
	if def.seeds(0) == def.seeds(1) {
		t.Error("two jobs of a run share their seeds")
	}
	if def.seeds(0)[seedBlock] != fioRandSeed {
		t.Errorf("randrepeat: the offsets' seed is %#x, fio's is FIO_RANDSEED", def.seeds(0)[seedBlock])
	}
	// fio seeds before randseed overrides randrepeat: the offsets stay,
	// every other source moves.
	if a, b := def.seeds(0), seed7.seeds(0); a[seedBlock] != b[seedBlock] || a[seedMix] == b[seedMix] {
		t.Error("randseed with randrepeat: want the offsets' seed kept and the mix's changed")
	}
	if a, b := norepeat.seeds(0), norepeat.seeds(0); a == b {
		t.Error("randrepeat=0: two runs, the same seeds")
	}
	if a, b := norepeat7.seeds(0), norepeat7.seeds(0); a != b || a[seedBlock] == fioRandSeed {
		t.Error("randrepeat=0 with randseed: want the seeds repeatable and the offsets' seed from randseed")
	}
	if a, b := all.seeds(0), all.seeds(0); a != b || a[seedBuf] != fioRandSeed+seedBuf {
		t.Errorf("allrandrepeat with randrepeat=0: want every seed fixed (FIO_RANDSEED + slot), got %#x", a)
	}
}

// BenchmarkPicker is the cost of choosing one random I/O: fio's
// generators, the random map, and each distribution, through the job's
// generator.
func BenchmarkPicker(b *testing.B) {
	const blocks = 1 << 24 // 64 GiB of 4 KiB blocks
	for _, tc := range []struct {
		name string
		set  func(j *Job)
	}{
		{"tausworthe+map", func(j *Job) {}},
		{"tausworthe/norandommap", func(j *Job) { j.NoRandomMap = true }},
		{"tausworthe64+map", func(j *Job) { j.RandomGenerator = genTausworthe64 }},
		{"lfsr", func(j *Job) { j.RandomGenerator = genLFSR }},
		{"zipf:1.2", func(j *Job) { j.RandomDistribution = Distribution{Kind: DistZipf, Value: 1.2} }},
		{"pareto:0.2", func(j *Job) { j.RandomDistribution = Distribution{Kind: DistPareto, Value: 0.2} }},
		{"normal:10", func(j *Job) { j.RandomDistribution = Distribution{Kind: DistNormal, Value: 10} }},
		{"zoned", func(j *Job) {
			j.RandomDistribution, _ = ParseDistribution("zoned:60/10:30/20:8/30:2/40")
		}},
		{"percentage_random=50", func(j *Job) { j.PercentageRandom = []int{50, 50} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			j := NewJob()
			j.Name, j.RW, j.TimeBased = "p", "randread", true
			tc.set(&j)
			next := blockGen(&j, blocks, 0)
			var sum uint64
			b.ReportAllocs()
			for b.Loop() {
				sum += next()
			}
		})
	}
}
