package db

import (
	"strconv"
	"strings"
	"time"
)

// RunColumn is one column of the runs list: `iolab runs` prints the table's
// columns in order, and the dashboard's runs page shows the same ones.
type RunColumn struct {
	Name string // the header
	// Filter is the runs page's query parameter that filters on the
	// column; "" when there is none.
	Filter string
	Value  func(r Run) string
}

// runListColumns lists the runs list's columns, in order.
var runListColumns = []RunColumn{
	{Name: "#", Value: func(r Run) string { return strconv.FormatInt(r.ID, 10) }},
	{Name: "name", Value: func(r Run) string { return r.Name }},
	{Name: "status", Filter: "status", Value: func(r Run) string { return r.Status }},
	{Name: "host", Filter: "host", Value: func(r Run) string { return r.Hostname }},
	{Name: "kernel", Filter: "kernel", Value: func(r Run) string { return r.Kernel }},
	{Name: "target", Filter: "target", Value: func(r Run) string { return r.Target }},
	{Name: "engines", Filter: "engine", Value: func(r Run) string { return strings.Join(r.Engines, ", ") }},
	{Name: "schedulers", Filter: "scheduler", Value: func(r Run) string { return strings.Join(r.Schedulers, ", ") }},
	{Name: "steps", Value: func(r Run) string { return strconv.Itoa(r.Steps) }},
	{Name: "when", Value: func(r Run) string { return FormatTime(r.Created) }},
}

// RunColumns returns the runs list's columns.
func RunColumns() []RunColumn { return append([]RunColumn(nil), runListColumns...) }

// FormatTime is how runs lists and pages write a run's times: local, to the
// second; "–" for none.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
