package fio

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

// The fio outputs under testdata/import/ are real (README.md there says
// how each was made): fio 3.33 printed none of the value-less options they
// ran with.

// parseTestdata imports the fio output at path, and returns it with fio's
// last document as read.
func parseTestdata(t *testing.T, path string) (*FioImport, *Report) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ParseFio(data)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := ParseReports(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return imp, &reps[len(reps)-1]
}

func TestImportInfersOptions(t *testing.T) {
	for _, tt := range []struct {
		file string
		// inferred: "job option" in order; steps: each step's job names.
		inferred []string
		steps    [][]string
		reasons  []string // substrings of the reasons, in order
	}{
		{"stonewall-qd.jsonplus.json",
			[]string{"qd1 time_based", "qd4 time_based", "qd16 time_based", "qd4 stonewall", "qd16 stonewall"},
			[][]string{{"qd1"}, {"qd4"}, {"qd16"}},
			[]string{"more than its size 16.0MiB", "", "", "fit one after another in fio's elapsed 4s", ""}},
		{"fairness.json",
			[]string{"writer time_based", "reader time_based"},
			[][]string{{"writer", "reader"}},
			[]string{"fio starts over only with time_based", "the runtime, not the size, ended it"}},
		{"group-reporting-bs.jsonplus.json",
			[]string{"bs4k group_reporting", "bs64k group_reporting", "bs4k time_based", "bs64k time_based", "bs64k stonewall"},
			[][]string{{"bs4k"}, {"bs64k"}},
			[]string{"one entry for its numjobs=2 clones", "", "more than its size 32.0MiB", "", ""}},
		{"engines.json",
			[]string{"psync time_based", "libaio time_based", "io_uring time_based", "libaio stonewall", "io_uring stonewall"},
			[][]string{{"psync"}, {"libaio"}, {"io_uring"}}, nil},
		// a and b ran beside each other for 2 s each, c after them: 4 s of
		// runtimes in fio's 3 s only if b did not wait.
		{"newgroup.json",
			[]string{"a time_based", "b time_based", "b new_group", "c stonewall"},
			[][]string{{"a", "b"}, {"c"}},
			[]string{"", "", "cannot have waited", "fit one after another"}},
		// Without group_reporting fio prints each clone: two entries, one job.
		{"numjobs.json",
			[]string{"nj1 time_based", "nj2 time_based", "nj2 stonewall"},
			[][]string{{"nj1"}, {"nj2"}}, nil},
		{"repeats/1.json",
			[]string{"qd1 time_based", "qd8 time_based", "qd8 stonewall"},
			[][]string{{"qd1"}, {"qd8"}}, nil},
	} {
		t.Run(tt.file, func(t *testing.T) {
			imp, rep := parseTestdata(t, filepath.Join("testdata/import", tt.file))
			checkImport(t, rep, imp, strings.Contains(tt.file, "jsonplus"))
			var got []string
			for _, in := range imp.Inferred {
				got = append(got, in.Job+" "+in.Option)
			}
			if !slices.Equal(got, tt.inferred) {
				t.Errorf("inferred %q, want %q", got, tt.inferred)
			}
			for i, want := range tt.reasons {
				if i < len(imp.Inferred) && !strings.Contains(imp.Inferred[i].Reason, want) {
					t.Errorf("inferred %s: reason %q, want it to say %q", got[i], imp.Inferred[i].Reason, want)
				}
			}
			if len(imp.Notes) == 0 || !strings.Contains(imp.Notes[0], "fio-3.33 leaves value-less options") {
				t.Errorf("notes %q", imp.Notes)
			}
			// The inferred options are on the jobs and among their options,
			// so the rebuilt plan says them.
			for _, in := range imp.Inferred {
				for _, j := range imp.Config.Jobs {
					if j.Name == in.Job && !slices.Contains(j.Options, bench.Option{Name: in.Option}) {
						t.Errorf("job %s: options %v lack the inferred %s", j.Name, j.Options, in.Option)
					}
				}
			}
			steps := imp.Steps()
			var names [][]string
			for _, st := range steps {
				var n []string
				for _, j := range st.Config.Jobs {
					n = append(n, j.Name)
				}
				names = append(names, n)
			}
			if !slices.EqualFunc(names, tt.steps, slices.Equal) {
				t.Fatalf("steps %q, want %q", names, tt.steps)
			}
			// Each step holds its own jobs' results, fio's numbers as
			// printed; its groups count from 0.
			k := 0
			for s, st := range steps {
				for gi, g := range st.Result.Groups {
					if g.ID != gi || st.Config.Groups[gi].ID != gi || st.Config.Groups[gi].Wait {
						t.Errorf("step %d group %d: ids %d/%d wait %v", s, gi, g.ID, st.Config.Groups[gi].ID, st.Config.Groups[gi].Wait)
					}
					for _, r := range g.Jobs {
						jr := rep.Jobs[k]
						k++
						if r.Name != jr.JobName || r.GroupID != gi {
							t.Errorf("step %d: job %s in group %d, want %s", s, r.Name, r.GroupID, jr.JobName)
						}
						for d, dr := range []DirReport{jr.Read, jr.Write} {
							if dr.Runtime > 0 && math.Abs(r.IOPS(d)-dr.IOPS) > 1e-6*dr.IOPS {
								t.Errorf("step %d job %s: IOPS %f, fio printed %f", s, r.Name, r.IOPS(d), dr.IOPS)
							}
						}
					}
					if len(steps) > 1 && len(g.Disks) > 0 {
						t.Errorf("step %d: disk_util of the whole fio run kept", s)
					}
				}
				// Laid back to back before fio's timestamp.
				if s > 0 && !st.Result.Start.After(steps[s-1].Result.Start) {
					t.Errorf("step %d starts %v, not after step %d's %v", s, st.Result.Start, s-1, steps[s-1].Result.Start)
				}
			}
			if k != len(rep.Jobs) {
				t.Errorf("steps hold %d jobs, fio printed %d", k, len(rep.Jobs))
			}
			last := steps[len(steps)-1].Result
			if end := last.Start.Add(last.Groups[0].Jobs[0].Runtime); end.Sub(time.UnixMilli(rep.TimestampMS)).Abs() > time.Second {
				t.Errorf("the last step ends %v, fio reported at %v", end, time.UnixMilli(rep.TimestampMS))
			}
		})
	}
}

