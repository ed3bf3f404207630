package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The access-pattern options' probes, and side-by-side runs with fio that
// compare every offset: iolab draws them with fio's own generators and
// seeds, so a job picks the blocks fio picks, in the same order.

// blocksOf are the block numbers (offset / 4k) of a job's 4 KiB preads on
// a 1 MiB scratch file, in order.
func blocksOf(t *testing.T, extra ...string) []int64 {
	t.Helper()
	offs := offsets(traced(t, "pread64", append([]string{"--name=e", "--filename=" + file(t, 1<<20), "--rw=randread"}, extra...)...), 4096)
	for i := range offs {
		offs[i] /= 4096
	}
	return offs
}

// hotShare is the share of I/Os on the hottest tenth of 256 blocks.
func hotShare(blocks []int64) float64 {
	per := make([]int, 256)
	for _, b := range blocks {
		per[b]++
	}
	slices.Sort(per)
	slices.Reverse(per)
	hot := 0
	for _, c := range per[:26] {
		hot += c
	}
	return float64(hot) / float64(len(blocks))
}

func init() {
	effects["random_distribution"] = func(t *testing.T) {
		// The random map spreads 1024 reads over 256 blocks four times
		// each: the hottest tenth gets a tenth. zipf:1.2 piles them up
		// (fio-genzipf predicts about 70% for 256 blocks).
		if s := hotShare(blocksOf(t, "--io_size=4m")); s > 0.11 {
			t.Errorf("uniform: the hottest tenth of the blocks got %.0f%% of the reads", s*100)
		}
		if s := hotShare(blocksOf(t, "--io_size=4m", "--random_distribution=zipf:1.2")); s < 0.5 {
			t.Errorf("zipf:1.2: the hottest tenth of the blocks got only %.0f%% of the reads", s*100)
		}
		// zoned: 90% of the reads in the first 10% of the file.
		first := 0
		blocks := blocksOf(t, "--io_size=2m", "--random_distribution=zoned:90/10:10/90")
		for _, b := range blocks {
			if b < 25 {
				first++
			}
		}
		if share := float64(first) / float64(len(blocks)); share < 0.85 || share > 0.95 {
			t.Errorf("zoned:90/10:10/90: %.0f%% of the reads in the first tenth", share*100)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=randread", "--random_distribution=zoned:60/10:40/90,100"), "comma")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=randread", "--random_distribution=zoned_abs:50/512k:50/1m"), "zoned_abs sizes exceed")
	}
	effects["random_generator"] = func(t *testing.T) {
		taus := blocksOf(t)
		lfsr := blocksOf(t, "--random_generator=lfsr")
		taus64 := blocksOf(t, "--random_generator=tausworthe64")
		if slices.Equal(taus, lfsr) || slices.Equal(taus, taus64) || slices.Equal(lfsr, taus64) {
			t.Error("the generators chose the same offsets")
		}
		// An LFSR needs no map yet does every block once.
		s := slices.Clone(lfsr)
		slices.Sort(s)
		if len(slices.Compact(s)) != 256 {
			t.Error("lfsr read a block twice in one pass")
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=randread", "--random_generator=lfsr", "--random_distribution=zoned:50/50:50/50"), "zones")
	}
	effects["percentage_random"] = func(t *testing.T) {
		next := func(blocks []int64) float64 {
			n := 0
			for i := 1; i < len(blocks); i++ {
				if blocks[i] == blocks[i-1]+1 {
					n++
				}
			}
			return float64(n) / float64(len(blocks)-1)
		}
		if s := next(blocksOf(t, "--percentage_random=0")); s != 1 {
			t.Errorf("percentage_random=0: %.0f%% of the reads follow the one before, want all", s*100)
		}
		if s := next(blocksOf(t, "--percentage_random=50")); s < 0.35 || s > 0.65 {
			t.Errorf("percentage_random=50: %.0f%% of the reads follow the one before, want about half", s*100)
		}
		if s := next(blocksOf(t)); s > 0.05 {
			t.Errorf("percentage_random=100: %.0f%% of the reads follow the one before", s*100)
		}
	}
	effects["allrandrepeat"] = func(t *testing.T) {
		if a, b := blocksOf(t, "--randrepeat=0"), blocksOf(t, "--randrepeat=0"); slices.Equal(a, b) {
			t.Error("randrepeat=0: two runs read the same blocks")
		}
		if a, b := blocksOf(t, "--randrepeat=0", "--allrandrepeat=1"), blocksOf(t, "--randrepeat=0", "--allrandrepeat=1"); !slices.Equal(a, b) {
			t.Error("allrandrepeat=1: two runs read different blocks")
		}
	}
}

