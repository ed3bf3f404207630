package bench

import (
	"crypto/rand"
	"encoding/binary"
)

// Seed slots: fio seeds each of a job's random sources from its own slot
// of td->rand_seeds (fio.h, FIO_RAND_*_OFF). Every source of randomness in
// a job takes its seed from here, so that randrepeat, randseed and
// allrandrepeat act on it as they do in fio.
const (
	seedBS               = iota // block sizes of reads (bsrange, bssplit)
	seedBS1                     // … of writes
	seedBS2                     // … of trims
	seedVerify                  // verify
	seedMix                     // the read/write mix
	seedFile                    // the next file (file_service_type=random)
	seedBlock                   // the offsets of random I/O
	seedFileSize                // file sizes (filesize ranges)
	seedTrim                    // trim_percentage
	seedBuf                     // buffer contents
	seedSeqRandRead             // percentage_random (fio seeds all three directions from this one)
	seedSeqRandWrite            //
	seedSeqRandTrim             //
	seedStartDelay              // startdelay ranges
	seedDedupe                  // dedupe_percentage
	seedPoisson                 // rate_process=poisson, reads
	seedZone                    // the zone of zoned distributions
	seedPoisson2                // rate_process=poisson, writes
	seedPoisson3                // rate_process=poisson, trims
	seedPrioCmds                // cmdprio_percentage
	seedDedupeWorkingSet        // dedupe_working_set_percentage
	numSeeds
)

// fioRandSeed is fio's FIO_RANDSEED (init.c).
const fioRandSeed = 0xb1899bed

// randSeeds are the seeds of a job's random sources, one per slot.
type randSeeds [numSeeds]uint64

// repeatable reports whether the job re-seeds its offsets each time it
// goes over its region again, and seeds its skewed distributions from its
// file's name: fio's rand_repeatable after fixup_options, which clears it
// when randseed is given. fio seeds the job before that fix-up, so the
// seeds themselves (seeds) follow randrepeat as written.
func (j *Job) repeatable() bool { return j.RandRepeat && !j.RandSeedSet }

// seeds returns the seeds of the job at index among the run's jobs
// (numjobs clones included) as fio's setup_random_seeds and
// td_fill_rand_seeds make them: from randseed (default 0x89) and the
// thread number when the job has randrepeat or a randseed, from the
// kernel's random numbers otherwise; allrandrepeat replaces them all by
// fixed ones. With randrepeat, the offsets' seed is FIO_RANDSEED times
// the thread number whatever randseed says: fio 3.33 seeds before it
// lets randseed override randrepeat, so randseed moves the offsets only
// with randrepeat=0 (it still moves every other source).
func (j *Job) seeds(index int) randSeeds {
	var s randSeeds
	thread := uint64(index) + 1 // fio's td->thread_number
	if !j.RandRepeat && !j.RandSeedSet {
		var b [numSeeds * 8]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		for i := range s {
			s[i] = binary.LittleEndian.Uint64(b[i*8:])
		}
	} else {
		seed := j.RandSeed
		for range 4 {
			seed *= 0x9e370001
		}
		for i := range s {
			s[i] = seed*thread + uint64(i)
			seed *= 0x9e370001
		}
	}
	if j.AllRandRepeat {
		for i := range s {
			s[i] = fioRandSeed*thread + uint64(i)
		}
	}
	if j.RandRepeat && j.Random() {
		s[seedBlock] = fioRandSeed * thread
	}
	return s
}
