package bench

import (
	"fmt"
	"math"

	"iolab/bench/randgen"
	"iolab/bench/units"
)

// Random generators a job can pick offsets with (fio's random_generator).
const (
	genTausworthe   = "tausworthe"
	genTausworthe64 = "tausworthe64"
	genLFSR         = "lfsr"
)

// RandomGenerators are the values random_generator takes.
var RandomGenerators = []string{genTausworthe, genLFSR, genTausworthe64}

// picker chooses the block of each random I/O of a job as fio's
// get_next_block does for a random job: percentage_random decides random
// or sequential (should_do_random, random), the distribution picks the
// block (get_next_rand_offset, draw) from the generator, and the random
// map sends a taken block to the next free one. When the map is full (or
// the LFSR has walked every block) draw says so: the generator (ioGen)
// ends the file's pass, or starts it over for a time-based job, as fio
// does; a repeatable job re-seeds at each new pass (reseed), so every pass
// over the region repeats the first.
type picker struct {
	dist  *randgen.Distribution
	gen   string
	files []pickFile
	align [3]uint64 // each direction's blockalign (fio's ba): zoned_abs's unit

	t32     randgen.Taus88  // tausworthe's offsets (fio's td->random_state)
	t64     randgen.Taus258 // tausworthe64's
	zone    randgen.Taus88  // zoned: which percent of the I/Os (td->zone_state)
	seqRand [3]randgen.Taus88
	perc    [3]uint32
	zones   *[100]randgen.ZoneSpan

	seeds randSeeds
	// to64 is fio's switch to tausworthe64 for a file of more than 2^32
	// blocks when no generator is set: fio makes it after seeding, so the
	// new generator starts only when a repeatable job re-seeds.
	to64 bool
}

type pickFile struct {
	bmap *randgen.BlockMap
	lfsr randgen.LFSR
	skew randgen.Skewed
}

// newPicker sets up the picker of job j, at index among the run's jobs
// with seeds, over files whose regions are sizes bytes long, named names
// (fio seeds its skewed distributions with the file's name); useMap: the
// job may keep a random map (no norandommap, no blockalign). The map and
// the LFSR count blocks of fio's rw_min_bs (init_random_map), the
// skewed distributions ranges of the smaller of the two directions'
// smallest sizes, the last one partial (__init_rand_distribution).
func newPicker(j *Job, sizes []uint64, names []string, index int, seeds randSeeds, useMap bool) *picker {
	unit := uint64(j.rwMinBS())
	blocks := make([]uint64, len(sizes))
	for i, s := range sizes {
		blocks[i] = s / unit
	}
	p := &picker{dist: &j.RandomDistribution, gen: j.randomGenerator(blocks),
		align: [3]uint64{uint64(j.Align(Read)), uint64(j.Align(Write)), uint64(j.Align(Trim))},
		seeds: seeds, files: make([]pickFile, len(blocks))}
	if p.gen != j.RandomGenerator && p.gen == genTausworthe64 {
		p.gen, p.to64 = genTausworthe, true
	}
	for op := range p.perc {
		p.perc[op] = j.percentRandom(ioOp(op))
	}
	p.seed()
	// fio keeps a random map only for uniform offsets from the
	// Tausworthe generators; any other distribution sets norandommap.
	useMap = useMap && p.dist.Kind == randgen.DistRandom && p.gen != genLFSR
	if k := p.dist.Kind; k == randgen.DistZoned || k == randgen.DistZonedAbs {
		p.zones = randgen.ZoneIndex(p.dist.Zones)
	}
	skewSeed := uint32(p.seeds[seedBlock])
	for i, n := range blocks {
		pf := &p.files[i]
		switch {
		case p.dist.Kind == randgen.DistZipf || p.dist.Kind == randgen.DistPareto || p.dist.Kind == randgen.DistNormal:
			seed := skewSeed
			if j.repeatable() {
				name := ""
				if i < len(names) {
					name = names[i]
				}
				seed = randgen.JHash(name, 0) * uint32(index+1)
			}
			pf.skew = randgen.NewSkewed(p.dist, (sizes[i]+unit-1)/unit, seed)
		case p.gen == genLFSR:
			var ok bool
			if pf.lfsr, ok = randgen.NewLFSR(n, p.seeds[seedBlock]); !ok {
				// The seed's low bits are the one state an XNOR LFSR never
				// leaves: fio refuses the job ("failed initializing
				// LFSR"); iolab nudges the seed.
				p.seeds[seedBlock] ^= 1
				pf.lfsr, _ = randgen.NewLFSR(n, p.seeds[seedBlock])
			}
		case useMap:
			pf.bmap = randgen.NewBlockMap(n)
		}
	}
	return p
}

// randomGenerator is the generator the job's offsets come from: the one
// set, else tausworthe, or tausworthe64 when a file has more blocks than
// 32 bits can number (fio's check_rand_gen_limits).
func (j *Job) randomGenerator(blocks []uint64) string {
	if j.RandomGenerator != "" {
		return j.RandomGenerator
	}
	for _, n := range blocks {
		if n > math.MaxUint32 {
			return genTausworthe64
		}
	}
	return genTausworthe
}

