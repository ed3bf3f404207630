package hist

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Expected values are fio's plat_val_to_idx and plat_idx_to_val worked out
// by hand: for v >= 128, error_bits = msb-6, index = (error_bits+1)*64 +
// ((v >> error_bits) & 63), value = 2^(error_bits+6) + (k+0.5)*2^error_bits.
func TestHistBucketIndex(t *testing.T) {
	tests := []struct {
		ns   uint64
		want int
	}{
		{0, 0},
		{1, 1},
		{64, 64},
		{127, 127},
		{128, 128}, // msb 7, error_bits 1: [128,130) is bucket 128
		{129, 128},
		{130, 129},
		{255, 191},
		{256, 192}, // msb 8, error_bits 2: [256,260) is bucket 192
		{259, 192},
		{260, 193},
		{511, 255},
		{512, 256},
		{652, 273},
		{1000, 317},
		{1 << 33, 1792},        // msb 33: group 28, the last one
		{1<<34 - 1, 1855},      // top of the last bucket
		{1 << 34, 1855},        // msb 34 would be bucket 1856: clamped
		{1 << 40, 1855},        // ~18 min
		{math.MaxUint64, 1855}, // msb 63
	}
	for _, tt := range tests {
		if got := BucketIndex(tt.ns); got != tt.want {
			t.Errorf("BucketIndex(%d) = %d, want %d", tt.ns, got, tt.want)
		}
	}
}

func TestHistBucketValue(t *testing.T) {
	tests := []struct {
		idx  int
		want uint64
	}{
		{0, 0},
		{1, 1},
		{127, 127},
		{128, 129}, // 128 + 0.5*2
		{129, 131},
		{191, 255},  // 128 + 63.5*2
		{192, 258},  // 256 + 0.5*4
		{273, 652},  // as in fio's json+ bins of the testdata
		{317, 1004}, // 512 + 61.5*8
		{1792, 1<<33 + 1<<26},
		{1855, 1<<33 + 127<<26}, // 2^33 + 63.5*2^27
	}
	for _, tt := range tests {
		if got := BucketValue(tt.idx); got != tt.want {
			t.Errorf("BucketValue(%d) = %d, want %d", tt.idx, got, tt.want)
		}
	}
}

func TestHistBucketValuePanics(t *testing.T) {
	for _, idx := range []int{-1, HistBuckets} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BucketValue(%d) did not panic", idx)
				}
			}()
			BucketValue(idx)
		}()
	}
}

func TestHistBucketRoundTrip(t *testing.T) {
	prev := uint64(0)
	for idx := range HistBuckets {
		v := BucketValue(idx)
		if got := BucketIndex(v); got != idx {
			t.Errorf("BucketIndex(BucketValue(%d) = %d) = %d", idx, v, got)
		}
		if idx > 0 && v <= prev {
			t.Errorf("BucketValue(%d) = %d, not above BucketValue(%d) = %d", idx, v, idx-1, prev)
		}
		prev = v
	}
}

// Every bucket's bounds are where BucketIndex moves to it and on from it.
func TestHistBucketBounds(t *testing.T) {
	prevHi := uint64(0)
	for idx := range HistBuckets {
		lo, hi := BucketBounds(idx)
		if lo != prevHi || hi <= lo {
			t.Fatalf("BucketBounds(%d) = [%d, %d): want a range starting at %d, where bucket %d ends", idx, lo, hi, prevHi, idx-1)
		}
		if BucketIndex(lo) != idx || BucketIndex(hi-1) != idx {
			t.Errorf("BucketBounds(%d) = [%d, %d): BucketIndex gives %d at lo, %d at hi-1", idx, lo, hi, BucketIndex(lo), BucketIndex(hi-1))
		}
		if idx < HistBuckets-1 && BucketIndex(hi) != idx+1 {
			t.Errorf("BucketBounds(%d) = [%d, %d): BucketIndex(hi) = %d, want %d", idx, lo, hi, BucketIndex(hi), idx+1)
		}
		if v := BucketValue(idx); v < lo || v >= hi {
			t.Errorf("BucketValue(%d) = %d is outside [%d, %d)", idx, v, lo, hi)
		}
		prevHi = hi
	}
	if prevHi != 1<<34 {
		t.Errorf("the last bucket ends at %d, want 2^34 (fio's ~17 s)", prevHi)
	}
	for _, idx := range []int{-1, HistBuckets} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BucketBounds(%d) did not panic", idx)
				}
			}()
			BucketBounds(idx)
		}()
	}
}

