package summary

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// TestJobViewOf checks that a JobView keeps what a bench.JobResult's readers
// read: its histograms' buckets, and the same figures from its methods.
func TestJobViewOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20 {
		r := bench.JobResult{Name: "j", Runtime: time.Duration(rng.IntN(3)) * time.Duration(rng.Int64N(int64(time.Minute))),
			UsrCPU: time.Duration(rng.Int64N(1e10)), SysCPU: time.Duration(rng.Int64N(1e10)), Jobs: rng.IntN(3)}
		for d := range 2 {
			for range rng.IntN(2000) {
				ns := uint64(rng.ExpFloat64() * 1e5)
				r.Dirs[d].Slat.Add(500)
				r.Dirs[d].Clat.Add(ns)
				r.Dirs[d].Lat.Add(ns + 500)
				if i%3 == 0 {
					r.Dirs[d].Intended.Add(ns * 2)
				}
				r.Dirs[d].IOs++
				r.Dirs[d].Bytes += 4096
			}
		}
		j := JobViewOf(&r)
		for d := range 2 {
			if j.IOPS(d) != r.IOPS(d) || j.BW(d) != r.BW(d) || j.Paced(d) != r.Paced(d) {
				t.Errorf("result %d dir %d: IOPS %v BW %v paced %v, want %v %v %v", i, d, j.IOPS(d), j.BW(d), j.Paced(d), r.IOPS(d), r.BW(d), r.Paced(d))
			}
			var back hist.Lat
			l, name := j.HeadlineLat(d)
			l.AddTo(&back)
			want, wantName := r.HeadlineLat(d)
			if back != *want || name != wantName {
				t.Errorf("result %d dir %d: the %s latency does not come back whole (%s)", i, d, name, wantName)
			}
			// Every kind comes back whole: the charts draw each (slat,
			// clat, lat).
			for _, k := range []struct {
				name string
				got  *LatView
				want *hist.Lat
			}{{"slat", &j.Dirs[d].Slat, &r.Dirs[d].Slat}, {"clat", &j.Dirs[d].Clat, &r.Dirs[d].Clat}, {"lat", &j.Dirs[d].Lat, &r.Dirs[d].Lat}} {
				var back hist.Lat
				k.got.AddTo(&back)
				if back != *k.want {
					t.Errorf("result %d dir %d: %s does not come back whole", i, d, k.name)
				}
			}
		}
		if j.CPUShare() != r.CPUShare() || j.Saturated() != r.Saturated() {
			t.Errorf("result %d: CPU share %v, want %v", i, j.CPUShare(), r.CPUShare())
		}
	}
}

// A StepView's figures are worked out once, and again for a copy given
// another result.
func TestStepFigures(t *testing.T) {
	r := sweep.StepResult{Status: sweep.StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{
		{Name: "a", Runtime: time.Second, Dirs: bench.DirResults{{IOs: 1000}}}}}}}}
	r.Result.Groups[0].Jobs[0].Dirs[0].Clat.Add(5000)
	st := StepViewOf(&r)
	if got, want := FiguresOfStep(&st), FiguresOf(&r); !reflect.DeepEqual(got, want) {
		t.Fatalf("figures %+v, want %+v", got, want)
	}
	other := st
	other.Result = &ResultView{Groups: []GroupView{{Jobs: []JobView{{Name: "b", Runtime: time.Second, Dirs: [3]DirView{{IOs: 10}}}}}}}
	if f := FiguresOfStep(&other); len(f.Jobs) != 1 || f.Jobs[0].Name != "b" || f.Jobs[0].IOPS != 10 {
		t.Fatalf("a copy with another result: figures %+v, want b's", f)
	}
}
