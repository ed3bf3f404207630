package bench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMergeJobs(t *testing.T) {
	job := func(reads uint64, lat uint64, runtime time.Duration) JobResult {
		r := JobResult{Name: "clone", Runtime: runtime, Jobs: 1, Ctx: 10}
		r.Dirs[Read].IOs, r.Dirs[Read].Bytes = reads, reads*4096
		for range reads {
			r.Dirs[Read].Clat.Add(lat)
		}
		r.Samples = []Sample{{At: time.Second, IOs: DirCounts{reads / 2}}, {At: 2 * time.Second, IOs: DirCounts{reads}}}
		return r
	}
	jobs := []JobResult{job(100, 1000, 2*time.Second), job(300, 3000, 2100*time.Millisecond), job(200, 2000, time.Second)}
	jobs[2].Samples = jobs[2].Samples[:1]
	jobs[1].Error = "pread: input/output error"
	firstSamples := slices.Clone(jobs[0].Samples)

	m := MergeJobs(jobs)
	if m.Jobs != 3 || m.Dirs[Read].IOs != 600 || m.Dirs[Read].Bytes != 600*4096 || m.Ctx != 30 {
		t.Errorf("merged: jobs %d, reads %d, bytes %d, ctx %d; want 3, 600, %d, 30", m.Jobs, m.Dirs[Read].IOs, m.Dirs[Read].Bytes, 600*4096, m.Ctx)
	}
	if m.Runtime != 2100*time.Millisecond || m.Error != "pread: input/output error" {
		t.Errorf("merged: runtime %v, error %q; want the longest window and the first error", m.Runtime, m.Error)
	}
	if n, mean := m.Dirs[Read].Clat.Stat.N, m.Dirs[Read].Clat.Stat.Mean; n != 600 || mean < 2333 || mean > 2334 {
		t.Errorf("merged clat: N %d, mean %v; want 600, 2333.3", n, mean)
	}
	// Samples add interval by interval, as far as every job has them.
	if want := []Sample{{At: time.Second, IOs: DirCounts{300}}}; !slices.Equal(m.Samples, want) {
		t.Errorf("merged samples = %v, want %v", m.Samples, want)
	}
	if !slices.Equal(jobs[0].Samples, firstSamples) {
		t.Errorf("MergeJobs changed the first job's samples: %v, was %v", jobs[0].Samples, firstSamples)
	}
}

// TestDirResultsJSON: a result without trims writes its two directions as
// before trims were (stored runs and fio-compatible outputs unchanged),
// one with trims writes three and reads them back, and a stored result of
// two directions loads with no trims.
func TestDirResultsJSON(t *testing.T) {
	var r JobResult
	r.Dirs[Read].IOs, r.Dirs[Write].IOs = 3, 4
	r.Samples = []Sample{{IOs: DirCounts{1, 2}}}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ios":[1,2]`) || strings.Count(string(b), `"intended_lat"`) != 2 {
		t.Errorf("without trims: %s", b)
	}
	var back JobResult
	if err := json.Unmarshal(b, &back); err != nil || back.Dirs[Write].IOs != 4 || back.Dirs[Trim].IOs != 0 {
		t.Errorf("read back: %+v %v", back.Dirs, err)
	}
	r.Dirs[Trim].IOs, r.Dirs[Trim].Bytes = 5, 5<<12
	r.Samples[0].IOs[Trim] = 7
	if b, err = json.Marshal(&r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ios":[1,2,7]`) || strings.Count(string(b), `"intended_lat"`) != 3 {
		t.Errorf("with trims: %s", b)
	}
	back = JobResult{}
	if err := json.Unmarshal(b, &back); err != nil || back.Dirs[Trim].IOs != 5 || back.Samples[0].IOs[Trim] != 7 {
		t.Errorf("read back: %+v %v", back.Dirs[Trim], err)
	}
}