func TestHistBucketRelativeError(t *testing.T) {
	check := func(ns uint64) {
		t.Helper()
		mid := BucketValue(BucketIndex(ns))
		if err := math.Abs(float64(mid)-float64(ns)) / float64(ns); err > 1.0/128 {
			t.Errorf("ns %d: bucket midpoint %d, relative error %g > 1/128", ns, mid, err)
		}
	}
	// Both edges of every group, where the error is largest.
	for msb := 7; msb < 34; msb++ {
		lo := uint64(1) << msb
		check(lo)
		check(lo + 1)
		check(2*lo - 1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(1 + r.Uint64N(1<<34-1))
	}
}

func histOf(values ...uint64) *Histogram {
	var h Histogram
	for _, v := range values {
		h.Add(v)
	}
	return &h
}

func TestHistPercentiles(t *testing.T) {
	oneTo := func(n uint64) *Histogram {
		var h Histogram
		for v := uint64(1); v <= n; v++ {
			h.Add(v)
		}
		return &h
	}
	tests := []struct {
		name string
		h    *Histogram
		list []float64
		want []uint64
	}{
		{"empty", &Histogram{}, []float64{50, 99}, []uint64{0, 0}},
		{"1..100", oneTo(100), []float64{1, 50, 99, 99.99, 100}, []uint64{1, 50, 99, 100, 100}},
		{"unsorted list keeps its order", oneTo(100), []float64{99, 1, 50}, []uint64{99, 1, 50}},
		// p/100*N exactly an integer: the bucket that reaches it.
		{"1..10", oneTo(10), []float64{10, 20, 30, 50, 90, 100}, []uint64{1, 2, 3, 5, 9, 10}},
		// 60/100 in long double is a hair above 0.6, so fio needs 16 of 25
		// samples, not 15 (checked against fio's expression built by gcc).
		{"long double threshold", oneTo(25), []float64{60}, []uint64{16}},
		{"one value", histOf(1000, 1000, 1000), []float64{1, 50, 99.99}, []uint64{1004, 1004, 1004}},
		{"beyond the last bucket", histOf(1, 1<<40), []float64{50, 100}, []uint64{1, 1<<33 + 127<<26}},
		{"p above 100 clamps to the largest", histOf(5, 7), []float64{150}, []uint64{7}},
		{"p zero is the first bucket", histOf(5, 7), []float64{0}, []uint64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Percentiles(tt.list); !slices.Equal(got, tt.want) {
				t.Errorf("Percentiles(%v) = %v, want %v", tt.list, got, tt.want)
			}
		})
	}
}

// TestPercentilesSorted compares with the definition on sorted samples:
// fio's answer is the bucket of the ceil(p/100*N)-th smallest sample. N is
// chosen so that p/100*N is never near an integer for fio's default list,
// where the exact and the long double threshold could disagree.
func TestHistPercentilesSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 1001
	samples := make([]uint64, n)
	var h Histogram
	for i := range samples {
		// Log-uniform from 100 ns to ~100 ms, like real latencies.
		samples[i] = uint64(100 * math.Exp(r.Float64()*math.Log(1e6)))
		h.Add(samples[i])
	}
	slices.Sort(samples)
	got := h.Percentiles(DefaultPercentiles())
	for i, p := range DefaultPercentiles() {
		rank := new(big.Rat).Mul(new(big.Rat).SetFloat64(p), big.NewRat(n, 100))
		k := new(big.Int).Quo(rank.Num(), rank.Denom()).Int64()
		if !rank.IsInt() {
			k++
		}
		want := BucketValue(BucketIndex(samples[k-1]))
		if got[i] != want {
			t.Errorf("p%v = %d, want %d (sample %d of %d is %d)", p, got[i], want, k, n, samples[k-1])
		}
	}
}

func randomHist(r *rand.Rand, n int) *Histogram {
	var h Histogram
	for range n {
		h.Add(r.Uint64N(1 << uint(1+r.IntN(36))))
	}
	return &h
}

func TestHistogramMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var all, merged Lat
	for range 3 {
		var part Lat
		for range 1000 + r.IntN(1000) {
			v := 500 + r.Uint64N(1<<uint(10+r.IntN(20)))
			part.Add(v)
			all.Add(v)
		}
		merged.Merge(&part)
	}
	if merged.Hist != all.Hist {
		t.Error("merged histogram differs from the histogram of all samples")
	}
	if merged.Hist.N() != all.Stat.N {
		t.Errorf("merged N = %d, want %d", merged.Hist.N(), all.Stat.N)
	}
	m, a := merged.Stat, all.Stat
	if m.N != a.N || m.Min != a.Min || m.Max != a.Max {
		t.Errorf("merged N/min/max = %d/%d/%d, want %d/%d/%d", m.N, m.Min, m.Max, a.N, a.Min, a.Max)
	}
	// Welford and the parallel merge round differently; they agree closely.
	if !closeTo(m.Mean, a.Mean, 1e-12) || !closeTo(m.Stddev(), a.Stddev(), 1e-9) {
		t.Errorf("merged mean/stddev = %v/%v, want %v/%v", m.Mean, m.Stddev(), a.Mean, a.Stddev())
	}
	if !slices.Equal(merged.Hist.Percentiles(DefaultPercentiles()), all.Hist.Percentiles(DefaultPercentiles())) {
		t.Error("merged percentiles differ")
	}
}

func closeTo(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

func TestLatStat(t *testing.T) {
	var s LatStat
	if s.Stddev() != 0 {
		t.Errorf("empty stddev = %v", s.Stddev())
	}
	s.Add(7)
	if s.Min != 7 || s.Max != 7 || s.Mean != 7 || s.Stddev() != 0 {
		t.Errorf("after one sample: %+v, stddev %v", s, s.Stddev())
	}
	for _, v := range []uint64{2, 4, 4, 4, 5, 5, 9} {
		s.Add(v)
	}
	// {7,2,4,4,4,5,5,9}: mean 5, sum of squared deviations 32.
	if s.N != 8 || s.Min != 2 || s.Max != 9 || !closeTo(s.Mean, 5, 1e-15) || !closeTo(s.S, 32, 1e-15) {
		t.Errorf("got %+v, want N 8, min 2, max 9, mean 5, S 32", s)
	}
	if want := math.Sqrt(32.0 / 7); !closeTo(s.Stddev(), want, 1e-15) {
		t.Errorf("stddev = %v, want %v (samples-1)", s.Stddev(), want)
	}

	var zero, empty LatStat
	zero.Add(0)
	zero.Merge(&empty)
	if zero.N != 1 || zero.Min != 0 {
		t.Errorf("merging an empty stat changed %+v", zero)
	}
	empty.Merge(&s)
	if empty != s {
		t.Errorf("merge into empty = %+v, want %+v", empty, s)
	}
}

// TestLatStatMatchesFio compares bit for bit with fio's add_stat_sample and
// __sum_stat compiled by gcc -O2 on x86-64, fed the same samples.
func TestLatStatMatchesFio(t *testing.T) {
	var a, b LatStat
	x := uint64(1)
	for i := range 1000 {
		x = x*6364136223846793005 + 1442695040888963407
		v := 500 + (x>>33)%2000000
		if i%2 == 1 {
			b.Add(v)
		} else {
			a.Add(v)
		}
	}
	check := func(name string, s LatStat, want LatStat, stddev float64) {
		t.Helper()
		if s != want {
			t.Errorf("%s = %+v, want %+v", name, s, want)
		}
		if stddev != 0 && s.Stddev() != stddev {
			t.Errorf("%s stddev = %x, want %x", name, s.Stddev(), stddev)
		}
	}
	check("a", a, LatStat{N: 500, Min: 5615, Max: 1984086, Mean: 0x1.db01f8c49ba59p+19, S: 0x1.1e475895ea2acp+47}, 0x1.1238552c01c8dp+19)
	check("b", b, LatStat{N: 500, Min: 507, Max: 1998044, Mean: 0x1.ebd9f7ffffff9p+19, S: 0x1.4daafe7c79073p+47}, 0)
	a.Merge(&b)
	check("merged", a, LatStat{N: 1000, Min: 507, Max: 1998044, Mean: 0x1.e36df8624dd29p+19, S: 0x1.363e6f8180992p+48}, 0x1.1d530885903edp+19)
}

func TestHistBinsRoundTrip(t *testing.T) {
	h := randomHist(rand.New(rand.NewPCG(7, 8)), 50000)
	bins := h.Bins()
	for v, c := range bins {
		if c == 0 {
			t.Errorf("bin %d is empty", v)
		}
	}
	back, err := HistogramFromBins(bins)
	if err != nil {
		t.Fatal(err)
	}
	if back != *h {
		t.Error("HistogramFromBins(h.Bins()) != h")
	}
	if len((&Histogram{}).Bins()) != 0 {
		t.Error("empty histogram has bins")
	}
}

func TestHistogramFromBinsRejects(t *testing.T) {
	for _, v := range []uint64{128, 130, 653, 1 << 34} {
		if _, err := HistogramFromBins(map[uint64]uint64{v: 1}); err == nil {
			t.Errorf("bin %d: no error for a value that is not a bucket midpoint", v)
		}
	}
}

func TestLatAddAllocs(t *testing.T) {
	var l Lat
	ns := uint64(12345)
	if n := testing.AllocsPerRun(1000, func() { l.Add(ns); ns += 977 }); n != 0 {
		t.Errorf("Lat.Add allocates %v times per call", n)
	}
}

func benchLatencies() []uint64 {
	r := rand.New(rand.NewPCG(9, 10))
	v := make([]uint64, 4096)
	for i := range v {
		v[i] = uint64(1000 * math.Exp(r.Float64()*math.Log(1e4))) // 1 µs–10 ms
	}
	return v
}

func BenchmarkHistogramAdd(b *testing.B) {
	v := benchLatencies()
	var h Histogram
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Add(v[i&4095])
		i++
	}
}

