package bench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"iolab/bench/hist"
)

// TestSplitByLat: the I/Os at lat's p50 and p99, split, are those of lat's
// bucket at that percentile, and their mean parts add up to a lat in it,
// within fio's bucket of the percentile fio reports — where the parts'
// own medians, on a queue that only some I/Os wait in, do not. Halves
// merged equal the whole; the JSON reads back as written.
func TestSplitByLat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var whole, a, b BlockTime
	var lat hist.Histogram
	for i := range 20000 {
		submit := int64(2000 + rng.IntN(500))
		device := int64(40000 * math.Exp(0.3*rng.NormFloat64()))
		completion := int64(1500 + rng.IntN(1000))
		var queue int64
		if rng.IntN(3) == 0 { // a third wait behind another job's I/O
			queue = int64(60000 * math.Exp(0.5*rng.NormFloat64()))
		}
		whole.AddTimed(submit, queue, device, completion)
		half := &a
		if i%2 == 1 {
			half = &b
		}
		half.AddTimed(submit, queue, device, completion)
		lat.Add(uint64(submit + queue + device + completion))
	}
	for _, p := range []float64{50, 99} {
		s, ok := whole.ByLat.SplitAt(p)
		want := lat.Percentiles([]float64{p})[0]
		lo, hi := hist.BucketBounds(hist.BucketIndex(want))
		if !ok || s.Lat != want || s.IOs != lat.Counts[hist.BucketIndex(want)] || s.Sum() < float64(lo) || s.Sum() >= float64(hi) {
			t.Errorf("p%g: split %+v (sum %.0f); want lat %d, the %d I/Os of its bucket [%d, %d), their parts adding up inside it",
				p, s, s.Sum(), want, lat.Counts[hist.BucketIndex(want)], lo, hi)
		}
		t.Logf("p%g: lat %d ns = %.0f + %.0f + %.0f + %.0f (%d I/Os)", p, s.Lat, s.Parts[0], s.Parts[1], s.Parts[2], s.Parts[3], s.IOs)
	}
	m := func(l *hist.Lat) float64 { return float64(l.Percentiles([]float64{50})[0]) }
	own := m(&whole.Submit) + m(&whole.Queue) + m(&whole.Device) + m(&whole.Completion)
	if p50 := float64(lat.Percentiles([]float64{50})[0]); own > 0.9*p50 {
		t.Errorf("the parts' own medians add up to %.0f ns, lat's is %.0f: the case was meant to part them", own, p50)
	} else {
		t.Logf("the parts' own medians add up to %.0f ns, %.0f %% of lat's median", own, 100*own/p50)
	}

	a.Merge(&b)
	if !reflect.DeepEqual(a.ByLat, whole.ByLat) {
		t.Error("the halves merged are not the whole")
	}
	data, err := json.Marshal(whole.ByLat)
	if err != nil {
		t.Fatal(err)
	}
	var back SplitByLat
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, whole.ByLat) {
		t.Errorf("the JSON read back differs (%v)", err)
	}
	if err := json.Unmarshal([]byte(`{"130":[1,1,1,1,1]}`), &back); err == nil || !strings.Contains(err.Error(), "not a latency bucket's midpoint") {
		t.Errorf("a key off the buckets' midpoints: %v", err)
	}
}
