package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// textTable is a table for the terminal: columns two spaces apart, each
// aligned left (text) or right (numbers, so that "3.78ms" and "142µs"
// end in one column), widths counted in characters, not bytes.
type textTable struct {
	heads []string
	right []bool
	rows  [][]string
}

// column adds a column; right aligns it to the right.
func (t *textTable) column(head string, right bool) {
	t.heads = append(t.heads, head)
	t.right = append(t.right, right)
}

// row adds a row; missing cells are blank.
func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

// widths is each column's width: its widest cell or head.
func (t *textTable) widths() []int {
	w := make([]int, len(t.heads))
	for _, r := range append([][]string{t.heads}, t.rows...) {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	return w
}

// width is how wide the table prints: its widest line.
func (t *textTable) width() int {
	n := 0
	for _, w := range t.widths() {
		n += w + 2
	}
	return max(0, n-2)
}

// write prints the table, its head first, without trailing spaces.
func (t *textTable) write(w io.Writer) error {
	widths := t.widths()
	var b strings.Builder
	for _, r := range append([][]string{t.heads}, t.rows...) {
		var line strings.Builder
		for i := range t.heads {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
