package bench

import (
	"fmt"
	"math"

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

// picker chooses the block of each random I/O of a job, and whether an
// I/O is random at all, as fio's get_next_block does for a random job:
// percentage_random decides random or sequential (should_do_random), the
// distribution picks the block (get_next_rand_offset) from the
// generator, and the random map sends a taken block to the next free one.
// When the map is full (or the LFSR has walked every block) the file
// starts over with an empty map; a size-based job that is repeatable also
// re-seeds its generators then, as fio does when it begins another loop
// over the job's files, so every pass over the region repeats the first.
type picker struct {
	dist  *Distribution
	gen   string
	files []pickFile
	bs    uint64

	t32     taus88  // tausworthe's offsets (fio's td->random_state)
	t64     taus258 // tausworthe64's
	zone    taus88  // zoned: which percent of the I/Os (td->zone_state)
	seqRand [2]taus88
	perc    [2]uint32
	zones   *[100]zoneSpan

	seeds     randSeeds
	reseed    bool // at the end of a pass
	timeBased bool
	// to64 is fio's switch to tausworthe64 for a file of more than 2^32
	// blocks when no generator is set: fio makes it after seeding, so the
	// new generator starts only when a repeatable job re-seeds.
	to64 bool
}

type pickFile struct {
	blocks uint64
	bmap   *blockMap
	lfsr   lfsr
	skew   skewed
}

// newPicker sets up the picker of job j, at index among the run's jobs,
// over files named names (fio seeds its skewed distributions with the
// file's name).
func newPicker(j *Job, files []genFile, names []string, index int) *picker {
	p := &picker{dist: &j.RandomDistribution, gen: j.randomGenerator(files), bs: uint64(j.BS),
		seeds: j.seeds(index), reseed: j.repeatable() && !j.TimeBased, timeBased: j.TimeBased, files: make([]pickFile, len(files))}
	if p.gen != j.RandomGenerator && p.gen == genTausworthe64 {
		p.gen, p.to64 = genTausworthe, true
	}
	for op := range p.perc {
		p.perc[op] = j.percentRandom(ioOp(op))
	}
	p.seed()
	// fio keeps a random map only for uniform offsets from the
	// Tausworthe generators; any other distribution sets norandommap.
	useMap := p.dist.Kind == DistRandom && p.gen != genLFSR && !j.NoRandomMap
	if k := p.dist.Kind; k == DistZoned || k == DistZonedAbs {
		p.zones = zoneIndex(p.dist.Zones)
	}
	skewSeed := uint32(p.seeds[seedBlock])
	for i, f := range files {
		pf := &p.files[i]
		pf.blocks = f.blocks
		switch {
		case p.dist.Kind == DistZipf || p.dist.Kind == DistPareto || p.dist.Kind == DistNormal:
			seed := skewSeed
			if j.repeatable() {
				name := ""
				if i < len(names) {
					name = names[i]
				}
				seed = jhash(name, 0) * uint32(index+1)
			}
			pf.skew = newSkewed(p.dist, f.blocks, seed)
		case p.gen == genLFSR:
			var ok bool
			if pf.lfsr, ok = lfsrInit(f.blocks, p.seeds[seedBlock]); !ok {
				// The seed's low bits are the one state an XNOR LFSR never
				// leaves: fio refuses the job ("failed initializing
				// LFSR"); iolab nudges the seed.
				p.seeds[seedBlock] ^= 1
				pf.lfsr, _ = lfsrInit(f.blocks, p.seeds[seedBlock])
			}
		case useMap:
			pf.bmap = newBlockMap(f.blocks)
		}
	}
	return p
}

// randomGenerator is the generator the job's offsets come from: the one
// set, else tausworthe, or tausworthe64 when a file has more blocks than
// 32 bits can number (fio's check_rand_gen_limits).
func (j *Job) randomGenerator(files []genFile) string {
	if j.RandomGenerator != "" {
		return j.RandomGenerator
	}
	for _, f := range files {
		if f.blocks > math.MaxUint32 {
			return genTausworthe64
		}
	}
	return genTausworthe
}

// seed (re)starts the generators from the job's seeds
// (td_fill_rand_seeds).
func (p *picker) seed() {
	p.t32 = newTaus88(p.seeds[seedBlock])
	p.t64 = newTaus258(p.seeds[seedBlock])
	p.zone = newTaus88(p.seeds[seedZone])
	for op := range p.seqRand {
		p.seqRand[op] = newTaus88(p.seeds[seedSeqRandRead])
	}
}

// next returns the block of the next I/O of direction op on file, where
// a sequential I/O would go to block seq (which may be the region's end):
// percentage_random decides whether the I/O is random (fio's
// should_do_random), and a sequential I/O that runs off the end of the
// region takes a random block instead, unless a time-based job on one
// file goes round to its start (get_next_seq_offset). Like fio, such a
// block is not marked in the random map.
func (p *picker) next(file int, op ioOp, seq uint64) uint64 {
	if p.perc[op] >= 100 || p.seqRand[op].between(1, 100) <= p.perc[op] {
		return p.block(file, true)
	}
	switch {
	case seq < p.files[file].blocks:
		return seq
	case p.timeBased && len(p.files) == 1:
		return 0
	}
	return p.block(file, false)
}

// newPass starts another pass over the file, once every block is done.
// fio ends the loop over its files there (the draw that found no free
// block is spent), and a size-based job begins another, re-seeded when it
// is repeatable; a time-based one goes on with the same generators.
func (p *picker) newPass(f *pickFile) {
	if p.reseed {
		if p.to64 {
			p.gen = genTausworthe64
		}
		p.seed()
	}
	f.restart(p.seeds[seedBlock])
}

// restart forgets the blocks done: the random map empties, the LFSR
// starts its walk again.
func (f *pickFile) restart(seed uint64) {
	if f.bmap != nil {
		f.bmap.reset()
	}
	f.lfsr.reset(seed)
}

// block picks a random block of file; mark records it in the random map.
func (p *picker) block(file int, mark bool) uint64 {
	f := &p.files[file]
	switch p.dist.Kind {
	case DistZipf, DistPareto, DistNormal:
		return f.skew.next()
	case DistZoned, DistZonedAbs:
		return p.zoned(f)
	}
	return p.uniform(f, f.blocks, mark)
}

// zoned picks the zone for this I/O, then a block in it (fio's
// __get_next_rand_offset_zoned and _zoned_abs).
func (p *picker) zoned(f *pickFile) uint64 {
	z := &p.zones[p.zone.between(1, 100)-1]
	start, n := z.lo*f.blocks/100, f.blocks*(z.hi-z.lo)/100
	if p.dist.Kind == DistZonedAbs {
		start, n = z.lo/p.bs, z.hi/p.bs-z.lo/p.bs
	}
	return start + p.uniform(f, n, true)
}

// uniform picks a block below n (fio's __get_next_rand_offset): the
// generator's next number scaled to n, then the next free block if the
// random map has it done. When every block is done (or the LFSR has
// walked them all) the file starts over.
func (p *picker) uniform(f *pickFile, n uint64, mark bool) uint64 {
	for {
		var b uint64
		switch p.gen {
		case genLFSR:
			var ok bool
			if b, ok = f.lfsr.next(); !ok {
				p.newPass(f)
				continue
			}
			return b
		case genTausworthe64:
			b = uint64(float64(n) * (float64(p.t64.next()) * 0x1p-64))
		default:
			b = uint64(float64(n) * (float64(p.t32.next()) * 0x1p-32))
		}
		if b >= n && n > 0 {
			b = n - 1 // a 64-bit draw can round up to 1.0
		}
		if f.bmap == nil {
			return b
		}
		if f.bmap.isSet(b) {
			var ok bool
			if b, ok = f.bmap.nextFree(b); !ok {
				p.newPass(f)
				continue
			}
		}
		if mark {
			f.bmap.set(b)
		}
		return b
	}
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
	if d.Kind == DistZonedAbs {
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
