package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// TestRunsFilters: iolab runs keeps the runs its flags match, in the
// order --sort asks, --limit of them with where they stand and the
// --after of the next ones; a flag it cannot take is refused by name.
func TestRunsFilters(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "runs.db")
	store := openTestStore(t, dbPath)
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.Local)
	for i := range 12 {
		r := &db.Run{Name: fmt.Sprintf("cli-%02d", i), Status: db.StatusDone, Created: base.Add(time.Duration(i) * time.Hour),
			Hostname: fmt.Sprintf("lab%d", i%2), Engines: []string{"io_uring"},
			Plan: sweep.Plan{Base: bench.Config{Jobs: []bench.Job{{Name: "j", RW: "randread", BS: 4096}}}}}
		if i%3 == 0 {
			r.Tags = []string{"nightly"}
		}
		if _, err := store.CreateRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	names := regexp.MustCompile(`cli-\d\d`)
	for _, tt := range []struct {
		args       []string
		want, tail string
	}{
		{nil, "cli-11 cli-10 cli-09 cli-08 cli-07 cli-06 cli-05 cli-04 cli-03 cli-02 cli-01 cli-00", ""},
		{[]string{"--host", "lab1", "--tag", "nightly"}, "cli-09 cli-03", ""},
		{[]string{"--since", "2026-11-01T20:00", "--until", "2026-11-01T22:00"}, "cli-09 cli-08", ""},
		{[]string{"--until", "2026-11-01"}, "cli-11 cli-10 cli-09 cli-08 cli-07 cli-06 cli-05 cli-04 cli-03 cli-02 cli-01 cli-00", ""},
		{[]string{"--name", "CLI-1", "--sort", "name"}, "cli-10 cli-11", ""},
		{[]string{"--engine", "io_uring", "--sort=-name", "--limit", "3"}, "cli-11 cli-10 cli-09", "runs 1–3 of 12; the next: --after "},
		{[]string{"--host", "lab0", "--limit", "6"}, "cli-10 cli-08 cli-06 cli-04 cli-02 cli-00", "runs 1–6 of 6\n"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(append([]string{"runs", "--db", dbPath}, tt.args...), &out, &errOut); err != nil {
				t.Fatalf("%v: %s", err, errOut.String())
			}
			if got := strings.Join(names.FindAllString(out.String(), -1), " "); got != tt.want {
				t.Errorf("got %s, want %s\n%s", got, tt.want, out.String())
			}
			if !strings.Contains(errOut.String(), tt.tail) || (tt.tail == "" && errOut.Len() > 0) {
				t.Errorf("stderr %q, want %q", errOut.String(), tt.tail)
			}
			// The next page is where the line says.
			if after, ok := strings.CutPrefix(strings.TrimSpace(errOut.String()), "runs 1–3 of 12; the next: --after "); ok {
				out.Reset()
				errOut.Reset()
				if err := run(append([]string{"runs", "--db", dbPath, "--after", after}, tt.args...), &out, &errOut); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(names.FindAllString(out.String(), -1), " "); got != "cli-08 cli-07 cli-06" || !strings.Contains(errOut.String(), "runs 4–6 of 12") {
					t.Errorf("the next page: %s, %q", got, errOut.String())
				}
			}
		})
	}
	for _, tt := range []struct{ flag, want string }{
		{"--status=bogus", `--status: "bogus" is not a status`},
		{"--sort=size", `--sort: "size": use one of date, name, host, status`},
		{"--since=soon", `--since: "soon" is not a time`},
		{"--limit=-2", "--limit -2: want 0 (all) or more"},
		{"--after=junk", `--after: cursor "junk"`},
	} {
		var out, errOut bytes.Buffer
		err := run([]string{"runs", "--db", dbPath, tt.flag}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error()+errOut.String(), tt.want) {
			t.Errorf("%s: %v %s, want %q", tt.flag, err, errOut.String(), tt.want)
		}
	}
}
