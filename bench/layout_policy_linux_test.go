package bench_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/guard"
	"iolab/bench/system"
)

// TestLayOutOnlyWhereGuardAllows: a runner with a restricted guard (an
// agent's allow-list, a dashboard's) lays out no file the guard refuses:
// none is made where it is missing, a shorter file is not replaced, and
// a symlinked directory inside the data directory is not followed out of
// it. One the guard allows is laid out, in directories not made yet too.
func TestLayOutOnlyWhereGuardAllows(t *testing.T) {
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
	g, err := guard.New(nil, allowed, "this test's")
	if err != nil {
		t.Fatal(err)
	}
	rn := &bench.Runner{Sys: system.FS{}, Guard: g}
	prepare := func(path string) error {
		cfg, err := fio.ParseArgs([]string{"--name=l", "--filename=" + path, "--rw=read", "--ioengine=psync", "--size=1m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = rn.Prepare(cfg)
		return err
	}
	for _, refused := range []string{filepath.Join(outside, "new"), short, filepath.Join(link, "through-link")} {
		err := prepare(refused)
		var re *guard.RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), refused) || !strings.Contains(err.Error(), "this test's allow-list") {
			t.Errorf("%s: %v; want a refusal naming it and the allow-list", refused, err)
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
