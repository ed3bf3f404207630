package sweep

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
)

// importedSteps reads real fio outputs (../fio/testdata/import, see its
// README) and returns their steps' configs, file after file.
func importedSteps(t *testing.T, files ...string) []bench.Config {
	t.Helper()
	var configs []bench.Config
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("../fio/testdata/import", f))
		if err != nil {
			t.Fatal(err)
		}
		imp, err := fio.ParseFio(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range imp.Steps() {
			configs = append(configs, st.Config)
		}
	}
	return configs
}

func TestRebuild(t *testing.T) {
	for _, tt := range []struct {
		name   string
		files  []string
		sweeps string   // axis=v1,v2 …
		steps  []string // Step.String()
		repeat int
		notes  []string // substrings, in order
	}{
		{"iodepth", []string{"stonewall-qd.jsonplus.json"}, "iodepth=1,4,16",
			[]string{"iodepth=1 #1", "iodepth=4 #1", "iodepth=16 #1"}, 1, nil},
		{"engines", []string{"engines.json"}, "ioengine=psync,libaio,io_uring",
			[]string{"ioengine=psync #1", "ioengine=libaio #1", "ioengine=io_uring #1"}, 1, nil},
		{"group reporting bs", []string{"group-reporting-bs.jsonplus.json"}, "bs=4k,64k",
			[]string{"bs=4k #1", "bs=64k #1"}, 1, nil},
		{"numjobs", []string{"numjobs.json"}, "numjobs=1,2", []string{"numjobs=1 #1", "numjobs=2 #1"}, 1, nil},
		// One group, two unlike jobs at once: one step, nothing swept.
		{"fairness", []string{"fairness.json"}, "", []string{"base #1"}, 1, nil},
		{"repeats", []string{"repeats/1.json", "repeats/2.json", "repeats/3.json"}, "iodepth=1,8",
			[]string{"iodepth=1 #1", "iodepth=8 #1", "iodepth=1 #2", "iodepth=8 #2", "iodepth=1 #3", "iodepth=8 #3"}, 3, nil},
		// Files of different plans: both axes and a note for what no
		// axis says.
		{"two plans", []string{"stonewall-qd.jsonplus.json", "repeats/1.json"}, "iodepth=1,4,16,8",
			[]string{"iodepth=1 #1", "iodepth=4 #1", "iodepth=16 #1", "iodepth=1 #2", "iodepth=8 #1"}, 2,
			[]string{"step 4 (iodepth=1 #2) differs from the plan's base (step 1) in runtime=500ms (base runtime=1)",
				"step 5 (iodepth=8 #1) differs from the plan's base (step 1) in runtime=500ms"}},
		// a and b ran at once (rw randread and randwrite), then c alone.
		{"new_group", []string{"newgroup.json"}, "", []string{"base #1", "base #2"}, 2,
			[]string{"the jobs of step 1 differ in rw (randread, randwrite), so rw is not swept",
				"step 2 (base #2) differs from the plan's base (step 1) in its number of jobs (1, the base 2)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			configs := importedSteps(t, tt.files...)
			plan, steps := Rebuild("imported", configs)
			var sweeps []string
			for _, s := range plan.Sweeps {
				sweeps = append(sweeps, string(s.Axis)+"="+strings.Join(s.Values, ","))
			}
			if got := strings.Join(sweeps, " "); got != tt.sweeps {
				t.Errorf("sweeps %q, want %q", got, tt.sweeps)
			}
			var labels []string
			for i, st := range steps {
				labels = append(labels, st.String())
				if st.Seq != i || len(st.Config.Jobs) != len(configs[i].Jobs) || st.Config.Jobs[0].Name != configs[i].Jobs[0].Name {
					t.Errorf("step %d: seq %d, jobs %v", i, st.Seq, st.Config.Jobs)
				}
			}
			if !slices.Equal(labels, tt.steps) {
				t.Errorf("steps %q, want %q", labels, tt.steps)
			}
			if plan.Repeat != tt.repeat {
				t.Errorf("repeat %d, want %d", plan.Repeat, tt.repeat)
			}
			if len(plan.Notes) != len(tt.notes) {
				t.Fatalf("notes %q, want %d", plan.Notes, len(tt.notes))
			}
			for i, want := range tt.notes {
				if !strings.HasPrefix(plan.Notes[i], want) {
					t.Errorf("note %q, want %q", plan.Notes[i], want)
				}
			}
			// The base is the first step's jobs, with what fio left out:
			// expanding the plan again gives the imported steps' axes.
			if plan.Base.Jobs[0].Name != configs[0].Jobs[0].Name || !plan.Base.Jobs[0].TimeBased {
				t.Errorf("base %+v", plan.Base.Jobs[0])
			}
			if !slices.Contains(plan.Args, "--time_based") {
				t.Errorf("args %q lack the inferred --time_based", plan.Args)
			}
			if len(plan.Notes) == 0 {
				again, err := plan.Steps()
				if err != nil {
					t.Fatal(err)
				}
				for i := range again {
					if i < len(steps) && !slices.Equal(again[i].Axes, steps[i].Axes) {
						t.Errorf("plan step %d: %s, imported %s", i, again[i].String(), steps[i].String())
					}
				}
			}
		})
	}
}
