package db

import (
	"context"
	"testing"
)

// The list's version moves with every commit, this store's writer's and
// another store's on the file, and stays while nothing is committed;
// a held connection opened again starts another count, and so another
// version, even where data_version's own count repeats.
func TestListVersion(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	version := func() string {
		t.Helper()
		v, err := s.ListVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	seen := map[string]string{}
	prev := version()
	if again := version(); again != prev {
		t.Fatalf("nothing committed: %s, then %s", prev, again)
	}
	seen[prev] = "the start"
	var id int64
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"a run created here", func() (err error) { id, err = s.CreateRun(ctx, testRun()); return err }},
		{"a status set by another store", func() error { return other.SetRunStatus(ctx, id, StatusDone, "") }},
		{"a tag set here", func() error { _, err := s.SetTags(ctx, id, []string{"x"}); return err }},
		{"the held connection opened again", func() error { s.listCache.close(); return nil }},
		{"a run deleted by another store", func() error { return other.DeleteRun(ctx, id) }},
	} {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		v := version()
		if was, ok := seen[v]; ok {
			t.Errorf("%s: version %s, as after %s", c.name, v, was)
		}
		seen[v] = c.name
	}
}
