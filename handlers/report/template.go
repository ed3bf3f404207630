package report

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
)

// TemplateFuncs are the functions the report's templates call and the
// dashboard's share (runparts.html, statdiff.html): the dashboard adds its
// own to them.
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"join":    strings.Join,
		"inc":     func(n int) int { return n + 1 },
		"time":    db.FormatTime,
		"gib":     func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) },
		"known":   system.Known,
		"cell":    TableCell,
		"heading": TableHeading,
	}
}

// TableHeading writes a CSV column's name as a table heading that may
// wrap after each underscore (lat_mean_median_us), so that a table of
// many such columns fits the page rather than scroll sideways.
func TableHeading(s string) template.HTML {
	return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "_", "_<wbr>"))
}

// TableCell writes a table's cell for people: numbers with three
// significant digits (units.Number), small whole numbers (iodepths,
// counts, ids) as they are; the CSV keeps every digit.
func TableCell(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "xXeE_") && !strings.ContainsAny(s, ".") {
		return s
	}
	if !strings.Contains(s, ".") && f > -10000 && f < 10000 {
		return s
	}
	return units.Number(f)
}
