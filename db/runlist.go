package db

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/units"
)

// RunColumn is one column of the runs list: `iolab runs` prints the table's
// columns in order, and the dashboard's runs page shows the same ones.
type RunColumn struct {
	Name string // the header
	// Filter is the runs page's query parameter that filters on the
	// column; "" when there is none.
	Filter string
	// Sort is the sort (RunSorts) of the list by the column; "" for none.
	Sort  string
	Value func(r Run) string
}

// runListColumns lists the runs list's columns, in order.
var runListColumns = []RunColumn{
	{Name: "#", Value: func(r Run) string { return strconv.FormatInt(r.ID, 10) }},
	{Name: "name", Sort: "name", Value: func(r Run) string { return r.Name }},
	{Name: "status", Filter: "status", Sort: "status", Value: func(r Run) string { return r.Status }},
	{Name: "host", Filter: "host", Sort: "host", Value: func(r Run) string { return r.Hostname }},
	{Name: "kernel", Filter: "kernel", Value: func(r Run) string { return r.Kernel }},
	{Name: "target", Filter: "target", Value: func(r Run) string { return r.Target }},
	{Name: "workload", Filter: "workload", Value: Workload},
	{Name: "engines", Filter: "engine", Value: func(r Run) string { return strings.Join(r.Engines, ", ") }},
	{Name: "schedulers", Filter: "scheduler", Value: func(r Run) string { return strings.Join(r.Schedulers, ", ") }},
	{Name: "steps", Value: StepsText},
	{Name: "when", Sort: "date", Value: func(r Run) string { return FormatTime(r.Created) }},
}

// StepsText is a run's stored steps against those its plan makes: "20 of
// 72"; with --repeat auto, "20 of 24…60" (the first rounds to the cap);
// the stored count alone when the plan says nothing (or less).
func StepsText(r Run) string {
	n := strconv.Itoa(r.Steps)
	lo, hi := r.Plan.Planned()
	switch {
	case hi < max(r.Steps, 1):
		return n
	case lo == hi:
		return n + " of " + strconv.Itoa(hi)
	}
	return n + " of " + strconv.Itoa(lo) + "…" + strconv.Itoa(hi)
}

// RunColumns returns the runs list's columns.
func RunColumns() []RunColumn { return append([]RunColumn(nil), runListColumns...) }

// Workload is what a run's jobs do, from its plan: each job's rw and bs
// ("randwrite 4k", "write 1m + randread 4k"), with the values a sweep of
// rw or bs gives instead of the job's ("randread 4k,64k"); "" for a plan
// without jobs.
func Workload(r Run) string {
	swept := func(a sweep.Axis) []string {
		for _, s := range r.Plan.Sweeps {
			if s.Axis == a && len(s.Values) > 1 {
				return s.Values
			}
		}
		return nil
	}
	rws, bss := swept(sweep.AxisRW), swept(sweep.AxisBS)
	var parts []string
	add := func(rw string, bs int64) {
		w := []string{rw}
		if rws != nil {
			w[0] = strings.Join(rws, ",")
		}
		switch {
		case bss != nil:
			w = append(w, strings.Join(bss, ","))
		case bs > 0:
			w = append(w, units.FormatSize(bs))
		}
		if p := strings.TrimSpace(strings.Join(w, " ")); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	for _, g := range r.Plan.Base.Groups {
		for _, j := range g.Jobs {
			add(j.RW, j.BS)
		}
	}
	if len(r.Plan.Base.Groups) == 0 {
		for _, j := range r.Plan.Base.Jobs {
			add(j.RW, j.BS)
		}
	}
	return strings.Join(parts, " + ")
}

// FormatTime is how runs lists and pages write a run's times: local, to the
// second; "–" for none.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
