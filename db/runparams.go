package db

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxParamLen bounds the text of one of the runs list's parameters.
const MaxParamLen = 1024

// RunParam is one parameter of the runs list, the same on both front
// doors: the dashboard's and /api/runs' query parameter, `iolab runs`'
// flag of the same name.
type RunParam struct {
	Name string
	Help string // as flag's usage: its first `WORD` names the value

	set func(q *RunQuery, v string) error
}

// ParamError is a runs list parameter that cannot be taken: which, and
// what to give instead.
type ParamError struct {
	Param, Msg string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// runParams lists the runs list's parameters, in the order the help
// gives them.
var runParams = []RunParam{
	{Name: "host", Help: "runs of this `HOST` (its hostname)", set: func(q *RunQuery, v string) error { q.Hostname = v; return nil }},
	{Name: "kernel", Help: "runs on this `KERNEL` release (uname -r)", set: func(q *RunQuery, v string) error { q.Kernel = v; return nil }},
	{Name: "target", Help: "runs whose first target is this `PATH`", set: func(q *RunQuery, v string) error { q.Target = v; return nil }},
	{Name: "engine", Help: "runs that used this `ENGINE` (or variant: io_uring+sqpoll, …)", set: func(q *RunQuery, v string) error { q.Engine = v; return nil }},
	{Name: "scheduler", Help: "runs that used this I/O `SCHEDULER`", set: func(q *RunQuery, v string) error { q.Scheduler = v; return nil }},
	{Name: "tag", Help: "runs with this `TAG` (label)", set: func(q *RunQuery, v string) error { q.Tag = v; return nil }},
	{Name: "workload", Help: "runs of this `WORKLOAD`, as the list writes it (\"randread 4k\")", set: func(q *RunQuery, v string) error { q.Workload = v; return nil }},
	{Name: "status", Help: "runs in this `STATUS`: " + strings.Join(statuses, ", "), set: func(q *RunQuery, v string) error {
		if !slices.Contains(statuses, v) {
			return fmt.Errorf("%.40q is not a status: use one of %s", v, strings.Join(statuses, ", "))
		}
		q.Status = v
		return nil
	}},
	{Name: "source", Help: "runs from this `SOURCE`: local (this machine), push (iolab run --push), import (an export), fio (fio's JSON or a fio server), agent", set: func(q *RunQuery, v string) error {
		if !slices.Contains(sources, v) {
			return fmt.Errorf("%.40q is not a source: use one of %s", v, strings.Join(sources, ", "))
		}
		q.Source = v
		return nil
	}},
	{Name: "since", Help: "runs created at or after this `TIME`: 2026-12-01, 2026-12-01T15:04 (local) or RFC 3339", set: func(q *RunQuery, v string) error {
		t, err := parseRunTime(v, false)
		q.Since = t
		return err
	}},
	{Name: "until", Help: "runs created before this `TIME`; a day alone is up to its end", set: func(q *RunQuery, v string) error {
		t, err := parseRunTime(v, true)
		q.Until = t
		return err
	}},
	{Name: "name", Help: "runs whose name holds this `TEXT`, in any case", set: func(q *RunQuery, v string) error { q.Name = strings.TrimSpace(v); return nil }},
	{Name: "sort", Help: "the `ORDER`: " + strings.Join(RunSorts(), ", ") + " (date newest first, the others A to Z), or one after a - for the reverse", set: func(q *RunQuery, v string) error {
		q.Sort = RunSort(v)
		return q.Sort.Check()
	}},
	{Name: "limit", Help: fmt.Sprintf("`N` runs a page (1 to %d; %d when not given)", MaxRunPage, DefaultRunPage), set: func(q *RunQuery, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxRunPage {
			return fmt.Errorf("%.40q: want a whole number from 1 to %d", v, MaxRunPage)
		}
		q.Limit = n
		return nil
	}},
	{Name: "after", Help: "the page after this `CURSOR` (a page's next)", set: func(q *RunQuery, v string) error { q.After = v; return nil }},
	{Name: "before", Help: "the page before this `CURSOR` (a page's prev)", set: func(q *RunQuery, v string) error { q.Before = v; return nil }},
}

// RunParams lists the runs list's parameters.
func RunParams() []RunParam { return slices.Clone(runParams) }

// ParseRunQuery reads the runs list's parameters through get (a query
// string's Get, a flag's value), "" for one not given, and checks each
// and the cursor against the sort; the first it cannot take is a
// *ParamError.
func ParseRunQuery(get func(name string) string) (RunQuery, error) {
	var q RunQuery
	for _, p := range runParams {
		v := get(p.Name)
		if v == "" {
			continue
		}
		if len(v) > MaxParamLen {
			return q, &ParamError{p.Name, fmt.Sprintf("%d bytes: at most %d", len(v), MaxParamLen)}
		}
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
			return q, &ParamError{p.Name, "not text: give UTF-8 without NUL or line breaks"}
		}
		if err := p.set(&q, v); err != nil {
			return q, &ParamError{p.Name, strings.TrimPrefix(err.Error(), p.Name+" ")}
		}
	}
	if q.After != "" && q.Before != "" {
		return q, &ParamError{"before", "given with after: a page starts after a run or ends before one, give one of them"}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, &ParamError{"until", "not after since: nothing is created in between"}
	}
	srt, _, _ := q.Sort.parse()
	for _, c := range []struct{ name, v string }{{"after", q.After}, {"before", q.Before}} {
		if c.v == "" {
			continue
		}
		if _, err := parseCursor(c.v, srt); err != nil {
			return q, &ParamError{c.name, err.Error()}
		}
	}
	return q, nil
}

// runTimeLayouts are the times since and until take, local unless they
// say their zone.
var runTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseRunTime reads a time of since= or until=; a day alone is its start,
// or with end the next day's start (until= a day keeps that day's runs).
func parseRunTime(v string, end bool) (time.Time, error) {
	for _, l := range runTimeLayouts {
		t, err := time.ParseInLocation(l, v, time.Local)
		if err != nil {
			continue
		}
		if l == "2006-01-02" && end {
			t = t.AddDate(0, 0, 1)
		}
		if t.Year() < 1678 || t.Year() > 2261 { // what int64 nanoseconds hold
			return time.Time{}, fmt.Errorf("%.40q is out of range: a year from 1678 to 2261", v)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%.40q is not a time: give 2026-12-01, 2026-12-01T15:04 or RFC 3339 (2026-12-01T15:04:05Z)", v)
}
