package chart

import (
	"encoding/csv"
	"fmt"
	"io"
)

// WriteCSV writes the chart's table: its header row (with units), then
// the rows it plots, each cell through safeCell.
func WriteCSV(w io.Writer, c *Chart) error {
	cw := NewCSVWriter(w, c.Columns)
	if err := cw.Header(); err != nil {
		return fmt.Errorf("chart: write %s csv: %w", c.Kind, err)
	}
	for i, row := range c.Rows {
		if err := cw.Row(row); err != nil {
			return fmt.Errorf("chart: write %s csv: row %d has %w", c.Kind, i+1, err)
		}
	}
	if err := cw.Flush(); err != nil {
		return fmt.Errorf("chart: write %s csv: %w", c.Kind, err)
	}
	return nil
}

// CSVWriter writes a table's rows as they come, each checked against the
// header's width and each cell neutralised (SafeCell): every CSV the
// dashboard serves, the reports carry and the CLI writes goes through one.
type CSVWriter struct {
	cw      *csv.Writer
	columns []string
	cells   []string
}

// NewCSVWriter writes a table of columns to w.
func NewCSVWriter(w io.Writer, columns []string) *CSVWriter {
	return &CSVWriter{cw: csv.NewWriter(w), columns: columns}
}

// Header writes the header row.
func (w *CSVWriter) Header() error { return w.write(w.columns) }

// Row writes one row, which must have a cell per column.
func (w *CSVWriter) Row(cells []string) error {
	if len(cells) != len(w.columns) {
		return fmt.Errorf("%d fields for %d columns", len(cells), len(w.columns))
	}
	return w.write(cells)
}

func (w *CSVWriter) write(cells []string) error {
	w.cells = w.cells[:0]
	for _, c := range cells {
		w.cells = append(w.cells, SafeCell(c))
	}
	return w.cw.Write(w.cells)
}

// Flush writes what is buffered and reports any error so far.
func (w *CSVWriter) Flush() error {
	w.cw.Flush()
	return w.cw.Error()
}

// SafeCell keeps a spreadsheet from running a cell as a formula (CSV
// injection, OWASP): a cell that starts with =, +, -, @, a tab or a
// carriage return gets a leading single quote — unless it is a plain
// number, so that negative figures stay numbers. Job names, kernels and
// hosts come from other machines' imports; they must not become formulas
// in whoever opens the export.
func SafeCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if plainNumber(v) {
			return v
		}
		return "'" + v
	}
	return v
}

// plainNumber reports whether v is a decimal number: an optional sign,
// digits with at most one point, an optional exponent. Not Inf, NaN or
// hexadecimal, which a spreadsheet reads otherwise.
func plainNumber(v string) bool {
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	digits, point := 0, false
	for ; i < len(v) && (isDigit(v[i]) || v[i] == '.' && !point); i++ {
		if v[i] == '.' {
			point = true
		} else {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		start := i
		for i < len(v) && isDigit(v[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(v)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
