package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/db"
)

// TestImportRulesAndEscapes: `iolab import` obeys the rules every write
// does (a name with ESC, a run still "running" are refused, nothing
// stored), and a name that reached the store before those rules is printed
// escaped by `iolab runs` and `iolab show`.
func TestImportRulesAndEscapes(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "i.db")
	var stdout, stderr bytes.Buffer
	cmd := func(args ...string) error {
		stdout.Reset()
		stderr.Reset()
		return run(args, &stdout, &stderr)
	}
	doc := func(name, status string) string {
		e := db.Export{Format: db.ExportFormat, Version: db.ExportVersion,
			Run: db.Run{Name: name, Status: status, Created: time.Unix(1_780_000_000, 0), Hostname: "lab"}}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "doc.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct{ name, status, want string }{
		{"evil\x1b[2J", db.StatusDone, "control characters"},
		{strings.Repeat("n", 10000), db.StatusDone, "longer than 200"},
		{"stuck", db.StatusRunning, "must have ended"},
	} {
		if err := cmd("import", "--db", dbPath, doc(tt.name, tt.status)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("import of %.20q (%s): %v, want an error saying %q", tt.name, tt.status, err, tt.want)
		}
	}
	if err := cmd("import", "--db", dbPath, doc("fine", db.StatusDone)); err != nil {
		t.Fatal(err)
	}
	// A name stored by an older iolab, before the rules.
	raw, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(context.Background(), `UPDATE runs SET name = ?, hostname = ?`, "a\x1b]0;pwned\x07\x00b", "h\x1b[31m"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, c := range []string{"runs", "show"} {
		args := []string{c, "--db", dbPath}
		if c == "show" {
			args = append(args, "1")
		}
		if err := cmd(args...); err != nil {
			t.Fatal(err)
		}
		if out := stdout.String(); strings.ContainsAny(out, "\x1b\x00\x07") || !strings.Contains(out, `a\x1b]0;pwned\a\x00b`) {
			t.Errorf("iolab %s prints raw control characters or lacks the escaped name:\n%q", c, out)
		}
	}
}
