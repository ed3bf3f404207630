package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// iolab report writes one HTML file with the run's charts as SVG, and
// refuses what it cannot do, leaving no file behind.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "iolab.db")
	if code, _, stderr := runOut(t, "run", "--db", dbPath, "--name=r", "--ioengine=null", "--size=4m", "--rw=randread", "--bs=4k",
		"--repeat=2", "--sweep", "iodepth=1,4"); code != 0 {
		t.Fatalf("run: %d\n%s", code, stderr)
	}
	out := filepath.Join(dir, "run1.html")
	code, stdout, stderr := runOut(t, "report", "--db", dbPath, "1", "-o", out)
	if code != 0 || !strings.Contains(stdout, "wrote "+out) {
		t.Fatalf("report: %d %s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if html := string(b); !strings.Contains(html, "<title>Run 1 · r</title>") || strings.Count(html, "<svg") < 3 || strings.Contains(html, "<script") {
		t.Errorf("report: %d SVGs, title or script wrong", strings.Count(html, "<svg"))
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"1"}, 2, "usage"},
		{[]string{"1", "2", "--axis", "ioengine", "-o", filepath.Join(dir, "x.html")}, 2, "give one run"},
		{[]string{"x", "-o", filepath.Join(dir, "x.html")}, 2, "not a run id"},
		{[]string{"9", "-o", filepath.Join(dir, "x.html")}, 1, "run 9"},
	} {
		code, stdout, stderr := runOut(t, append([]string{"report", "--db", dbPath}, tt.args...)...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("report %q: %d, want %d and %q:\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a refused report left a file")
	}
}
