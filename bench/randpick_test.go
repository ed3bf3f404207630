package bench

import (
	"slices"
	"testing"

	"iolab/bench/randgen"
)

// blockGen draws the blocks (of j.BS) a job's generator picks over one
// file of blocks blocks, at index among the run's jobs: the picker as the
// job loop uses it. A size-based job goes on over the file pass after
// pass (loops), as fio's does with loops or io_size.
func blockGen(j *Job, blocks uint64, index int) func() uint64 {
	if !j.TimeBased && j.Loops < 1<<20 {
		j.Loops = 1 << 20
	}
	size := int64(blocks) * j.BS
	name := j.Filename
	if name == "" {
		name = "/dev/nvme0n1"
	}
	g := newIOGen(j, jobLayout{Files: []fileRegion{{Path: name, IOSize: size, RealSize: size}}, Size: size}, index)
	return func() uint64 {
		_, _, off, _, ok := g.next()
		if !ok {
			panic("the generator ended")
		}
		return uint64(off / j.BS)
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
		{"zipf:1.2", func(j *Job) { j.RandomDistribution = randgen.Distribution{Kind: randgen.DistZipf, Value: 1.2} }},
		{"pareto:0.2", func(j *Job) { j.RandomDistribution = randgen.Distribution{Kind: randgen.DistPareto, Value: 0.2} }},
		{"normal:10", func(j *Job) { j.RandomDistribution = randgen.Distribution{Kind: randgen.DistNormal, Value: 10} }},
		{"zoned", func(j *Job) {
			j.RandomDistribution, _ = randgen.ParseDistribution("zoned:60/10:30/20:8/30:2/40")
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
