package chart

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/sweep"
)

// layout is how a chart's points are keyed: by run, by the value of the
// x axis, and by the values of the group axes, which make the series
// (the series axis first, then every other swept axis but x, so that no
// series mixes steps that differ in anything but their repeat).
type layout struct {
	compare bool
	job     bool // the kind draws one job of each run: the table names it
	x       sweep.Axis
	series  sweep.Axis
	group   []sweep.Axis
}

// newLayout keys runs' points by x and the query's series; without one,
// the series follow the first swept axis that is not Numeric (Numeric
// axes are drawn along x) nor x.
func newLayout(q Query, runs []*runView, x sweep.Axis) *layout {
	l := &layout{compare: len(runs) > 1, job: q.perJob, x: x, series: q.Series}
	if l.series == "" {
	find:
		for _, r := range runs {
			for _, s := range r.plan.Swept() {
				if spec, ok := sweep.LookupAxis(s.Axis); ok && !spec.Numeric && s.Axis != x {
					l.series = s.Axis
					break find
				}
			}
		}
	}
	if l.series != "" {
		l.group = append(l.group, l.series)
	}
	for _, r := range runs {
		for _, s := range r.plan.Swept() {
			if s.Axis != x && !slices.Contains(l.group, s.Axis) {
				l.group = append(l.group, s.Axis)
			}
		}
	}
	return l
}

// key is the x value and group values of a step or summary cell.
func (l *layout) key(r *runView, axes []sweep.AxisValue) (x string, group []string) {
	if l.x != "" {
		x = r.value(axes, l.x)
	}
	group = make([]string, len(l.group))
	for i, a := range l.group {
		group[i] = r.value(axes, a)
	}
	return x, group
}

// name names a group for legends: "io_uring", "run 3 libaio",
// "io_uring numjobs=4"; "" when there is nothing to tell apart. The
// series axis is named as the axis table labels it; the others as
// axis=value.
func (l *layout) name(r *runView, group []string) string {
	var parts []string
	if l.compare {
		parts = append(parts, r.label)
		// Compared runs say where they ran: host, kernel, and the values
		// of the Step axes (the scheduler) the series do not tell.
		var env []string
		for _, v := range []string{r.run.Hostname, r.run.Kernel} {
			if v != "" {
				env = append(env, v)
			}
		}
		for _, spec := range sweep.Axes() {
			if v := r.fixed[spec.Name]; spec.Step && v != "" && !slices.Contains(l.group, spec.Name) {
				env = append(env, v)
			}
		}
		if len(env) > 0 {
			parts = append(parts, "("+strings.Join(env, " ")+")")
		}
	}
	for i, a := range l.group {
		v := group[i]
		if v == "" {
			continue
		}
		if spec, ok := sweep.LookupAxis(a); ok && i == 0 && a == l.series {
			parts = append(parts, spec.Label(v))
			continue
		}
		parts = append(parts, string(a)+"="+v)
	}
	return strings.Join(parts, " ")
}

// columns is the CSV header of the key: run (when comparing), the job
// (for a kind that draws one), the group axes and x (when withX).
func (l *layout) columns(withX bool) []string {
	var cols []string
	if l.compare {
		cols = append(cols, "run")
	}
	if l.job {
		cols = append(cols, "job")
	}
	if withX && l.x != "" {
		cols = append(cols, string(l.x))
	}
	for _, a := range l.group {
		cols = append(cols, string(a))
	}
	return cols
}

func (l *layout) row(r *runView, x string, group []string, withX bool) []string {
	var row []string
	if l.compare {
		row = append(row, strconv.FormatInt(r.id, 10))
	}
	if l.job {
		row = append(row, r.job)
	}
	if withX && l.x != "" {
		row = append(row, x)
	}
	return append(row, group...)
}

// cell is the steps of one point: one run, one x value, one group.
type cell struct {
	run   *runView
	x     string
	group []string
	steps []sweep.StepResult
}

// series is one group of one run.
type series struct {
	run   *runView
	group []string
	name  string
	ranks []int
	cells map[string]*cell // by x value
}

// grid is a chart's cells in order: x values and series.
type grid struct {
	xs     []string
	series []*series
}

// gridOf groups every run's steps by the layout's key and orders the x
// values (numerically when they all are numbers, else as the sweeps list
// them) and the series (by run, then by the sweeps' order of their
// values).
func gridOf(l *layout, runs []*runView) *grid {
	g := &grid{}
	type xRank struct {
		v    string
		rank int
	}
	var xs []xRank
	for _, r := range runs {
		var ss []*series
		for _, st := range r.steps {
			x, group := l.key(r, st.Step.Axes)
			k := slices.IndexFunc(ss, func(s *series) bool { return slices.Equal(s.group, group) })
			if k < 0 {
				s := &series{run: r, group: group, name: l.name(r, group), cells: map[string]*cell{}}
				for i, a := range l.group {
					s.ranks = append(s.ranks, r.rank(a, group[i]))
				}
				ss = append(ss, s)
				k = len(ss) - 1
			}
			c := ss[k].cells[x]
			if c == nil {
				c = &cell{run: r, x: x, group: group}
				ss[k].cells[x] = c
			}
			c.steps = append(c.steps, st)
			rank := r.rank(l.x, x)
			if i := slices.IndexFunc(xs, func(e xRank) bool { return e.v == x }); i < 0 {
				xs = append(xs, xRank{x, rank})
			} else {
				xs[i].rank = min(xs[i].rank, rank)
			}
		}
		slices.SortStableFunc(ss, func(a, b *series) int { return slices.Compare(a.ranks, b.ranks) })
		g.series = append(g.series, ss...)
	}
	numeric := true
	for _, e := range xs {
		if _, err := strconv.ParseFloat(e.v, 64); err != nil {
			numeric = false
		}
	}
	slices.SortStableFunc(xs, func(a, b xRank) int {
		if numeric {
			fa, _ := strconv.ParseFloat(a.v, 64)
			fb, _ := strconv.ParseFloat(b.v, 64)
			return cmp.Compare(fa, fb)
		}
		return cmp.Compare(a.rank, b.rank)
	})
	for _, e := range xs {
		g.xs = append(g.xs, e.v)
	}
	return g
}

// AxisValues lists the values axis a takes in the runs' steps (a fixed
// value where a run does not sweep a), in the order a chart's x axis
// shows them: what a view may pick, such as the distribution's iodepths.
func AxisValues(runs []Run, a sweep.Axis) []string {
	vs := views(runs)
	var out []string
	for _, x := range gridOf(newLayout(Query{}, vs, a), vs).xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
