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
		kind  DistKind
		value float64
	}{
		{"zipf", DistZipf, 1.2},
		{"zipf", DistZipf, 0.8},
		{"pareto", DistPareto, 0.2},
		{"pareto", DistPareto, 0.3},
	} {
		t.Run(fmt.Sprintf("%s:%g", tc.dist, tc.value), func(t *testing.T) {
			want := genzipf(t, tc.dist, tc.value, gib, bs)
			d := &Distribution{Kind: tc.kind, Value: tc.value}
			same := newSkewed(d, n, 1)
			if got := hits(n, same.next); !slices.Equal(got, want) {
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

func TestParseDistribution(t *testing.T) {
	for _, tc := range []struct {
		in, want, wantErr string
	}{
		{in: "random", want: "random"},
		{in: "zipf", want: "zipf:1.1"},
		{in: "zipf:1.2", want: "zipf:1.2"},
		{in: " zipf: 1.2 ", want: "zipf:1.2"},
		{in: "zipf:0.8:0.25", want: "zipf:0.8:0.25"},
		{in: "pareto", want: "pareto:0.2"},
		{in: "pareto:0.3:1", want: "pareto:0.3:1"},
		{in: "normal", want: "normal:0"},
		{in: "normal:10:0", want: "normal:10:0"},
		{in: "zoned:60/10:30/20:8/30:2/40", want: "zoned:60/10:30/20:8/30:2/40"},
		{in: "zoned:60/10:40/200", wantErr: "more than 100"},         // fio: zone_split percentages add to more than 100%
		{in: "zoned:60/10:40", want: "zoned:60/10:40/90"},            // a size left out takes the rest
		{in: "zoned:60/0:40/10", want: "zoned:60/90:40/10"},          // as does 0
		{in: "zoned:50:30:20/40", want: "zoned:50/30:30/30:20/40"},   // shared, rounded down
		{in: "zoned:50/5:30/15:20/", want: "zoned:50/5:30/15:20/80"}, // fio's examples/rand-zones.fio: "20/" is a size left out
		{in: "zoned:100", want: "zoned:100/0"},                       // fio's quirk: one zone without a size is empty
		{in: "zoned:60/10:40/20::5/5", want: "zoned:60/10:40/20"},    // fio stops at an empty zone
		{in: "zoned_abs:60/20g:30/100g:10/500g", want: "zoned_abs:60/20g:30/100g:10/500g"},
		{in: "zoned_abs:50/1m:50", want: "zoned_abs:50/1m:50/0"},
		{in: "zoned:50/10:40/20", wantErr: "add up to 90, not 100"},                                // fio: access percentage don't add up to 100
		{in: "zoned:60/10:40/20,100", wantErr: "refuses a comma"},                                  // fio: failed parsing
		{in: "zipf:1.2,pareto:0.3", wantErr: "refuses a comma"},                                    // fio: failed parsing
		{in: "zipf:1", wantErr: "theta must differ from 1.0"},                                      // fio: zipf theta must different than 1.0
		{in: "zipf:1.2:2", wantErr: "center must be in [0, 1]"},                                    // fio: distribution center out of range
		{in: "pareto:1", wantErr: "above 0 and below 1"},                                           // fio: pareto input out of range
		{in: "normal:100", wantErr: "[0, 100)"},                                                    // fio: normal deviation out of range
		{in: "zipf:abc", wantErr: "not a number"},                                                  // fio: random postfix parsing failed
		{in: "foo", wantErr: `"foo" is not one of random, zipf, pareto, normal, zoned, zoned_abs`}, // fio: failed parsing
		{in: "zipff", wantErr: `did you mean "zipf"?`},
		{in: "zoned", wantErr: "needs its zones"},
		{in: "zoned:60k/10:40/90", wantErr: "not an access percentage"},
		{in: "random:5", wantErr: "takes no value"},
		{in: "zipf:-1", wantErr: "must not be negative"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, err := ParseDistribution(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != tc.want {
				t.Errorf("%q reads as %q, want %q", tc.in, got, tc.want)
			}
			again, err := ParseDistribution(d.String())
			if err != nil || !slices.Equal(again.Zones, d.Zones) || again.Kind != d.Kind || again.Value != d.Value {
				t.Errorf("%q does not read back: %+v, %v", d, again, err)
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
			d, err := ParseDistribution(in)
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
					if d.Kind == DistZonedAbs {
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

// TestNormalSpread checks the normal distribution's bell before fio's
// hash scatters it: the deviation widens it, and the mean sits mid-file.
func TestNormalSpread(t *testing.T) {
	const n = 100000
	spread := func(dev float64) (mean, sd float64) {
		s := newSkewed(&Distribution{Kind: DistNormal, Value: dev}, n, 1)
		var sum, sq float64
		const draws = 50000
		for range draws {
			v := float64(s.normal())
			sum += v
			sq += v * v
		}
		mean = sum / draws
		return mean, math.Sqrt(sq/draws - mean*mean)
	}
	m0, sd0 := spread(0)
	m20, sd20 := spread(20)
	if math.Abs(m0-n/2) > n/100 || math.Abs(m20-n/2) > n/100 {
		t.Errorf("means %v and %v, want about %v", m0, m20, n/2)
	}
	// Twelve uniform draws over n average to a bell of n/12 around n/2;
	// normal:20 adds a uniform spread of 20% of n (sd 0.2n/sqrt(12)).
	if want := n / 12.0; math.Abs(sd0-want) > want*0.05 {
		t.Errorf("normal:0 spreads %v, want about %v", sd0, want)
	}
	if want := math.Hypot(n/12.0, 0.2*n/math.Sqrt(12)); math.Abs(sd20-want) > want*0.05 {
		t.Errorf("normal:20 spreads %v, want about %v", sd20, want)
	}
}

func TestFastMod(t *testing.T) {
	r := newTaus88(5)
	for _, d := range []uint64{1, 2, 3, 7, 1000, 1<<31 + 11, 1<<32 - 1, 1 << 32, 1<<32 + 1, 1 << 40} {
		f := newFastMod(d)
		for _, x := range []uint32{0, 1, 2, math.MaxUint32, math.MaxUint32 - 1} {
			if got := f.rem(x); got != uint64(x)%d {
				t.Fatalf("%d mod %d = %d, want %d", x, d, got, uint64(x)%d)
			}
		}
		for range 10000 {
			x := r.next()
			if got := f.rem(x); got != uint64(x)%d {
				t.Fatalf("%d mod %d = %d, want %d", x, d, got, uint64(x)%d)
			}
		}
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
	j.RandomDistribution, _ = ParseDistribution("zoned_abs:60/1m:40/3m")
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