// seed (re)starts the generators from the job's seeds
// (td_fill_rand_seeds).
func (p *picker) seed() {
	p.t32 = randgen.NewTaus88(p.seeds[seedBlock])
	p.t64 = randgen.NewTaus258(p.seeds[seedBlock])
	p.zone = randgen.NewTaus88(p.seeds[seedZone])
	for op := range p.seqRand {
		p.seqRand[op] = randgen.NewTaus88(p.seeds[seedSeqRandRead])
	}
}

// reseed starts the generators over for another pass of a repeatable job
// (fio's clear_io_state), switching to tausworthe64 if fio would have.
func (p *picker) reseed() {
	if p.to64 {
		p.gen = genTausworthe64
	}
	p.seed()
}

// random reports whether an I/O in direction op that may be random is
// (fio's should_do_random, percentage_random).
func (p *picker) random(op ioOp) bool {
	return p.perc[op] >= 100 || p.seqRand[op].Between(1, 100) <= p.perc[op]
}

// restart forgets the blocks of file done (fio's fio_file_reset): the
// random map empties, the LFSR starts its walk again.
func (p *picker) restart(file int) {
	f := &p.files[file]
	if f.bmap != nil {
		f.bmap.Reset()
	}
	f.lfsr.Reset(p.seeds[seedBlock])
}

// mapped reports whether file keeps a random map.
func (p *picker) mapped(file int) bool { return p != nil && p.files[file].bmap != nil }

// draw picks a random block of file for direction d below n, its last
// block (fio's get_next_rand_offset): a number of d's blockalign units,
// the I/O's offset over it. ok is false when every block is done (the
// map is full, or the LFSR has walked them all).
func (p *picker) draw(file, d int, n uint64) (uint64, bool) {
	f := &p.files[file]
	switch p.dist.Kind {
	case randgen.DistZipf, randgen.DistPareto, randgen.DistNormal:
		return f.skew.Next(), true
	case randgen.DistZoned, randgen.DistZonedAbs:
		return p.zoned(f, d, n)
	}
	return p.uniform(f, n)
}

// zoned picks the zone for this I/O, then a block in it (fio's
// __get_next_rand_offset_zoned and _zoned_abs): zoned's percentages are
// of d's last block n, zoned_abs's sizes in d's blockalign units.
func (p *picker) zoned(f *pickFile, d int, n uint64) (uint64, bool) {
	z := &p.zones[p.zone.Between(1, 100)-1]
	start, span := z.Lo*n/100, n*(z.Hi-z.Lo)/100
	if p.dist.Kind == randgen.DistZonedAbs {
		start, span = z.Lo/p.align[d], z.Hi/p.align[d]-z.Lo/p.align[d]
	}
	b, ok := p.uniform(f, span)
	return start + b, ok
}

// uniform picks a block below n (fio's __get_next_rand_offset): the
// generator's next number scaled to n, then the next free block if the
// random map has it done. As in fio, b is looked up in the map as it is,
// though the map counts blocks of the smallest block size and b counts
// the direction's own: where the directions' sizes differ, a direction
// of larger blocks checks and skips to the map's bits as if they were
// its blocks (fio 3.33 io_u.c:121 and :127), and its I/O goes wherever
// that lands — past the region's end, which ends the file (fill). A bug
// of fio's, copied because it is what fio users see in their numbers:
// --rw=randrw --bs=64k,1m --size=8m does 5 reads and 3 writes in fio, and
// ends after 3.4 MB of 8.
func (p *picker) uniform(f *pickFile, n uint64) (uint64, bool) {
	var b uint64
	switch p.gen {
	case genLFSR:
		return f.lfsr.Next()
	case genTausworthe64:
		b = uint64(float64(n) * (float64(p.t64.Next()) * 0x1p-64))
	default:
		b = uint64(float64(n) * (float64(p.t32.Next()) * 0x1p-32))
	}
	if b >= n && n > 0 {
		b = n - 1 // a 64-bit draw can round up to 1.0
	}
	if f.bmap == nil || !f.bmap.IsSet(b) {
		return b, true
	}
	return f.bmap.NextFree(b)
}

// checkPattern checks j's access pattern against its region of region
// bytes before the job starts, and returns the region: zoned_abs zones
// must fit in it (fio ends such a job after a few I/Os, saying "zoned_abs
// sizes exceed file size").
func (j *Job) checkPattern(region int64) (int64, error) {
	if !j.Random() {
		return region, nil
	}
	blocks := uint64(region / j.BS)
	d := &j.RandomDistribution
	if d.Kind == randgen.DistZonedAbs {
		var end int64
		for _, z := range d.Zones {
			end += z.Size
		}
		if uint64(end/j.BS) > blocks {
			return 0, fmt.Errorf("job %s: random_distribution=%s: the zones end at %s but the job's region is %s (fio: zoned_abs sizes exceed file size)",
				j.Name, d, units.FormatSize(end), units.FormatSize(region))
		}
	}
	return region, nil
}
