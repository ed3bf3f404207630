// Package golden pins a test's output to a file under testdata/, as
// gofmt's and pkgsite's tests do: the test fails with a line diff when the
// output changes, and `go test -update` rewrites the files instead, to be
// read and committed like any other change.
//
// The -update flag itself is declared by each test package (flags live in
// the test files, not in library code) and passed to Check.
package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path. With update it writes got to
// path (creating its directory) instead and passes.
func Check(t testing.TB, update bool, path string, got []byte) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (- golden, + got; go test -update rewrites it):\n%s", path, Diff(string(want), string(got)))
	}
}

// context is how many unchanged lines Diff shows around a change.
const context = 3

// Diff returns a line diff from a to b: lines only in a start with "-",
// lines only in b with "+", unchanged ones around them with " ", and each
// run of changes is headed by "@@ line N @@", N counting a's lines from 1.
// A line that differs only by its missing final newline is shown with
// "\ no newline at end".
func Diff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	ops := lineOps(x, y)
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before this change to context lines
		// after the last change that is no more than 2×context lines on.
		start := max(0, i-context)
		end := i
		for j := i; j < len(ops) && j-end <= 2*context; j++ {
			if ops[j].kind != ' ' {
				end = j
			}
		}
		stop := min(len(ops), end+context+1)
		fmt.Fprintf(&out, "@@ line %d @@\n", ops[start].line)
		for _, op := range ops[start:stop] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ no newline at end\n")
			}
		}
		i = stop
	}
	return out.String()
}

type lineOp struct {
	kind byte   // ' ', '-' or '+'
	text string // with its newline, if it had one
	line int    // the line of a at or after this one, from 1
}

// lineOps is the edit script from x to y along a longest common
// subsequence of lines. Golden files are small and their changes few, so
// the common head and tail are cut off first and the quadratic table is
// only built for what lies between.
func lineOps(x, y []string) []lineOp {
	head := 0
	for head < len(x) && head < len(y) && x[head] == y[head] {
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	mx, my := x[head:len(x)-tail], y[head:len(y)-tail]
	// lcs[i][j] is the length of the longest common subsequence of mx[i:]
	// and my[j:].
	lcs := make([][]int, len(mx)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(my)+1)
	}
	for i := len(mx) - 1; i >= 0; i-- {
		for j := len(my) - 1; j >= 0; j-- {
			if mx[i] == my[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	for k := range head {
		ops = append(ops, lineOp{' ', x[k], k + 1})
	}
	i, j := 0, 0
	for i < len(mx) || j < len(my) {
		switch {
		case i < len(mx) && j < len(my) && mx[i] == my[j]:
			ops = append(ops, lineOp{' ', mx[i], head + i + 1})
			i++
			j++
		case i < len(mx) && (j == len(my) || lcs[i+1][j] >= lcs[i][j+1]):
			// Deletions first, so a changed line reads "-old" then "+new".
			ops = append(ops, lineOp{'-', mx[i], head + i + 1})
			i++
		default:
			ops = append(ops, lineOp{'+', my[j], head + i + 1})
			j++
		}
	}
	for k := len(x) - tail; k < len(x); k++ {
		ops = append(ops, lineOp{' ', x[k], k + 1})
	}
	return ops
}

// splitLines splits s after each newline; a last line without one is kept
// as it is.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
