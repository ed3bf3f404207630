package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/db"
	"iolab/db/dbtest"
)

// pruneStore stores six runs of host lab-7 (dbtest.Host): ids 1–5 done,
// 1, 2 and 3 a hundred days old (1 tagged scratch, 2 failed), 4 and 5
// new; 6 a hundred days old and still running. It returns the store's
// path.
func pruneStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prune.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	old := time.Now().Add(-100 * 24 * time.Hour)
	dbtest.Store(t, store,
		dbtest.Run{Name: "scratch", Created: old, Tags: []string{"scratch"}},
		dbtest.Run{Name: "broken", Status: db.StatusFailed, Created: old.Add(time.Hour)},
		dbtest.Run{Name: "old", Created: old.Add(2 * time.Hour)},
		dbtest.Run{Name: "new", Created: time.Now().Add(-time.Hour)},
		dbtest.Run{Name: "newest", Created: time.Now()},
		dbtest.Run{Name: "long", Status: db.StatusRunning, Created: old.Add(3 * time.Hour)})
	return path
}

func storedIDs(t *testing.T, path string) []int64 {
	t.Helper()
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return dbtest.IDs(t, store)
}

// TestPruneCommand: a dry run lists what would go and deletes nothing;
// --delete deletes exactly that and says what the file gave back; a
// running run stays, and --explain says why.
func TestPruneCommand(t *testing.T) {
	path := pruneStore(t)
	code, out, stderr := runOut(t, "prune", "--db", path, "--older-than", "90d", "--explain")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"\n1   scratch", "\n2   broken", "\n3   old", "would go: 3 runs, about ",
		"; 1 matched but stay\n", "\n6     long", "it is running", "dry run: nothing deleted; add --delete"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: no %q in\n%s", want, out)
		}
	}
	if got := storedIDs(t, path); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("a dry run deleted: %v left", got)
	}
	// The same with --dry-run; --dry-run with --delete is refused.
	if code, out2, _ := runOut(t, "prune", "--db", path, "--older-than", "90d", "--explain", "--dry-run"); code != 0 || out2 != out {
		t.Errorf("--dry-run: %d\n%s", code, out2)
	}
	if code, _, _ := runOut(t, "prune", "--db", path, "--older-than", "90d", "--dry-run", "--delete"); code != 2 {
		t.Errorf("--dry-run --delete: exit %d, want 2", code)
	}

	code, out, stderr = runOut(t, "prune", "--db", path, "--status", "failed", "--tag", "scratch")
	if code != 0 || !strings.Contains(out, "would go: 0 runs") {
		t.Errorf("failed and tagged scratch: none is both: %d %s%s", code, out, stderr)
	}

	code, out, stderr = runOut(t, "prune", "--db", path, "--older-than", "90d", "--keep", "3", "--delete")
	if code != 0 {
		t.Fatal(stderr)
	}
	// keep 3 of the one host and workload: 5, 4 and 3 are the newest
	// finished runs; 6 is running.
	for _, want := range []string{"to delete: 2 runs", "deleted 2 runs", "store on disk (file and write-ahead log): ", "auto_vacuum incremental"} {
		if !strings.Contains(out, want) {
			t.Errorf("delete: no %q in\n%s", want, out)
		}
	}
	if got := storedIDs(t, path); !slices.Equal(got, []int64{3, 4, 5, 6}) {
		t.Errorf("after --delete: %v, want 3 4 5 6", got)
	}
	if code, out, stderr = runOut(t, "prune", "--db", path, "--vacuum"); code != 0 || !strings.Contains(out, "store on disk (file and write-ahead log): ") {
		t.Errorf("--vacuum: %d %s%s", code, out, stderr)
	}
}

func TestPruneCommandRefuses(t *testing.T) {
	path := pruneStore(t)
	for _, args := range [][]string{
		{},
		{"--older-than", "-90d"},
		{"--older-than", "90"},
		{"--older-than", "99999999999999999999d"},
		{"--keep", "-1"},
		{"--keep", "99999999999"},
		{"--status", "running'; DROP TABLE runs; --"},
		{"--tag", "x\x01"},
		{"--delete"},
		{"--older-than", "90d", "--vacuum"},
		{"--older-than", "90d", "extra"},
	} {
		code, _, stderr := runOut(t, append([]string{"prune", "--db", path}, args...)...)
		if code != 2 || !strings.Contains(stderr, "iolab") {
			t.Errorf("%q: exit %d, want 2 and why: %s", args, code, stderr)
		}
	}
	if got := storedIDs(t, path); len(got) != 6 {
		t.Errorf("refused prunes deleted runs: %v left", got)
	}
}
