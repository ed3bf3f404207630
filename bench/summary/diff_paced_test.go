package summary

import (
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/sweep"
)

// pacedJob is spreadJob of a reader paced at ios IOPS whose I/Os each
// started wait after their intended start: its latency from the
// intended start is clat plus wait; wait < 0 leaves it unpaced.
func pacedJob(ios uint64, lat, wait time.Duration) bench.JobResult {
	r := spreadJob("r", bench.Read, ios, 4096, lat)
	if wait < 0 {
		return r
	}
	for i := range ios {
		r.Dirs[bench.Read].Intended.Add(uint64(float64(lat)*(0.8+0.4*float64(i)/float64(ios))) + uint64(wait))
	}
	return r
}

// pacedRun is a run of six repeats of a reader paced at 1000 IOPS, its
// clat 100 µs (a little more each repeat), its I/Os waiting wait(repeat)
// past their intended start.
func pacedRun(label string, wait func(repeat int) time.Duration) DiffSide {
	p := synthPlan(6)
	job := bench.Job{Name: "r", RW: "randread", BS: 4096, IODepth: 1}
	job.RateIOPS[bench.Read] = 1000
	p.Base = bench.Config{Jobs: []bench.Job{job}}
	return DiffSide{Label: label, Plan: p, Steps: synthSteps(p, func(s sweep.Step) sweep.StepResult {
		st := doneStep(pacedJob(1000, 100*time.Microsecond+time.Duration(s.Repeat)*time.Microsecond, wait(s.Repeat)))
		st.Step.Config = p.Base
		return st
	})}
}

// Two runs of a paced reader whose clat is the same but whose I/Os wait
// 2 ms past their intended start in the second (the device fell behind
// the rate): the diff compares the latency from the intended start by
// default, as the QoS curve plots it, and finds it worse; asked for clat
// it finds no difference.
func TestDiffPacedIntendedStart(t *testing.T) {
	a := pacedRun("run 1", func(int) time.Duration { return 10 * time.Microsecond })
	b := pacedRun("run 2", func(r int) time.Duration { return 2*time.Millisecond + time.Duration(r)*10*time.Microsecond })

	d := DiffRuns(a, b, DiffConf)
	if d.Intended != 1 || len(d.Mixed) != 0 {
		t.Fatalf("%d points on the intended start, mixed %q; want the one point", d.Intended, d.Mixed)
	}
	for _, r := range d.Rows {
		if r.Metric.P > 0 && r.Metric.Lat != LatIntended {
			t.Errorf("paced steps compared on %s: %s", r.Metric.Lat, r.Metric.Name)
		}
	}
	r := rowOf(t, d, "r", "from intended start p99")
	if r.Cmp.Verdict != stats.Significant || r.Better() || r.Cmp.Rel < 10 {
		t.Errorf("from intended start p99 %v → %v: %+v; want significantly worse, more than 10×", r.A.Values, r.B.Values, r.Cmp)
	}
	if d.Kind() != LatIntended {
		t.Errorf("Kind = %s, want intended", d.Kind())
	}
	if got := d.LatText(); !strings.HasPrefix(got, "lat from intended start (the steps were paced") {
		t.Errorf("LatText = %q", got)
	}
	var out strings.Builder
	if err := WriteDiff(&out, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Latency: lat from intended start", "from intended start p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}

	// Asked for clat, the same runs compare clat: the same in both.
	a.Lat = LatClat
	d = DiffRuns(a, b, DiffConf)
	if d.Intended != 0 || d.Lat != LatClat {
		t.Fatalf("asked for clat: %d points on the intended start, lat %s", d.Intended, d.Lat)
	}
	r = rowOf(t, d, "r", "clat p99")
	if r.Cmp.Verdict == stats.Significant {
		t.Errorf("clat p99 %v → %v differ: %+v", r.A.Values, r.B.Values, r.Cmp)
	}
	if strings.Contains(d.LatText(), "intended") {
		t.Errorf("asked for clat, LatText = %q", d.LatText())
	}
}

// A side of which some repeats were paced and some not compares the
// point on the default kind, and says so.
func TestDiffPacedMixed(t *testing.T) {
	a := pacedRun("run 1", func(int) time.Duration { return 10 * time.Microsecond })
	b := pacedRun("run 2", func(r int) time.Duration {
		if r%2 == 0 {
			return -1
		}
		return 2 * time.Millisecond
	})
	d := DiffRuns(a, b, DiffConf)
	if d.Intended != 0 || len(d.Mixed) != 1 || d.Lat != LatClat {
		t.Fatalf("%d on the intended start, mixed %q, lat %s", d.Intended, d.Mixed, d.Lat)
	}
	rowOf(t, d, "r", "clat p99")
	if got := d.LatText(); !strings.Contains(got, "job r paced only some of their repeats, so compared on clat") {
		t.Errorf("LatText = %q", got)
	}
}
