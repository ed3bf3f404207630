package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s)
				continue
			}
			b.WriteString("line " + string(rune('a'+i-1)) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name, a, b, want string
	}{
		{"same", "x\ny\n", "x\ny\n", ""},
		{"empty to one line", "", "x\n", "@@ line 1 @@\n+x\n"},
		{"changed line in the middle", lines(12, nil), lines(12, map[int]string{6: "LINE F\n"}),
			"@@ line 3 @@\n line c\n line d\n line e\n-line f\n+LINE F\n line g\n line h\n line i\n"},
		{"two changes close together make one hunk", lines(12, nil), lines(12, map[int]string{2: "", 7: ""}),
			"@@ line 1 @@\n line a\n-line b\n line c\n line d\n line e\n line f\n-line g\n line h\n line i\n line j\n"},
		{"two changes far apart make two hunks", lines(20, nil), lines(20, map[int]string{2: "", 19: "x\n"}),
			"@@ line 1 @@\n line a\n-line b\n line c\n line d\n line e\n" +
				"@@ line 16 @@\n line p\n line q\n line r\n-line s\n+x\n line t\n"},
		{"inserted line", "a\nb\n", "a\nnew\nb\n", "@@ line 1 @@\n a\n+new\n b\n"},
		{"missing final newline", "a\nb\n", "a\nb", "@@ line 1 @@\n a\n-b\n+b\n\\ no newline at end\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff(tt.a, tt.b); got != tt.want {
				t.Errorf("Diff =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestCheckUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "out.txt")
	Check(t, true, path, []byte("one\ntwo\n"))
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "one\ntwo\n" {
		t.Fatalf("after update: %q, %v", data, err)
	}
	Check(t, false, path, []byte("one\ntwo\n"))
}
