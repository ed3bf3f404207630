package handlers

import (
	"encoding/csv"
	"fmt"
	"io"

	"iolab/handlers/chart"
)

// WriteCSV writes the chart's table: its header row (with units), then
// the rows it plots.
func WriteCSV(w io.Writer, c *chart.Chart) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(c.Columns); err != nil {
		return fmt.Errorf("handlers: write %s csv: %w", c.Kind, err)
	}
	for i, row := range c.Rows {
		if len(row) != len(c.Columns) {
			return fmt.Errorf("handlers: write %s csv: row %d has %d fields for %d columns", c.Kind, i+1, len(row), len(c.Columns))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("handlers: write %s csv: %w", c.Kind, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("handlers: write %s csv: %w", c.Kind, err)
	}
	return nil
}
