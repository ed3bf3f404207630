package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"iolab/bench/fio"
)

func TestVersionText(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"clean", []debug.BuildSetting{{Key: "vcs.revision", Value: "2516a79c"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "false"}},
			"commit 2516a79c of 2026-11-30T12:00:00Z\n"},
		{"modified", []debug.BuildSetting{{Key: "vcs.revision", Value: "2516a79c"}, {Key: "vcs.modified", Value: "true"}},
			"commit 2516a79c, with uncommitted changes\n"},
		{"no vcs", nil, "commit unknown (not recorded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := versionText(&debug.BuildInfo{GoVersion: "go1.99.1", Settings: tt.settings})
			want := fio.Version + "\n"
			if !strings.HasPrefix(got, want) || !strings.Contains(got, "\n"+tt.want) ||
				!strings.HasSuffix(got, "\ngo1.99.1 "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
				t.Errorf("got\n%s\nwant %q, then %q, then go1.99.1", got, want, tt.want)
			}
		})
	}
	if got := versionText(nil); !strings.Contains(got, "commit unknown") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("without build information:\n%s", got)
	}
}

// TestVersionOfABuild: a binary go build makes in this checkout names its
// commit and says whether the tree had changes; it answers --version alike.
// Go reads the commit only from a .git directory: in a git worktree (whose
// .git is a file) it records none, and the version says so.
func TestVersionOfABuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds iolab")
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			t.Skipf("git %s: %v (not in a git checkout?)", strings.Join(args, " "), err)
		}
		return string(out)
	}
	head, status := strings.TrimSpace(git("rev-parse", "HEAD")), git("status", "--porcelain")
	fi, err := os.Stat(filepath.Join(strings.TrimSpace(git("rev-parse", "--show-toplevel")), ".git"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "iolab")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "iolab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := string(out)
	if !strings.HasPrefix(version, fio.Version+"\n") || !strings.Contains(version, "\n"+runtime.Version()+" ") {
		t.Errorf("iolab version:\n%s\nwant %s and %s", version, fio.Version, runtime.Version())
	}
	if !fi.IsDir() {
		if !strings.Contains(version, "commit unknown") {
			t.Errorf("built in a worktree, iolab version:\n%s\nwant commit unknown", version)
		}
	} else {
		if !strings.Contains(version, "\ncommit "+head+" of ") {
			t.Errorf("iolab version:\n%s\nwant commit %s", version, head)
		}
		if modified := status != ""; strings.Contains(version, "uncommitted") != modified {
			t.Errorf("iolab version:\n%s\nbut git status --porcelain says %q", version, status)
		}
	}
	again, err := exec.Command(bin, "--version").Output()
	if err != nil || string(again) != version {
		t.Errorf("iolab --version: %v\n%s", err, again)
	}
}
