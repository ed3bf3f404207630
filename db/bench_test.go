package db

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// BenchmarkStore500Steps stores a 500-step run — one randrw job per step,
// read and write each with ~200 non-empty buckets in slat, clat and lat, 60
// samples — and reads it back with Steps, as the charts do.
func BenchmarkStore500Steps(b *testing.B) {
	const steps = 500
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 14))
	// A few distinct measured steps, reused with their own seq: measuring
	// 500 × 2 × 5000 latencies would only slow the setup.
	var templates []sweep.StepResult
	for i := range 8 {
		templates = append(templates, testStep(rng, i, 5000, 60, false))
	}
	buckets := 0
	for d := range 2 {
		buckets += len(templates[0].Result.Groups[0].Jobs[0].Dirs[d].Clat.Hist.Bins())
	}
	b.ReportMetric(float64(buckets)/2, "clat-buckets/dir")
	b.ResetTimer()

	var save, read time.Duration
	for b.Loop() {
		b.StopTimer()
		s, _ := openTest(b)
		id, err := s.CreateRun(ctx, testRun())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		t0 := time.Now()
		for seq := range steps {
			st := templates[seq%len(templates)]
			st.Step.Seq = seq
			if err := s.SaveStep(ctx, id, &st); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		got, err := s.Steps(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		save, read = save+t1.Sub(t0), read+time.Since(t1)
		if len(got) != steps || len(got[steps-1].Result.Groups[0].Jobs[0].Samples) != 60 {
			b.Fatalf("read back %d steps", len(got))
		}

		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(save.Milliseconds())/float64(b.N), "save-ms/op")
	b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms/op")
}

// BenchmarkSteps500 reads a stored 500-step run back, all of it and what
// the run page reads.
func BenchmarkSteps500(b *testing.B) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 14))
	s, _ := openTest(b)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		b.Fatal(err)
	}
	var templates []sweep.StepResult
	for i := range 8 {
		templates = append(templates, testStep(rng, i, 5000, 60, false))
	}
	for seq := range 500 {
		st := templates[seq%len(templates)]
		st.Step.Seq = seq
		if err := s.SaveStep(ctx, id, &st); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Steps(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What the run page reads: clat histograms, one step's samples.
	page := StepLoad{Hists: ClatHist, Samples: func(st *sweep.StepResult) bool { return st.Step.Seq == 0 }}
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.StepsFor(ctx, id, page); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkBins(b *testing.B) {
	st := testStep(rand.New(rand.NewPCG(1, 2)), 0, 5000, 0, false)
	h := &st.Result.Groups[0].Jobs[0].Dirs[1].Clat.Hist
	var scratch []byte
	text := encodeBins(&scratch, h)
	b.Logf("%d buckets, %d bytes", len(h.Bins()), len(text.String))
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			encodeBins(&scratch, h)
		}
	})
	b.Run("decode", func(b *testing.B) {
		var got hist.Histogram
		for b.Loop() {
			got = hist.Histogram{}
			decodeBins(text.String, &got)
		}
	})
}
