package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
)

var showCommand = command{
	name:    "show",
	summary: "a stored run: its environment, each step's figures and the summary tables",
	usage:   "[--db FILE] [--lat KIND] ID",
	about: `The numbers are rounded for reading (three significant digits); iolab export and the dashboard's CSVs
keep them whole. Latency percentiles are of fio's lat (from submission) when the run compares engines, of
clat otherwise; --lat picks (total, clat or slat, or a traced run's block-layer part: submit, queue,
device or completion), and the table's heading names it.`,
	flags: func(fs *flag.FlagSet) runFunc {
		lat := fs.String("lat", "", "the latency shown: `KIND` total (fio's lat), clat or slat, or a traced run's submit, queue, device or completion (default: total when the run compares engines, else clat)")
		run := storedRunFlags(func(ctx context.Context, e *env, store *db.Store, id int64) error {
			k, err := summary.ParseLatKind(*lat)
			if err != nil {
				return usageError{"show: --lat: " + err.Error()}
			}
			return showRun(ctx, e, store, id, k)
		})(fs)
		return run
	},
}

// showWidth is the terminal width `iolab show` keeps to.
const showWidth = 120

// showRun prints run id with the latency of kind k ("": LatKindOf's).
func showRun(ctx context.Context, e *env, store *db.Store, id int64, k summary.LatKind) error {
	r, err := store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	steps, err := store.Steps(ctx, id)
	if err != nil {
		return err
	}
	return writeShow(e.stdout, r, steps, k)
}

// writeShow prints a run: what and where it ran, a table of each job's
// performance per step (its latency of kind k, "" for LatKindOf's), one
// of each step's CPU and disk figures, what went wrong, and the summary
// tables.
func writeShow(w io.Writer, r *db.Run, steps []sweep.StepResult, k summary.LatKind) error {
	// Names, hosts and errors may come from other machines (imports,
	// pushes): nothing of theirs reaches the terminal unescaped.
	var b strings.Builder
	p := units.Printable
	line := func(text string) { b.WriteString("  " + wrap(text, showWidth-2, "      ") + "\n") }
	fmt.Fprintf(&b, "run %d %q: %s\n", r.ID, r.Name, r.Status)
	if r.Error != "" {
		line("error: " + p(r.Error))
	}
	line(fmt.Sprintf("started %s, finished %s", fmtTime(r.Started), fmtTime(r.Finished)))
	line(p(r.Host.Summary()))
	for _, t := range r.Targets {
		line(p(targetText(&t, steps)))
	}
	b.WriteString("  plan: " + wrapCommand(p(r.Plan.Command()), showWidth-8, "        ") + "\n")
	if r.Plan.PTS != nil {
		for _, l := range ptsLines(&r.Plan, steps) {
			line(p(l))
		}
	}
	for _, in := range r.Plan.Inferred {
		line("inferred (not in fio's output): " + p(in.String()))
	}
	for _, n := range r.Plan.Notes {
		line("note: " + p(n))
	}
	para := func(text string) { b.WriteString(wrap(text, showWidth, "") + "\n") }
	if len(steps) > 0 {
		b.WriteString("\n")
		views := make([]summary.StepView, len(steps))
		for i := range steps {
			views[i] = summary.StepViewOf(&steps[i])
		}
		k = summary.LatKindOf(k, []*sweep.Plan{&r.Plan}, [][]summary.StepView{views})
		writePerformance(&b, &r.Plan, steps, k)
		b.WriteString("\n")
		writeCPUDisk(&b, &r.Plan, steps)
		b.WriteString("\n")
	}
	for _, g := range summary.GroupErrors(steps) {
		para(fmt.Sprintf("%s failed: %s", g.StepList(), p(g.Error)))
	}
	for _, n := range summary.Notes(steps) {
		para(fmt.Sprintf("step %d: %s", n.Step, p(n.Text)))
	}
	for i := range steps {
		f := summary.FiguresOf(&steps[i])
		for _, j := range f.Jobs {
			for _, o := range j.Outcomes {
				para(fmt.Sprintf("step %d: job %s: %s", f.Seq, p(j.Name), p(o)))
			}
		}
	}
	for _, sk := range r.Plan.Skipped {
		para(fmt.Sprintf("left out before the run: %s: %s", p(sweep.FormatAxes(sk.Axes)), p(sk.Reason)))
	}
	if !strings.HasSuffix(b.String(), "\n\n") {
		b.WriteString("\n")
	}
	para("Each job's figures are its own (its clones added up); \"total\" adds up jobs that do the same I/O at the same time.")
	para(fmt.Sprintf("A percentile marked ? rests on too few I/Os to be worth reading (p50 needs %d, p99 %d); a saturated job's thread used over %.0f%% of a core, so iolab itself may be the bottleneck.",
		hist.ReliableN(50), hist.ReliableN(99), 100*bench.SaturatedCPU))
	para("us+sy% is busy CPU; iowait is idle time with I/O outstanding (a thread waiting in io_uring_enter shows up there), not work.")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(steps) > 1 {
		fmt.Fprintln(w)
		return summary.WriteSummary(w, &r.Plan, steps)
	}
	return nil
}

