package chart

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/sweep"

	"iolab/bench/summary"
)

// layout is how a chart's points are keyed: by run, by the value of the
// x axis, and by the values of the group axes, which make the series
// (the series axis first, then every other swept axis but x, so that no
// series mixes steps that differ in anything but their repeat).
type layout struct {
	compare bool
	// envNames: comparing runs whose hosts, kernels and Step axes tell
	// every run apart, legends name those and not "run 3".
	envNames bool
	// noKernel: some compared runs know their kernel and some do not (a
	// fio server's): legends name hosts alone, not "fio-a" beside
	// "lab-b 6.12".
	noKernel bool
	job      bool // the kind draws one job of each run: the table names it
	x        sweep.Axis
	series   sweep.Axis
	group    []sweep.Axis
}

// newLayout keys runs' points by x and the query's series; without one,
// the series follow the first swept axis that is not Numeric (Numeric
// axes are drawn along x) nor x.
func newLayout(q Query, runs []*runView, x sweep.Axis) *layout {
	l := &layout{compare: len(runs) > 1, job: q.perJob, x: x, series: q.Series}
	if l.compare {
		known := 0
		for _, r := range runs {
			if r.run.Kernel != "" {
				known++
			}
		}
		l.noKernel = known > 0 && known < len(runs)
		seen := map[string]bool{}
		l.envNames = true
		for _, r := range runs {
			k := strings.Join(l.env(r), " ")
			l.envNames = l.envNames && k != "" && !seen[k]
			seen[k] = true
		}
	}
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

// parts are what names a group in legends: "run 3", its host, kernel
// and the Step axes (the scheduler) the series do not tell when
// comparing runs; the series axis' value as the axis table labels it;
// the other group axes as axis=value. gridOf drops the parts every
// series shares (the subtitle says them once).
func (l *layout) parts(r *runView, group []string) []string {
	var parts []string
	if l.compare {
		if !l.envNames {
			parts = append(parts, r.label)
		}
		parts = append(parts, l.env(r)...)
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
	return parts
}

// env is where a compared run ran: its host (a group's run: the fleet's
// name for it), kernel and the values of the Step axes (the scheduler)
// the series do not tell.
func (l *layout) env(r *runView) []string {
	var env []string
	if h := cmp.Or(r.host, r.run.Hostname); h != "" {
		env = append(env, h)
	}
	if r.run.Kernel != "" && !l.noKernel {
		env = append(env, r.run.Kernel)
	}
	for _, spec := range sweep.Axes() {
		if v := r.fixed[spec.Name]; spec.Step && v != "" && !slices.Contains(l.group, spec.Name) {
			env = append(env, v)
		}
	}
	return env
}

// colorKey is the value a series' colour follows: its series axis'
// value (the engine, the scheduler); else, comparing runs, its run's
// fleet host (a group's run), kernel or the run; else the value of the
// run's first other swept axis (numjobs), so that one value has one
// colour everywhere. Comparing runs, a Load axis (rate_iops) is not the
// colour's: it is the QoS chart's x, whose curves take their host's.
func (l *layout) colorKey(r *runView, group []string) string {
	if l.byValue() && len(group) > 0 && group[0] != "" {
		return group[0]
	}
	if l.compare {
		return cmp.Or(r.host, r.run.Kernel, r.label)
	}
	if len(group) > 0 {
		return group[0]
	}
	return ""
}

// byValue: the series axis' values colour the series, not the runs.
func (l *layout) byValue() bool {
	if l.series == "" {
		return !l.compare
	}
	spec, ok := sweep.LookupAxis(l.series)
	return !l.compare || !ok || !spec.Load
}

// colours are the colours of the values colorKey can give, in a stable
// order: those of the first group axis as the runs' plans sweep them, or
// the runs' hosts, kernels or labels by name.
func (l *layout) colours(runs []*runView) colours {
	if l.byValue() && len(l.group) > 0 {
		return axisColours(runs, l.group[0])
	}
	var values []string
	for _, r := range runs {
		values = append(values, cmp.Or(r.host, r.run.Kernel, r.label))
	}
	slices.Sort(values)
	return colourSet(values)
}

// axisColours are the colours of a's values, in the order the runs'
// plans sweep them (then the runs' fixed values): the same set on every
// chart whose series a defines.
func axisColours(runs []*runView, a sweep.Axis) colours {
	var values []string
	add := func(v string) {
		if v != "" && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	for _, r := range runs {
		for _, s := range r.plan.Sweeps {
			if s.Axis == a {
				for _, v := range s.Values {
					add(v)
				}
			}
		}
	}
	for _, r := range runs {
		add(r.fixed[a])
	}
	return colourSet(values)
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
	steps []summary.StepView
}

// series is one group of one run.
type series struct {
	run   *runView
	runAt int // the run's place among those compared
	group []string
	parts []string // what tells it apart, and what it shares (layout.parts)
	name  string   // its parts that not every series shares
	color string
	ranks []int
	cells map[string]*cell // by x value
}

// grid is a chart's cells in order: x values and series.
type grid struct {
	xs     []string
	series []*series
	// common is what every series shares, left out of their names: the
	// subtitle says it once.
	common []string
	// colours are the colours of the view's series values (layout.colours).
	colours colours
	// pickers are the choices of series to draw (pick), for the page.
	pickers []Picker
	// empty names the series left out because none of their steps is
	// done (pick).
	empty []string
	// hidden names the series the budget left out (pick): the chart says
	// so, and which picker draws them (Chart.Hidden).
	hidden []string
	// budget is how many series pick kept at most.
	budget int
}

// gridOf groups every run's steps by the layout's key and orders the x
// values (numerically when they all are numbers, else as the sweeps list
// them) and the series (by run, then by the sweeps' order of their
// values).
func gridOf(l *layout, runs []*runView) *grid {
	g := &grid{colours: l.colours(runs)}
	type xRank struct {
		v    string
		rank int
	}
	var xs []xRank
	for ri, r := range runs {
		var ss []*series
		for _, st := range r.steps {
			x, group := l.key(r, st.Step.Axes)
			k := slices.IndexFunc(ss, func(s *series) bool { return slices.Equal(s.group, group) })
			if k < 0 {
				s := &series{run: r, runAt: ri, group: group, parts: l.parts(r, group), color: g.colours.of(l.colorKey(r, group)), cells: map[string]*cell{}}
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
	g.name()
	return g
}

// name names the series by what tells them apart, and keeps in common
// what they all share. A lone series shares everything, and is named by
// all of it ("" when that is nothing).
func (g *grid) name() {
	g.common = nil
	if len(g.series) == 0 {
		return
	}
	if len(g.series) == 1 {
		s := g.series[0]
		s.name = strings.Join(s.parts, " ")
		g.common = s.parts
		return
	}
	for _, p := range g.series[0].parts {
		if !slices.Contains(g.common, p) && !slices.ContainsFunc(g.series[1:], func(s *series) bool { return !slices.Contains(s.parts, p) }) {
			g.common = append(g.common, p)
		}
	}
	for _, s := range g.series {
		var own []string
		for _, p := range s.parts {
			if !slices.Contains(g.common, p) {
				own = append(own, p)
			}
		}
		s.name = strings.Join(own, " ")
	}
}

// shared is what every series shares, for a subtitle: "" when nothing
// beyond the runs the subtitle names.
func (g *grid) shared(runs []*runView) string {
	var out []string
	for _, p := range g.common {
		if !slices.ContainsFunc(runs, func(r *runView) bool { return p == r.label }) {
			out = append(out, p)
		}
	}
	text := strings.Join(out, " ")
	if len(g.empty) > 0 {
		text = strings.TrimPrefix(text+" · no step done: "+strings.Join(g.empty, ", "), " · ")
	}
	return text
}

// shows reports whether the query draws series s: whether its group
// values (and run, when comparing) are all among q.Show (q.ShowRuns)
// where it names any of their axis' (runs').
func (g *grid) shows(q Query, l *layout, s *series) bool {
	if len(q.ShowRuns) > 0 && l.compare && !slices.Contains(q.ShowRuns, s.run.id) {
		return false
	}
	for i := range l.group {
		named := slices.ContainsFunc(g.series, func(o *series) bool { return slices.Contains(q.Show, o.group[i]) })
		if named && !slices.Contains(q.Show, s.group[i]) {
			return false
		}
	}
	return true
}

// hasData reports whether any step of a series is done.
func (s *series) hasData() bool {
	for _, c := range s.cells {
		if slices.ContainsFunc(c.steps, func(st summary.StepView) bool { return done(&st) }) {
			return true
		}
	}
	return false
}

// shown counts the series the query draws before any budget: what a
// chart's other defaults (percentiles, iodepths) depend on.
func (g *grid) shown(q Query, l *layout) int {
	n := 0
	for _, s := range g.series {
		if s.hasData() && g.shows(q, l, s) {
			n++
		}
	}
	return n
}

// pick keeps the series the query shows (shows), budget at most: the
// first, by default; the first budget of those a picker ticked. The rest
// are hidden, and the chart names them (Chart.Hidden), never left out
// unsaid. A series none of whose steps is done (an engine the device
// cannot run) has nothing to draw: the subtitle names it instead. pick
// records a picker per group axis, and one of the runs when comparing,
// so the page reaches every series.
func (g *grid) pick(q Query, l *layout, runs []*runView, budget int) {
	budget = max(budget, 1)
	g.series = slices.DeleteFunc(g.series, func(s *series) bool {
		if s.hasData() {
			return false
		}
		g.empty = append(g.empty, strings.Join(s.parts, " "))
		return true
	})
	var kept []*series
	for _, s := range g.series {
		if g.shows(q, l, s) {
			kept = append(kept, s)
		}
	}
	g.budget = budget
	if len(kept) > budget {
		// Named as among all the series, as the pickers name them.
		g.name()
		for _, s := range kept[budget:] {
			g.hidden = append(g.hidden, cmp.Or(s.name, s.run.label))
		}
		kept = kept[:budget]
	}

	if l.compare {
		p := Picker{Param: "showrun", Label: "runs"}
		for _, r := range runs {
			on := slices.ContainsFunc(kept, func(s *series) bool { return s.run == r })
			// A group's runs by their hosts, as the legends name them.
			p.Options = append(p.Options, PickerOption{Value: strconv.FormatInt(r.id, 10), Label: r.name, On: on})
		}
		g.pickers = append(g.pickers, p)
	}
	for i, a := range l.group {
		p := Picker{Param: "show", Label: string(a)}
		for _, s := range g.series {
			v := s.group[i]
			if v == "" || slices.ContainsFunc(p.Options, func(o PickerOption) bool { return o.Value == v }) {
				continue
			}
			o := PickerOption{Value: v, Label: v, On: slices.ContainsFunc(kept, func(k *series) bool { return k.group[i] == v })}
			if i == 0 && l.byValue() {
				o.Color = g.colours.of(v)
			}
			p.Options = append(p.Options, o)
		}
		if len(p.Options) > 1 {
			g.pickers = append(g.pickers, p)
		}
	}
	g.series = kept
	g.name()
}

// hiddenNote says which series the chart leaves out past its budget and
// which pickers draw them: "" when it draws every series it was asked
// for. lines is how many lines or boxes each series draws (a latency
// chart's percentiles), fewer the picker whose values make them
// ("percentiles"), if any.
func (g *grid) hiddenNote(lines int, fewer string) string {
	if len(g.hidden) == 0 {
		return ""
	}
	var where []string
	for _, p := range g.pickers {
		if p.Param == "show" || p.Param == "showrun" {
			where = append(where, p.Label)
		}
	}
	at := fmt.Sprintf("%d series at most", g.budget)
	if lines > 1 {
		at = fmt.Sprintf("%d series of %d lines at most, %d in all", g.budget, lines, g.budget*lines)
	}
	names := g.hidden
	if len(names) > 12 {
		names = append(slices.Clone(names[:12]), fmt.Sprintf("and %d more", len(names)-12))
	}
	note := fmt.Sprintf("Not drawn (%s): %s.", at, strings.Join(names, ", "))
	if len(where) > 0 {
		note += " Tick them under " + strings.Join(where, " and ") + " (and untick others) to draw them."
	}
	if lines > 1 && fewer != "" {
		note += " Fewer " + fewer + " leave room for more series."
	}
	return note
}