func TestImportNoInferenceWhenPrinted(t *testing.T) {
	imp, _ := parseTestdata(t, "testdata/import/stonewall-qd.jsonplus.json")
	if len(imp.Inferred) == 0 {
		t.Fatal("nothing inferred from fio 3.33's output")
	}
	data, err := os.ReadFile("testdata/import/stonewall-qd.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	// fio 3.39 prints value-less options: their absence is an answer.
	newer, err := ParseFio(bytes.Replace(data, []byte(`"fio-3.33"`), []byte(`"fio-3.41"`), 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(newer.Inferred) != 0 || len(newer.Notes) != 0 || len(newer.Steps()) != 1 {
		t.Errorf("fio-3.41: inferred %v, notes %q, %d steps", newer.Inferred, newer.Notes, len(newer.Steps()))
	}
	for _, tt := range []struct {
		version string
		prints  bool
	}{{"fio-3.33", false}, {"fio-3.38-12-gabc", false}, {"fio-3.39", true}, {"fio-4.0", true}, {"fio-3.9", false}, {"iolab 1", false}} {
		if got := printsFlags(tt.version); got != tt.prints {
			t.Errorf("printsFlags(%q) = %v", tt.version, got)
		}
	}
}

// TestGroupStarts: stonewall and new_group told apart by fio's elapsed
// time, for groups of known runtimes.
func TestGroupStarts(t *testing.T) {
	jobs := func(lengths ...time.Duration) []bench.JobResult {
		out := make([]bench.JobResult, len(lengths))
		for i, l := range lengths {
			out[i] = bench.JobResult{Name: string(rune('a' + i)), GroupID: i, Runtime: l, Job: bench.NewJob()}
		}
		return out
	}
	s := time.Second
	for _, tt := range []struct {
		name    string
		results []bench.JobResult
		elapsed time.Duration
		want    string
		reason  string
	}{
		{"sequential", jobs(s, s, s), 4 * s, "b stonewall, c stonewall", "fit one after another in fio's elapsed 4s"},
		{"all beside", jobs(2*s, 2*s, 2*s), 3 * s, "b new_group, c new_group", "cannot have waited"},
		{"one waited", jobs(2*s, 2*s, 2*s), 5 * s, "b stonewall, c new_group", "one of several ways"},
		{"no elapsed", jobs(s, s), 0, "b stonewall", "cannot tell stonewall from new_group"},
		{"clock too short", jobs(5*s, 5*s), 2 * s, "b stonewall", "cannot tell stonewall from new_group"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, g := range groupStarts(tt.results, tt.elapsed) {
				got = append(got, tt.results[g.entry].Name+" "+g.option)
				if !strings.Contains(g.reason, tt.reason) {
					t.Errorf("%s %s: reason %q, want it to say %q", tt.results[g.entry].Name, g.option, g.reason, tt.reason)
				}
			}
			if strings.Join(got, ", ") != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