// tracedOffsets runs bin under strace and returns, for each of its
// threads that did I/O on path, its reads and writes of bs bytes in order
// ("r4096 w8192 …"), sorted.
func tracedOffsets(t *testing.T, env []string, path string, bs int, bin string, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("strace", append([]string{"-ff", "-qq", "-e", "trace=pread64,pwrite64", "-e", "signal=none", "-P", path,
		"-o", filepath.Join(dir, "t"), bin}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%.2000s", bin, args, err, out)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "t.*"))
	re := regexp.MustCompile(`^p(read|write)64\(\d+, .*, (\d+), (\d+)\)`)
	var out []string
	for _, tr := range traces {
		b, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		var ios []string
		for l := range strings.SplitSeq(string(b), "\n") {
			if m := re.FindStringSubmatch(l); m != nil && m[2] == strconv.Itoa(bs) {
				ios = append(ios, m[1][:1]+m[3])
			}
		}
		if len(ios) > 0 {
			out = append(out, strings.Join(ios, " "))
		}
	}
	slices.Sort(out)
	return out
}

// TestPatternMatchesFio runs jobs side by side with fio 3.33 on the same
// file and compares every offset of every job thread, and of a mixed job
// each I/O's direction too.
func TestPatternMatchesFio(t *testing.T) {
	fio := lookFio(t)
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	for _, args := range [][]string{
		{"--rw=randread"},
		{"--rw=randwrite", "--io_size=2m"}, // each pass re-seeded: the same order again
		{"--rw=randread", "--random_generator=lfsr", "--io_size=2m"},
		{"--rw=randread", "--random_generator=tausworthe64", "--norandommap"},
		{"--rw=randread", "--randrepeat=0", "--randseed=1234", "--io_size=2m"}, // not re-seeded
		{"--rw=randread", "--randseed=1234"},                                   // fio 3.33: offsets as without randseed
		{"--rw=randread", "--randrepeat=0", "--allrandrepeat=1"},
		{"--rw=randread", "--random_distribution=zipf:1.2:0.3", "--io_size=2m"},
		{"--rw=randread", "--random_distribution=pareto:0.3", "--randseed=7", "--randrepeat=0"},
		{"--rw=randread", "--random_distribution=normal:10:0.2"},
		{"--rw=randread", "--random_distribution=zoned:60/10:30/20:8/30:2/40"},
		{"--rw=randread", "--random_distribution=zoned_abs:60/128k:40/768k", "--bs=8k"},
		{"--rw=randread", "--percentage_random=30", "--io_size=2m"},
		{"--rw=randwrite", "--percentage_random=40", "--random_generator=lfsr", "--offset=256k"},
		{"--rw=randread", "--numjobs=2", "--size=256k", "--random_distribution=pareto:0.2"},
		{"--rw=randrw"},
		{"--rw=randrw", "--rwmixread=70", "--io_size=2m", "--numjobs=2"},
		{"--rw=rw", "--rwmixread=30"},
		{"--rw=randrw:3", "--percentage_random=60,20", "--random_generator=tausworthe64"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			path := file(t, 1<<20)
			bs := 4096
			if slices.Contains(args, "--bs=8k") {
				bs = 8192
			}
			job := append([]string{"--name=e", "--filename=" + path, "--ioengine=psync"}, args...)
			want := tracedOffsets(t, nil, path, bs, fio, job...)
			got := tracedOffsets(t, []string{"IOLAB_EFFECT_JOB=1"}, path, bs, os.Args[0], job...)
			if len(want) == 0 || !slices.Equal(got, want) {
				g, w := strings.Fields(strings.Join(got, " | ")), strings.Fields(strings.Join(want, " | "))
				i := 0
				for i < min(len(g), len(w)) && g[i] == w[i] {
					i++
				}
				t.Errorf("iolab's offsets differ from fio's from I/O %d of %d (fio %d):\n iolab %.300v\n   fio %.300v",
					i, len(g), len(w), g[i:], w[i:])
			}
		})
	}
}

// TestPatternValuesAgreeWithFio checks which values of the pattern
// options fio 3.33 takes (fio --parse-only) against iolab, which takes the
// same ones but for a few fio misreads.
func TestPatternValuesAgreeWithFio(t *testing.T) {
	fio := lookFio(t)
	for _, tc := range []struct {
		option, value string
		fio, iolab    bool
	}{
		{"random_distribution", "random", true, true},
		{"random_distribution", "zipf", true, true},
		{"random_distribution", "zipf:1.2:0.25", true, true},
		{"random_distribution", "zipf:1", false, false},
		{"random_distribution", "zipf:1.2:2", false, false},
		{"random_distribution", "zipf:1.2,pareto:0.3", false, false},
		{"random_distribution", "zipf:abc", false, false},
		{"random_distribution", "zipf:1.2x", true, false}, // fio reads 1.2 and drops the rest
		{"random_distribution", "zipf:-1", true, false},   // fio's zeta sum grows without bound
		{"random_distribution", "random:5", true, false},  // fio ignores the value
		{"random_distribution", "pareto:0.5", true, true},
		{"random_distribution", "pareto:1", false, false},
		{"random_distribution", "normal:99.9:0", true, true},
		{"random_distribution", "normal:100", false, false},
		{"random_distribution", "zoned:60/10:30/20:8/30:2/40", true, true},
		{"random_distribution", "zoned:60/10:40", true, true},
		{"random_distribution", "zoned:50/10:40/20", false, false},
		{"random_distribution", "zoned:60/10:40/200", false, false},
		{"random_distribution", "zoned:60/10:40/20,50/50:50/50", false, false},
		{"random_distribution", "zoned_abs:60/20g:40/100g", true, true},
		{"random_distribution", "foo", false, false},
		{"random_generator", "tausworthe", true, true},
		{"random_generator", "lfsr", true, true},
		{"random_generator", "tausworthe64", true, true},
		{"random_generator", "mt", false, false},
		{"percentage_random", "0", true, true},
		{"percentage_random", "50,20", true, true},
		{"percentage_random", "50,20,10", true, true},
		{"percentage_random", "101", false, false},
		{"percentage_random", "1k", false, false},
		{"percentage_random", "50%", true, false}, // fio stores 2^64-51
		{"allrandrepeat", "1", true, true},
		{"allrandrepeat", "2", false, false},
	} {
		t.Run(tc.option+"="+tc.value, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(fio, "--parse-only", "--name=e", "--filename=/dev/null", "--rw=randread", "--"+tc.option+"="+tc.value).CombinedOutput()
			if fioOK := err == nil && !strings.Contains(string(out), "fio: "); fioOK != tc.fio {
				t.Errorf("fio takes it: %v, want %v\n%s", fioOK, tc.fio, out)
			}
			_, err = ParseArgs([]string{"--name=e", "--filename=/dev/null", "--rw=randread", "--" + tc.option + "=" + tc.value})
			if (err == nil) != tc.iolab {
				t.Errorf("iolab takes it: %v (%v), want %v", err == nil, err, tc.iolab)
			}
		})
	}
}
