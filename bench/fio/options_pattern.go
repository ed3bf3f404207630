package fio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/randgen"
)

// patternOptions are fio's options for the where the I/Os go: random distributions, generators, the share of random I/O.
var patternOptions = []bench.OptionSpec{
	{Name: "random_distribution", Example: "zipf:1.2", Unit: "model", Default: "random",
		Help: "how random offsets spread: random (uniform), zipf:θ, pareto:h, normal:σ% (each with an optional :center in [0,1]), zoned:60/10:40/90 (access%/size%), zoned_abs:60/1g:40/9g",
		Set: func(j *bench.Job, v string) error {
			d, err := randgen.ParseDistribution(v)
			if err == nil {
				j.RandomDistribution = d
			}
			return err
		},
		Get: func(j *bench.Job) string { return j.RandomDistribution.String() }},
	{Name: "random_generator", Example: "lfsr", Unit: "generator", Default: "tausworthe",
		Help: "what picks random offsets: tausworthe (with a map so each block is done once per pass), tausworthe64, or lfsr (each block once, no map)",
		Set: func(j *bench.Job, v string) error {
			if !slices.Contains(bench.RandomGenerators, v) {
				return fmt.Errorf("%q is not one of %s", v, strings.Join(bench.RandomGenerators, ", "))
			}
			j.RandomGenerator = v
			return nil
		},
		Get: func(j *bench.Job) string {
			if j.RandomGenerator == "" {
				return "tausworthe"
			}
			return j.RandomGenerator
		}},
	{Name: "percentage_random", Example: "80", Unit: "%", Default: "100",
		Help: "share of a random job's I/Os that are random, the rest sequential; read[,write[,trim]]",
		Set:  setPercentageRandom,
		Get: func(j *bench.Job) string {
			if j.PercentageRandom == nil {
				return "100"
			}
			return strconv.Itoa(j.PercentageRandom[0]) + "," + strconv.Itoa(j.PercentageRandom[1])
		}},
	{Name: "allrandrepeat", Example: "1", Unit: "bool", Default: "0",
		Help: "seed every random source (offsets, read/write mix, …) with fixed seeds, even with randrepeat=0",
		Set:  bench.BoolField(func(j *bench.Job) *bool { return &j.AllRandRepeat }),
		Get:  bench.GetBool(func(j *bench.Job) *bool { return &j.AllRandRepeat })},
}

// setPercentageRandom reads fio's percentage_random=int[,int][,int]: for
// reads, writes and trims, a value left out taking the one before it.
// iolab does not trim, so the third is checked and dropped.
func setPercentageRandom(j *bench.Job, v string) error {
	parts := strings.Split(v, ",")
	if len(parts) > 3 {
		return fmt.Errorf("%q: at most three values, for reads, writes and trims", v)
	}
	var p []int
	for _, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > 100 {
			return fmt.Errorf("%q: %q is not a percentage from 0 to 100 (e.g. 80, or 80,20 for reads and writes)", v, s)
		}
		p = append(p, n)
	}
	if len(p) == 1 {
		p = append(p, p[0])
	}
	j.PercentageRandom = p[:2:2]
	return nil
}

// checkPattern refuses what fio 3.33 would do wrong with the pattern
// options together: its LFSR ignores a zone's bounds and walks the whole
// region from the zone's start, past the end of the file.
func checkPattern(j *bench.Job) error {
	if k := j.RandomDistribution.Kind; j.RandomGenerator == "lfsr" && (k == randgen.DistZoned || k == randgen.DistZonedAbs) {
		return fmt.Errorf("random_generator=lfsr with random_distribution=%s: fio 3.33's LFSR ignores the zones' bounds (it walks the whole region from a zone's start and runs off the end); use tausworthe", k)
	}
	return nil
}
