package bench_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
)

// TestLayOutAsksPolicyFirst: a runner with a policy (an agent's
// allow-list, a dashboard's) lays out no file the policy refuses: none
// is made where it is missing, and a shorter file is not replaced. One
// the policy allows is laid out, in directories not made yet too, and
// the policy is asked about where the file will be (its directory
// resolved), not the path as written.
func TestLayOutAsksPolicyFirst(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	allowed, outside := filepath.Join(dir, "allowed"), filepath.Join(dir, "outside")
	for _, d := range []string{allowed, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(allowed, "link") // allowed/link → outside
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(outside, "short")
	if err := os.WriteFile(short, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	rn := &bench.Runner{Sys: system.FS{}, Policy: func(t system.Target) error {
		asked = append(asked, t.Resolved)
		if strings.HasPrefix(t.Resolved, allowed+"/") {
			return nil
		}
		return errors.New(t.Resolved + " is not on the allow-list")
	}}
	prepare := func(path string) error {
		cfg, err := fio.ParseArgs([]string{"--name=l", "--filename=" + path, "--rw=read", "--ioengine=psync", "--size=1m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rn.Prepare(cfg)
		return err
	}
	for _, refused := range []string{filepath.Join(outside, "new"), short, filepath.Join(link, "through-link")} {
		asked = nil
		err := prepare(refused)
		if err == nil || !strings.Contains(err.Error(), "is not on the allow-list") {
			t.Errorf("%s: %v", refused, err)
		}
		if len(asked) == 0 || strings.HasPrefix(asked[0], allowed+"/") {
			t.Errorf("%s: the policy was asked about %q", refused, asked)
		}
	}
	for _, p := range []string{filepath.Join(outside, "new"), filepath.Join(outside, "through-link")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was laid out (%v)", p, err)
		}
	}
	if b, err := os.ReadFile(short); err != nil || string(b) != "keep me" {
		t.Errorf("the shorter file outside is now %d bytes (%v)", len(b), err)
	}
	inside := filepath.Join(allowed, "sub", "dir", "f")
	if err := prepare(inside); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(inside); err != nil || st.Size() != 1<<20 {
		t.Fatalf("%s: %v %v", inside, st, err)
	}
}