// targetText describes a target on one line: "target /dev/loop1: disk
// loop1 (loop), 256MiB, schedulers none, mq-deadline (offered: none
// mq-deadline kyber bfq), io_poll off". The schedulers are those the
// run's steps ran under; what was not recorded reads "unknown".
func targetText(t *system.Target, steps []sweep.StepResult) string {
	var what string
	switch {
	case !t.IsBlock:
		what = "file on " + system.Known(t.Filesystem)
		if t.Disk != "" {
			what += ", disk " + t.Disk
		}
	case t.Partition != "":
		what = "partition " + t.Partition + " of disk " + system.Known(t.Disk)
	default:
		what = "disk " + system.Known(t.Disk)
	}
	var about []string
	for _, s := range []string{t.Driver, t.Model} {
		if s = strings.TrimSpace(s); s != "" {
			about = append(about, s)
		}
	}
	for _, s := range [][2]string{{"firmware", t.Firmware}, {"serial", t.Serial}, {"wwid", t.WWID}} {
		if v := strings.TrimSpace(s[1]); v != "" {
			about = append(about, s[0]+" "+v)
		}
	}
	if len(about) > 0 {
		what += " (" + strings.Join(about, ", ") + ")"
	}
	size := "size " + system.Unknown
	if t.Size > 0 {
		size = units.Bytes(float64(t.Size))
	}
	text := fmt.Sprintf("target %s: %s, %s", t.Path, what, size)
	if t.Disk == "" {
		return text
	}
	used := usedSchedulers(t, steps)
	if none := t.NoScheduler(); none != "" && (len(used) == 0 || len(used) == 1 && used[0] == "none") {
		return text + ", scheduler " + none + ", io_poll " + onOff(t.IOPoll)
	}
	switch len(used) {
	case 0:
		text += ", scheduler " + system.Unknown
	case 1:
		text += ", scheduler " + used[0]
	default:
		text += ", schedulers " + strings.Join(used, ", ")
	}
	if len(t.Schedulers) > 0 {
		text += " (offered: " + strings.Join(t.Schedulers, " ") + ")"
	}
	return text + ", io_poll " + onOff(t.IOPoll)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// usedSchedulers are the schedulers t's disk ran the steps under, in the
// order they first did; the one the target had when the run started when
// no step recorded one.
func usedSchedulers(t *system.Target, steps []sweep.StepResult) []string {
	var used []string
	for i := range steps {
		s := steps[i].Schedulers[t.Disk]
		if s == "" {
			s = steps[i].Step.Scheduler
		}
		if s != "" && !slices.Contains(used, s) {
			used = append(used, s)
		}
	}
	if len(used) == 0 && t.Scheduler != "" {
		used = []string{t.Scheduler}
	}
	return used
}

// stepKey is the columns that say which step a row is: its number, the
// value of each swept axis and, when steps repeat, the repeat.
type stepKey struct {
	axes    []sweep.Axis
	repeats bool
}

func newStepKey(plan *sweep.Plan, steps []sweep.StepResult) stepKey {
	var k stepKey
	for _, s := range plan.Swept() {
		k.axes = append(k.axes, s.Axis)
	}
	k.repeats = slices.ContainsFunc(steps, func(s sweep.StepResult) bool { return s.Step.Repeat > 0 })
	return k
}

// columns adds the key's columns to t; withAxes false leaves only the
// step number.
func (k stepKey) columns(t *textTable, withAxes bool) {
	t.column("step", true)
	if !withAxes {
		return
	}
	for _, a := range k.axes {
		spec, ok := sweep.LookupAxis(a)
		t.column(string(a), ok && spec.Numeric)
	}
	if k.repeats {
		t.column("rep", true)
	}
}

// cells are the key's cells for step s.
func (k stepKey) cells(s *sweep.Step, withAxes bool) []string {
	cells := []string{strconv.Itoa(s.Seq + 1)}
	if !withAxes {
		return cells
	}
	for _, a := range k.axes {
		cells = append(cells, units.Printable(s.Value(a)))
	}
	if k.repeats {
		cells = append(cells, strconv.Itoa(s.Repeat+1))
	}
	return cells
}

// omitted are the job options the key's axis columns say already.
func (k stepKey) omitted() []string {
	var o []string
	for _, a := range k.axes {
		o = append(o, string(a))
	}
	return o
}

// writePerformance prints a row per job of each step: its IOPS,
// bandwidth and p50 and p99 of the latency of kind k, and what to read
// them with. The job column is left out when it says the same on every
// row; the title says it then.
func writePerformance(b *strings.Builder, plan *sweep.Plan, steps []sweep.StepResult, k summary.LatKind) {
	key := newStepKey(plan, steps)
	type jobRow struct {
		lead      []string
		name, ran string // the job's name and what it ran beside the axes
		figs      []string
	}
	var rows []jobRow
	for i := range steps {
		f := summary.FiguresOf(&steps[i]).As(k)
		lead := key.cells(&steps[i].Step, true)
		if !f.HasResult {
			// A step that did not finish has no figures to show.
			rows = append(rows, jobRow{lead: lead, name: "-", figs: []string{"-", "-", "- ", "- ", f.Status}})
			continue
		}
		for k := range f.Jobs {
			j := &f.Jobs[k]
			var notes []string
			if f.Status != sweep.StepDone {
				notes = append(notes, f.Status)
			}
			if j.Saturated {
				notes = append(notes, fmt.Sprintf("saturated %.0f%%", 100*j.CPU))
			}
			if k == 0 && f.Disturbed != "" {
				notes = append(notes, "disturbed")
			}
			l := lead
			if k > 0 {
				l = make([]string, len(lead))
			}
			rows = append(rows, jobRow{lead: l, name: units.Printable(j.Name), ran: j.OptionsBut(key.omitted()...), figs: []string{
				units.Count(j.IOPS), units.Rate(j.BWMiB * (1 << 20)),
				showPercentile(j, 50, j.P50), showPercentile(j, 99, j.P99), strings.Join(notes, ", "),
			}})
		}
	}
	// One job doing the same on every row is said once, in the title.
	sameJob := len(rows) > 0
	for _, r := range rows {
		sameJob = sameJob && (r.name == "-" || r.name == rows[0].name && r.ran == rows[0].ran)
	}
	what, ok := map[summary.LatKind]string{
		summary.LatTotal: "latency from submission (lat)",
		summary.LatClat:  "completion latency (clat)",
		summary.LatSlat:  "submission latency (slat)",
	}[k]
	if !ok {
		what = k.Title() + " time" // a block-layer part: "queue (in the block layer) time"
	}
	title := "Per step: IOPS, bandwidth and " + what + " percentiles"
	switch {
	case !sameJob:
		title += " of each job"
	case rows[0].ran != "":
		title += " of job " + rows[0].name + ": " + rows[0].ran
	default:
		title += " of job " + rows[0].name
	}
	var t textTable
	key.columns(&t, true)
	if !sameJob {
		t.column("job", false)
	}
	for _, h := range []string{"IOPS", "BW", k.Name() + " p50 ", k.Name() + " p99 "} {
		t.column(h, true)
	}
	t.column("", false)
	for _, r := range rows {
		cells := r.lead
		if !sameJob {
			cells = append(slices.Clip(cells), strings.TrimSpace(r.name+" "+r.ran))
		}
		t.row(append(slices.Clip(cells), r.figs...)...)
	}
	b.WriteString(wrap(title, showWidth, "") + "\n")
	t.write(b)
}

// writeCPUDisk prints a row per step: the machine's CPU split (busy,
// irq, iowait, idle), the CPU time iolab spent per I/O, and the device's
// iostat -x figures. The steps are named by their axes too when that
// fits in showWidth, else by number only.
func writeCPUDisk(b *strings.Builder, plan *sweep.Plan, steps []sweep.StepResult) {
	key := newStepKey(plan, steps)
	var disks []string
	table := func(withAxes bool) *textTable {
		t := &textTable{}
		key.columns(t, withAxes)
		for _, h := range []string{"us+sy%", "hi+si%", "iowait%", "idle%", "CPU/IO", "r/s", "w/s", "r_await", "w_await", "aqu-sz", "%util"} {
			t.column(h, true)
		}
		for i := range steps {
			f := summary.FiguresOf(&steps[i])
			cells := key.cells(&steps[i].Step, withAxes)
			if !f.HasResult {
				t.row(append(cells, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")...)
				continue
			}
			perIO := "-"
			if f.PerIO > 0 {
				perIO = units.Duration(f.PerIO)
			}
			cells = append(cells, fmt.Sprintf("%.1f", f.Busy), fmt.Sprintf("%.1f", f.IRQ), fmt.Sprintf("%.1f", f.IOWait), fmt.Sprintf("%.1f", f.Idle), perIO)
			if !f.HasDisk {
				t.row(append(cells, "-", "-", "-", "-", "-", "-")...)
				continue
			}
			d := f.Disk
			if name := units.Printable(d.Name); name != "" && !slices.Contains(disks, name) {
				disks = append(disks, name)
			}
			t.row(append(cells, units.Count(d.ReadsPerSec), units.Count(d.WritesPerSec),
				await(d.ReadsPerSec, d.ReadAwait), await(d.WritesPerSec, d.WriteAwait),
				units.Number(d.AvgQueueSize), fmt.Sprintf("%.1f", d.Util))...)
		}
		return t
	}
	t := table(true)
	if t.width() > showWidth {
		t = table(false)
	}
	title := "Per step: the machine's CPU (us+sy busy, hi+si, iowait, idle), iolab's CPU time per I/O"
	if len(disks) > 0 {
		title += ", and iostat -x of " + strings.Join(disks, ", ")
	}
	b.WriteString(wrap(title, showWidth, "") + "\n")
	t.write(b)
}

// await writes iostat's r_await or w_await (ms per I/O) as a latency; "-"
// when there was no such I/O.
func await(perSec, ms float64) string {
	if perSec == 0 {
		return "-"
	}
	return units.Nanos(ms * 1e6)
}

// showPercentile writes a job's clat percentile p, marked ? when too few
// I/Os back it; a space in place of the mark keeps the units of a
// right-aligned column in line.
func showPercentile(j *summary.JobFigures, p float64, v time.Duration) string {
	if j.IOs == 0 {
		return "- "
	}
	if !j.Reliable(p) {
		return units.Duration(v) + "?"
	}
	return units.Duration(v) + " "
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// wrapCommand breaks a shell command into lines of at most width
// characters between its words, never inside a quoted one, each line
// ending in " \" so that the whole still pastes into a shell.
func wrapCommand(cmd string, width int, indent string) string {
	var words []string
	start, quoted := 0, false
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; {
		case c == '\\' && !quoted:
			i++
		case c == '\'':
			quoted = !quoted
		case c == ' ' && !quoted:
			words = append(words, cmd[start:i])
			start = i + 1
		}
	}
	words = append(words, cmd[start:])
	var b strings.Builder
	n := 0
	for i, word := range words {
		wl := utf8.RuneCountInString(word)
		if i > 0 && n+1+wl+2 > width {
			b.WriteString(" \\\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += wl
	}
	return b.String()
}
