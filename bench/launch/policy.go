package launch

import (
	"path/filepath"
	"strings"

	"iolab/bench/guard"
)

// AllowList is what a front door that takes plans from others lets them
// use: the devices and files named (Targets, absolute paths) and regular
// files inside DataDir. The dashboard has one for its web runs, an agent
// one for the runs its dashboard sends.
type AllowList struct {
	Targets []string
	DataDir string
	// Whose names the list in refusals: "this server's", "agent lab-a's".
	Whose string
}

// Guard pins the list (guard.New) for the runners of the front door: each
// allowed device by its device number, each file by its inode, each
// symlink by what it points to now, the data directory by a descriptor.
// Build it once, at the front door's start: an allowed device that does
// not exist is an error then, and what an entry is later no longer
// changes what was allowed.
func (a AllowList) Guard() (*guard.Guard, error) {
	return guard.New(a.Targets, a.DataDir, a.Whose)
}

// Within reports whether p is strictly inside dir (both clean, absolute):
// the allow-list's "inside the data directory".
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