func BenchmarkLatAdd(b *testing.B) {
	v := benchLatencies()
	var l Lat
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Add(v[i&4095])
		i++
	}
}

func BenchmarkHistogramPercentiles(b *testing.B) {
	h := randomHist(rand.New(rand.NewPCG(11, 12)), 100000)
	b.ReportAllocs()
	for b.Loop() {
		h.Percentiles(DefaultPercentiles())
	}
}

// TestHistogramJSON: a histogram marshals as fio's bins and reads back whole.
func TestHistogramJSON(t *testing.T) {
	var h Histogram
	for _, v := range []uint64{5, 5, 300, 70_000, 1 << 40} {
		h.Add(v)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"5":2`) {
		t.Fatalf("not bins: %s", b)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != h {
		t.Fatal("histogram changed through JSON")
	}
	if err := json.Unmarshal([]byte(`{"257":1}`), &back); err == nil {
		t.Fatal("a value that is no bucket midpoint was accepted")
	}
}

func TestReliableN(t *testing.T) {
	for p, want := range map[float64]uint64{50: 20, 99: 1000, 99.9: 10000, 99.99: 100000} {
		if got := ReliableN(p); got != want {
			t.Errorf("ReliableN(%v) = %d, want %d", p, got, want)
		}
	}
	if Reliable(99.99, 15000) || !Reliable(99, 1000) {
		t.Error("Reliable disagrees with ReliableN")
	}
}

// MarshalJSON writes what encoding/json writes of the histogram's bins
// as a map of decimal midpoints, byte for byte.
func TestMarshalJSONIsTheMapsEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 50 {
		var h Histogram
		for range rng.IntN(3) * rng.IntN(5000) {
			h.Add(uint64(rng.ExpFloat64() * math.Pow(10, float64(1+i%9))))
		}
		if i == 7 {
			h.Counts[HistBuckets-1] = math.MaxUint64
		}
		bins := map[string]uint64{}
		for v, n := range h.Bins() {
			bins[strconv.FormatUint(v, 10)] = n
		}
		want, err := json.Marshal(bins)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("histogram %d: %s, want %s", i, got, want)
		}
		var back Histogram
		if err := json.Unmarshal(got, &back); err != nil || back != h {
			t.Fatalf("histogram %d does not read back: %v", i, err)
		}
	}
}
