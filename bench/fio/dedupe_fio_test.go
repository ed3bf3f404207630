package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestDedupeMatchesFio writes the same jobs with fio and with iolab — each
// dedupe mode, and two jobs sharing a working set as fio's
// examples/dedupe-global.fio has them — and hands every file, and both
// jobs' files one after the other, to fio-dedupe (Debian's fio package,
// fio's t/dedupe.c), which counts the distinct 4 KiB blocks and the blocks
// that occur more than once: what a deduplicating device would store. Both
// tools draw their repeats at random with fixed seeds, so each side's
// counts are the same every run; they must agree within 4 % of the blocks
// (the spread of the draws over 2,048 blocks is about 1 %).
func TestDedupeMatchesFio(t *testing.T) {
	fioBin := lookFio(t)
	tool, err := exec.LookPath("fio-dedupe")
	if err != nil {
		t.Fatalf("fio-dedupe is not installed (it comes with fio: apt-get install -y fio): %v", err)
	}
	for _, tc := range []struct {
		name string
		opts []string
		jobs []string
	}{
		{"repeat", []string{"--dedupe_percentage=50"}, []string{"a"}},
		{"working_set", []string{"--dedupe_percentage=40", "--dedupe_mode=working_set", "--dedupe_working_set_percentage=30",
			"--buffer_compress_percentage=50"}, []string{"a"}},
		{"dedupe_global", []string{"--dedupe_percentage=50", "--dedupe_mode=working_set", "--dedupe_working_set_percentage=50",
			"--dedupe_global=1", "--buffer_compress_percentage=50"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--ioengine=libaio", "--iodepth=16", "--rw=write", "--bs=4k", "--size=8m"}, tc.opts...)
			for _, j := range tc.jobs {
				args = append(args, "--name="+j)
			}
			// Each tool writes fio's default files, a.0.0 and b.0.0, in a
			// directory of its own.
			fioDir, iolabDir := t.TempDir(), t.TempDir()
			runFio(t, fioBin, fioDir, append([]string{"--thread"}, args...)...)
			t.Chdir(iolabDir)
			run(t, args...)
			var files []string
			for _, j := range tc.jobs {
				files = append(files, j+".0.0")
			}
			if len(files) > 1 {
				files = append(files, "all")
				for _, dir := range []string{fioDir, iolabDir} {
					var all []byte
					for _, f := range files[:len(files)-1] {
						b, err := os.ReadFile(filepath.Join(dir, f))
						if err != nil {
							t.Fatal(err)
						}
						all = append(all, b...)
					}
					if err := os.WriteFile(filepath.Join(dir, "all"), all, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, f := range files {
				want, got := dedupeCounts(t, tool, filepath.Join(fioDir, f)), dedupeCounts(t, tool, filepath.Join(iolabDir, f))
				if want.blocks != got.blocks {
					t.Fatalf("%s: fio wrote %d blocks, iolab %d", f, want.blocks, got.blocks)
				}
				n := float64(want.blocks)
				if d := float64(got.distinct-want.distinct) / n; d > 0.04 || d < -0.04 {
					t.Errorf("%s: distinct blocks: fio %d, iolab %d of %d", f, want.distinct, got.distinct, want.blocks)
				}
				if d := float64(got.repeated-want.repeated) / n; d > 0.04 || d < -0.04 {
					t.Errorf("%s: blocks that repeat: fio %d, iolab %d of %d", f, want.repeated, got.repeated, want.blocks)
				}
				t.Logf("%s of %d blocks: distinct fio %d, iolab %d; repeated fio %d, iolab %d", f, want.blocks, want.distinct, got.distinct, want.repeated, got.repeated)
			}
		})
	}
}

type dedupeStat struct{ blocks, distinct, repeated int }

// dedupeCounts runs fio-dedupe on path with 4 KiB blocks and a full
// collision check (-c 1: its counts are of distinct contents, not of
// hashes).
func dedupeCounts(t *testing.T, tool, path string) dedupeStat {
	t.Helper()
	out, err := exec.Command(tool, "-b", "4096", "-c", "1", path).CombinedOutput()
	if err != nil {
		t.Fatalf("fio-dedupe %s: %v\n%s", path, err, out)
	}
	m := regexp.MustCompile(`Extents=(\d+), Unique extents=(\d+) Duplicated extents=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("fio-dedupe %s printed no counts:\n%s", path, out)
	}
	var s dedupeStat
	for i, p := range []*int{&s.blocks, &s.distinct, &s.repeated} {
		*p, _ = strconv.Atoi(string(m[i+1]))
	}
	return s
}
