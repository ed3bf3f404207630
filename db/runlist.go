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
	Value func(r ListedRun) string
}

// ListedRun is a run as the runs list reads it: its row without the plan,
// host and targets (a page of runs decodes none of them), with what the
// list shows of the plan. GetRun reads the whole run.
type ListedRun struct {
	ID         int64     `json:"id"`
	UID        string    `json:"uid,omitempty"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Source     string    `json:"source"`
	Created    time.Time `json:"created_at"`
	Started    time.Time `json:"started_at,omitzero"`
	Finished   time.Time `json:"finished_at,omitzero"`
	Hostname   string    `json:"hostname"`
	Kernel     string    `json:"kernel"`
	Target     string    `json:"target"`
	Engines    []string  `json:"engines"`
	Schedulers []string  `json:"schedulers"`
	Tags       []string  `json:"tags"`
	Error      string    `json:"error,omitempty"`
	Workload   string    `json:"workload"` // Workload of the run
	Steps      int       `json:"steps"`    // stored
	// PlannedMin and PlannedMax are the steps its plan makes
	// (sweep.Plan.Planned).
	PlannedMin int `json:"planned_min"`
	PlannedMax int `json:"planned_max"`
}

// runListColumns lists the runs list's columns, in order.
var runListColumns = []RunColumn{
	{Name: "#", Value: func(r ListedRun) string { return strconv.FormatInt(r.ID, 10) }},
	{Name: "name", Sort: "name", Value: func(r ListedRun) string { return r.Name }},
	{Name: "status", Filter: "status", Sort: "status", Value: func(r ListedRun) string { return r.Status }},
	{Name: "host", Filter: "host", Sort: "host", Value: func(r ListedRun) string { return r.Hostname }},
	{Name: "kernel", Filter: "kernel", Value: func(r ListedRun) string { return r.Kernel }},
	{Name: "target", Filter: "target", Value: func(r ListedRun) string { return r.Target }},
	{Name: "workload", Filter: "workload", Value: func(r ListedRun) string { return r.Workload }},
	{Name: "engines", Filter: "engine", Value: func(r ListedRun) string { return strings.Join(r.Engines, ", ") }},
	{Name: "schedulers", Filter: "scheduler", Value: func(r ListedRun) string { return strings.Join(r.Schedulers, ", ") }},
	{Name: "steps", Value: func(r ListedRun) string { return stepsText(r.Steps, r.PlannedMin, r.PlannedMax) }},
	{Name: "when", Sort: "date", Value: func(r ListedRun) string { return FormatTime(r.Created) }},
}

// StepsText is a run's stored steps against those its plan makes: "20 of
// 72"; with --repeat auto, "20 of 24…60" (the first rounds to the cap);
// the stored count alone when the plan says nothing (or less).
func StepsText(r Run) string {
	lo, hi := r.Plan.Planned()
	return stepsText(r.Steps, lo, hi)
}

func stepsText(steps, lo, hi int) string {
	n := strconv.Itoa(steps)
	switch {
	case hi < max(steps, 1):
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
