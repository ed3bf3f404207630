package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
)

// TestPolicyLaysOutOnlyAllowed: a runner under an allow-list lays out
// an allowed file that is not there yet (an --allow-target file, a file
// under the data directory) and refuses, before writing anything, one
// named beside them.
func TestPolicyLaysOutOnlyAllowed(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(dir, "img", "named.img") // its directory not made yet either
	a := AllowList{Targets: []string{named}, DataDir: data, Whose: "this agent's"}
	rn := &bench.Runner{Sys: system.FS{}, Policy: a.Policy}
	for _, tc := range []struct {
		path string
		ok   bool
	}{{named, true}, {filepath.Join(data, "f"), true}, {filepath.Join(dir, "img", "other.img"), false}, {filepath.Join(dir, "g"), false}} {
		cfg, err := fio.ParseArgs([]string{"--name=l", "--filename=" + tc.path, "--rw=read", "--ioengine=psync", "--size=64k"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rn.Prepare(cfg)
		_, statErr := os.Stat(tc.path)
		switch {
		case tc.ok && (err != nil || statErr != nil):
			t.Errorf("%s: %v (%v)", tc.path, err, statErr)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "is not on this agent's allow-list") || statErr == nil):
			t.Errorf("%s: %v, laid out: %v", tc.path, err, statErr == nil)
		}
	}
}
