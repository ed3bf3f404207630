package bench

import (
	"slices"

	"iolab/bench/randgen"
)

// PatternOptions are the job options for where the I/Os go beyond rw and norandommap: random distributions and generators (fio's access-pattern options).
type PatternOptions struct {
	// RandomDistribution is fio's random_distribution: how random offsets
	// spread over the region (the zero value is fio's default, uniform).
	RandomDistribution randgen.Distribution `json:"random_distribution,omitzero"`
	// RandomGenerator is fio's random_generator: "tausworthe",
	// "tausworthe64" or "lfsr"; "" when not set, which is tausworthe
	// unless the region has more than 2^32 blocks (then tausworthe64, as
	// fio switches).
	RandomGenerator string `json:"random_generator,omitempty"`
	// PercentageRandom is fio's percentage_random for reads and writes:
	// the share of a random job's I/Os that are random, the others
	// sequential from where that direction's last I/O ended. nil is fio's
	// default, 100 for both.
	PercentageRandom []int `json:"percentage_random,omitempty"`
	// AllRandRepeat is fio's allrandrepeat: every random source seeded
	// from fixed seeds, even with randrepeat=0.
	AllRandRepeat bool `json:"allrandrepeat,omitempty"`
	// RandSeedSet records that randseed was given: fio then seeds the
	// offsets from it instead of from randrepeat's fixed seed.
	RandSeedSet bool `json:"randseed_set,omitempty"`
}

// clone returns a copy of o that shares no slices with it.
func (o PatternOptions) clone() PatternOptions {
	o.RandomDistribution.Zones = slices.Clone(o.RandomDistribution.Zones)
	o.PercentageRandom = slices.Clone(o.PercentageRandom)
	return o
}

// percentRandom is percentage_random for a direction.
func (o *PatternOptions) percentRandom(op ioOp) uint32 {
	if len(o.PercentageRandom) <= int(op) {
		return 100
	}
	return uint32(o.PercentageRandom[op])
}
