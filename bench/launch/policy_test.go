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

// TestAllowListLaysOutOnlyAllowed: a runner under an allow-list lays
// out an allowed file that is not there yet (an --allow-target file whose
// directory exists, a file under the data directory) and refuses, before
// writing anything, one named beside them.
func TestAllowListLaysOutOnlyAllowed(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(dir, "data")
	img := filepath.Join(dir, "img")
	for _, d := range []string{data, img} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(img, "named.img")
	g, err := AllowList{Targets: []string{named}, DataDir: data, Whose: "this agent's"}.Guard()
	if err != nil {
		t.Fatal(err)
	}
	rn := &bench.Runner{Sys: system.FS{}, Guard: g}
	for _, tc := range []struct {
		path string
		ok   bool
	}{{named, true}, {filepath.Join(data, "f"), true}, {filepath.Join(img, "other.img"), false}, {filepath.Join(dir, "g"), false}} {
		cfg, err := fio.ParseArgs([]string{"--name=l", "--filename=" + tc.path, "--rw=read", "--ioengine=psync", "--size=64k"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rn.Prepare(cfg)
		_, statErr := os.Stat(tc.path)
		switch {
		case tc.ok && (err != nil || statErr != nil):
			t.Errorf("%s: %v (%v)", tc.path, err, statErr)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "not on this agent's allow-list") || statErr == nil):
			t.Errorf("%s: %v, laid out: %v", tc.path, err, statErr == nil)
		}
	}
}

// TestAllowListMissing: an allowed device that does not exist is an
// error when the list is pinned, saying so (and not suggesting a size);
// nothing is made in /dev. An allowed file whose directory is missing is
// an error too.
func TestAllowListMissing(t *testing.T) {
	gone := "/dev/iolab-gone-test"
	_, err := AllowList{Targets: []string{gone}, Whose: "this server's"}.Guard()
	if err == nil || !strings.Contains(err.Error(), gone+" does not exist") || strings.Contains(err.Error(), "size") {
		t.Errorf("allowing %s: %v; want a missing-device error", gone, err)
	}
	if _, err := os.Lstat(gone); err == nil {
		t.Errorf("%s was made", gone)
	}
	nodir := filepath.Join(t.TempDir(), "nodir", "f.img")
	if _, err := (AllowList{Targets: []string{nodir}}).Guard(); err == nil || !strings.Contains(err.Error(), "create the directory") {
		t.Errorf("allowing %s: %v", nodir, err)
	}
}
