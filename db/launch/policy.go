package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"iolab/bench"
	"iolab/bench/system"
)

// AllowList is what a front door that takes plans from others lets them
// use: the devices and files named (Targets, exact paths) and regular
// files inside DataDir. The dashboard has one for its web runs, an agent
// one for the runs its dashboard sends.
type AllowList struct {
	Targets []string
	DataDir string
	// Whose names the list in refusals: "this server's", "agent lab-a's".
	Whose string
}

// Policy is a bench.Runner's Policy for the list: a target, resolved,
// must be an allowed device or file (also resolved), or a regular file
// inside the data directory. It is asked again as each step prepares its
// targets, so a file swapped for a symlink to a device after the plan
// was checked is refused then.
func (a AllowList) Policy(t system.Target) error {
	for _, p := range a.Targets {
		r, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			// An allowed file not there yet: where laying it out makes it.
			r, err = bench.PlannedPath(p)
		}
		if err == nil && r == t.Resolved {
			return nil
		}
	}
	if a.DataDir != "" && !t.IsBlock {
		if dir, err := filepath.EvalSymlinks(a.DataDir); err == nil && Within(dir, t.Resolved) {
			return nil
		}
	}
	name := t.Path
	if t.Resolved != t.Path {
		name += " (→ " + t.Resolved + ")"
	}
	return fmt.Errorf("%s is not on %s allow-list (it may have changed since the run was queued)", name, a.Whose)
}

// Within reports whether p is strictly inside dir (both clean, absolute):
// the allow-list's "inside the data directory".
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
