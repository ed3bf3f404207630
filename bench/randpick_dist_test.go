package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/randgen"
)

// genzipf runs Debian's fio-genzipf (fio's t/genzipf.c) for dist over
// gib GiB in blocks of bs and returns its hit counts, hottest first: fio's
// own prediction of how its zipf and pareto distributions spread I/O.
func genzipf(t *testing.T, dist string, value float64, gib, bs int) []int {
	t.Helper()
	path, err := exec.LookPath("fio-genzipf")
	if err != nil {
		t.Fatal("fio-genzipf is not installed (Debian's fio package has it)")
	}
	out, err := exec.Command(path, "-t", dist, "-i", strconv.FormatFloat(value, 'g', -1, 64),
		"-g", strconv.Itoa(gib), "-b", strconv.Itoa(bs), "-c").Output()
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		_, c, ok := strings.Cut(sc.Text(), ", ")
		if n, err := strconv.Atoi(c); ok && err == nil {
			counts = append(counts, n)
		}
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	return counts
}

// hits draws n blocks from next and returns the hits per block, hottest
// first.
func hits(n uint64, next func() uint64) []int {
	per := map[uint64]int{}
	for range n {
		per[next()]++
	}
	counts := make([]int, 0, len(per))
	for _, c := range per {
		counts = append(counts, c)
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	return counts
}

// hotShare is the share of all hits that land on the hottest frac of n
// blocks.
func hotShare(counts []int, n uint64, frac float64) float64 {
	k := int(float64(n) * frac)
	total, hot := 0, 0
	for i, c := range counts {
		total += c
		if i < k {
			hot += c
		}
	}
	return float64(hot) / float64(total)
}

// TestSkewedMatchesGenzipf is the acceptance test: zipf:1.2 (and
// pareto) put the share of I/Os on the hottest blocks that fio-genzipf
// predicts for the same number of blocks. Seeded as fio-genzipf seeds
// (1), iolab's generator draws the very same blocks; seeded as a job
// (from its file's name), the hot-set shares agree within a tolerance.
func TestSkewedMatchesGenzipf(t *testing.T) {
	const gib, bs = 1, 4096
	n := uint64(gib << 30 / bs)
	for _, tc := range []struct {
		dist  string
		kind  randgen.DistKind
		value float64
	}{
		{"zipf", randgen.DistZipf, 1.2},
		{"zipf", randgen.DistZipf, 0.8},
		{"pareto", randgen.DistPareto, 0.2},
		{"pareto", randgen.DistPareto, 0.3},
	} {
		t.Run(fmt.Sprintf("%s:%g", tc.dist, tc.value), func(t *testing.T) {
			want := genzipf(t, tc.dist, tc.value, gib, bs)
			d := &randgen.Distribution{Kind: tc.kind, Value: tc.value}
			same := randgen.NewSkewed(d, n, 1)
			if got := hits(n, same.Next); !slices.Equal(got, want) {
				t.Errorf("seed 1: %d distinct blocks hit, fio-genzipf %d; hottest %v, fio-genzipf %v", len(got), len(want), got[:5], want[:5])
			}

			j := NewJob()
			j.Name, j.RW, j.BS, j.Filename, j.RandomDistribution = "z", "randread", bs, "/dev/loop7", *d
			got := hits(n, blockGen(&j, n, 0))
			for _, frac := range []float64{0.001, 0.01, 0.05, 0.10, 0.25} {
				g, w := hotShare(got, n, frac), hotShare(want, n, frac)
				if math.Abs(g-w) > 0.01+0.02*w {
					t.Errorf("hottest %g%% of %d blocks: %.2f%% of the I/Os, fio-genzipf %.2f%%", frac*100, n, g*100, w*100)
				}
			}
			if g, w := float64(len(got)), float64(len(want)); math.Abs(g-w) > 0.02*w {
				t.Errorf("%v distinct blocks hit, fio-genzipf %v", g, w)
			}
		})
	}
}

// TestZonedShares checks that each zone gets its share of the random I/Os
// and no I/O leaves its zone.
func TestZonedShares(t *testing.T) {
	const n = 10240 // 40 MiB of 4 KiB blocks: zoned_abs zones below fill it
	for _, in := range []string{"zoned:60/10:30/20:8/30:2/40", "zoned_abs:70/4m:30/36m"} {
		t.Run(in, func(t *testing.T) {
			d, err := randgen.ParseDistribution(in)
			if err != nil {
				t.Fatal(err)
			}
			j := NewJob()
			j.Name, j.RW, j.RandomDistribution = "z", "randread", d
			next := blockGen(&j, n, 0)
			per := make([]int, len(d.Zones))
			const draws = 200000
			for range draws {
				b := next()
				var lo uint64
				for i, z := range d.Zones {
					size := uint64(z.Size) * n / 100
					if d.Kind == randgen.DistZonedAbs {
						size = uint64(z.Size) / 4096
					}
					if b < lo+size {
						per[i]++
						break
					}
					lo += size
				}
			}
			for i, z := range d.Zones {
				if got := float64(per[i]) / draws * 100; math.Abs(got-float64(z.Access)) > 0.5 {
					t.Errorf("zone %d: %.2f%% of the I/Os, want %d%%", i, got, z.Access)
				}
			}
		})
	}
}

// TestPatternOptionsJSON: a job's pattern options survive the JSON that
// stores plans, and the defaults write nothing.
func TestPatternOptionsJSON(t *testing.T) {
	j := NewJob()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"random_distribution", "random_generator", "percentage_random", "allrandrepeat", "randseed_set"} {
		if strings.Contains(string(b), `"`+name+`"`) {
			t.Errorf("fio's defaults write %s: %s", name, b)
		}
	}
	j.RandomDistribution, _ = randgen.ParseDistribution("zoned_abs:60/1m:40/3m")
	j.RandomGenerator, j.PercentageRandom, j.AllRandRepeat, j.RandSeedSet = "lfsr", []int{80, 20}, true, true
	if b, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	var back Job
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.PatternOptions, j.PatternOptions) {
		t.Errorf("read back %+v, want %+v (%s)", back.PatternOptions, j.PatternOptions, b)
	}
}
