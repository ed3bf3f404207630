package report

import (
	"fmt"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/system"
	"iolab/db"
)

// markdown writes the report for wikis and tickets: the tables in
// Markdown, each chart as its PNG (or its SVG without one) with links to
// its CSV, each run's plan as a job file. names are the charts' files
// without extension.
func (r *Report) Markdown(names []string, png bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\niolab report · written %s · figures per job, never summed across unlike jobs; failed steps carry no figures. The whole report, offline: [report.html](report.html).\n",
		mdText(r.Title), r.Generated)
	if r.Compare {
		r.markdownCompared(&b)
	}
	r.markdownFleet(&b)
	if !r.Compare && r.Runs[0].PTS != nil {
		markdownPTS(&b, r.Runs[0].Run.ID, r.Runs[0].PTS) // a PTS report leads with the specification's
	}
	if len(r.StatDiffs) > 0 || r.StatErr != "" {
		b.WriteString("\n## Statistical diff\n\nPer point and job, the change as the ratio of the medians over the repeats (each side's repeats beside its median: ×5), its confidence interval, the Hodges–Lehmann shift in a column of its own and the Mann–Whitney test's p; all rows: [stat-diff.csv](stat-diff.csv).\n")
		if r.StatErr != "" {
			fmt.Fprintf(&b, "\n%s\n", mdText(r.StatErr))
		}
		for _, d := range r.StatDiffs {
			markdownStatDiff(&b, &d)
		}
	}
	r.markdownKnees(&b)
	r.markdownCharts(&b, names, png)
	if r.MaxIOPS != nil && len(r.MaxIOPS.Rows) > 0 {
		b.WriteString("\n## Max IOPS per kernel × engine\n\n")
		var rows [][]string
		for _, row := range r.MaxIOPS.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = TableCell(c)
			}
			rows = append(rows, cells)
		}
		mdTable(&b, r.MaxIOPS.Columns, rows)
	}
	for _, run := range r.Runs {
		r.markdownRun(&b, &run)
	}
	return b.String()
}

// markdownCompared writes what a comparison leads with: the runs, what
// makes them unfit to compare, and how their environments and plans
// differ.
func (r *Report) markdownCompared(b *strings.Builder) {
	b.WriteString("\nRuns:")
	for i, run := range r.Runs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(b, "%s %d %s (%s, %s)", sep, run.Run.ID, mdText(run.Run.Name), mdText(system.Known(run.Run.Hostname)), mdText(system.Known(run.Run.Kernel)))
	}
	b.WriteString("\n")
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Before comparing\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(b, "- **%s**: %s\n", mdText(w.Field), mdText(w.Msg))
		}
	}
	b.WriteString("\n## Differences\n\n")
	if len(r.EnvDiffs) == 0 {
		b.WriteString("The runs' environments and plans are the same.\n")
		return
	}
	head := []string{"field"}
	for _, run := range r.Runs {
		head = append(head, fmt.Sprintf("run %d", run.Run.ID))
	}
	var rows [][]string
	for _, d := range r.EnvDiffs {
		rows = append(rows, append([]string{d.Field}, d.Values...))
	}
	mdTable(b, head, rows)
}

// markdownStatDiff writes one statistical diff: its table, the points
// only one side has, and its notes.
func markdownStatDiff(b *strings.Builder, d *StatDiffView) {
	fmt.Fprintf(b, "\n### %s against %s (the base)\n\n**%s**\n\n", mdText(d.B), mdText(d.A), mdText(d.Summary))
	head := append([]string(nil), d.Axes...)
	if d.Jobs {
		head = append(head, "job")
	}
	head = append(head, "figure", d.A, d.B, summary.ChangeHeading, fmt.Sprintf("%g %% interval", d.Conf), summary.ShiftHeading, "p", "verdict")
	var rows [][]string
	for i, l := range d.Lines {
		row := append([]string(nil), l.Point...)
		if d.Jobs {
			row = append(row, l.Job)
		}
		v := l.Verdict
		if l.Holds {
			v += " *"
		}
		if n := d.NoteOf[i]; n > 0 {
			v += fmt.Sprintf(" [%d]", n)
		}
		rows = append(rows, append(row, l.Metric, l.Base, l.Other, l.Change, l.Interval, l.Shift, l.P, v))
	}
	mdTable(b, head, rows)
	if d.OnlyA != "" {
		fmt.Fprintf(b, "\nOnly in %s: %s\n", mdText(d.A), mdText(d.OnlyA))
	}
	if d.OnlyB != "" {
		fmt.Fprintf(b, "\nOnly in %s: %s\n", mdText(d.B), mdText(d.OnlyB))
	}
	if d.Holds || len(d.Notes) > 0 {
		b.WriteString("\n")
	}
	if d.Holds {
		b.WriteString("- \\* still significant when every row of the table is taken together (Holm's correction)\n")
	}
	for i, n := range d.Notes {
		fmt.Fprintf(b, "- [%d] %s\n", i+1, mdText(n))
	}
}

// markdownCharts writes each chart as its image (PNG with png, else SVG)
// with links to its CSV and SVG, or why it was not drawn.
func (r *Report) markdownCharts(b *strings.Builder, names []string, png bool) {
	if len(r.Charts) == 0 {
		return
	}
	b.WriteString("\n## Charts\n")
	for i, c := range r.Charts {
		fmt.Fprintf(b, "\n### %s\n\n", mdText(c.Title))
		if c.Error != "" {
			fmt.Fprintf(b, "Not drawn: %s\n", mdText(c.Error))
			continue
		}
		img := names[i] + ".svg"
		if png {
			img = names[i] + ".png"
		}
		fmt.Fprintf(b, "![%s](%s)\n\n[CSV](%s.csv) · [SVG](%s.svg)\n", mdText(c.Title), img, names[i], names[i])
		if c.Hidden != "" {
			fmt.Fprintf(b, "\n%s\n", mdText(c.Hidden))
		}
	}
}

func (r *Report) markdownRun(b *strings.Builder, run *RunPart) {
	x := run.Run
	fmt.Fprintf(b, "\n## Run %d · %s (%s)\n\n%s · %s · %s · created %s\n", x.ID, mdText(x.Name), x.Status,
		mdText(system.Known(x.Hostname)), mdText(system.Known(x.Kernel)), mdText(x.Target), db.FormatTime(x.Created))
	if x.Error != "" {
		fmt.Fprintf(b, "\nError: %s\n", mdText(x.Error))
	}
	if len(run.Steps) > 0 {
		fmt.Fprintf(b, "\n### Steps\n\nEvery column, unformatted: [run-%d-steps.csv](run-%d-steps.csv).\n\n", x.ID, x.ID)
		var rows [][]string
		for _, s := range run.Steps {
			for i, j := range s.Jobs {
				row := []string{"", "", "", j.Name, j.IOPS, j.BW, j.P50, j.P99}
				if i == 0 {
					status := s.Status
					if s.Disturbed != "" {
						status += " (disturbed)"
					}
					row[0], row[1], row[2] = fmt.Sprint(s.Seq), s.Label, status
				}
				if j.Unreliable[0] != "" {
					row[6] += " (few I/Os)"
				}
				if j.Unreliable[1] != "" {
					row[7] += " (few I/Os)"
				}
				if j.Saturated != "" {
					row[3] += " (saturated)"
				}
				if run.Block {
					row = append(row, j.Block[:]...)
					if j.FewOneToOne != "" {
						row[3] += " (" + j.FewOneToOne + ")"
					}
				}
				rows = append(rows, row)
			}
		}
		head := []string{"#", "axes", "status", "job", "IOPS", "BW MiB/s", run.Lat.Name() + " p50", run.Lat.Name() + " p99"}
		if run.Block {
			for _, part := range summary.BlockKinds {
				head = append(head, part.Name()+" p50 / p99")
			}
		}
		mdTable(b, head, rows)
		// What verify, steady state and latency_target concluded: text
		// too long for a cell.
		first := true
		for _, s := range run.Steps {
			for _, j := range s.Jobs {
				for _, o := range j.Outcomes {
					if first {
						b.WriteString("\n")
						first = false
					}
					fmt.Fprintf(b, "- step %d, job %s: %s\n", s.Seq, mdText(j.Name), mdText(o))
				}
			}
		}
	} else {
		fmt.Fprintf(b, "\nSteps: [run-%d-steps.csv](run-%d-steps.csv).\n", x.ID, x.ID)
	}
	if len(run.Errors) > 0 {
		b.WriteString("\n### Errors\n\n")
		for _, e := range run.Errors {
			fmt.Fprintf(b, "- %s failed: %s\n", mdText(e.StepList()), mdText(e.Error))
		}
	}
	if len(run.Notes) > 0 {
		b.WriteString("\n### Read with care\n\n")
		for _, n := range run.Notes {
			fmt.Fprintf(b, "- step %d: %s\n", n.Step, mdText(n.Text))
		}
	}
	if h := x.Host; h.Hostname != "" || h.KernelRelease != "" {
		fmt.Fprintf(b, "\n### Environment\n\n- host: %s (%s)\n- kernel: %s %s\n- CPU: %s\n- memory: %s\n- IOMMU: %s\n",
			mdText(system.Known(h.Hostname)), mdText(h.Arch), mdText(system.Known(h.KernelRelease)), mdText(h.KernelVersion),
			mdText(h.CPU()), mdText(h.Memory()), mdText(h.IOMMUDesc()))
	}
	for _, t := range x.Targets {
		fmt.Fprintf(b, "- target: %s (%s), scheduler %s\n", mdText(t.Path), mdText(t.Disk), mdText(t.Scheduler))
	}
	fmt.Fprintf(b, "\n### Plan\n\n```\n%s\n```\n\n```ini\n%s\n```\n", fence(run.Command), fence(run.JobFile))
}

// mdText makes any text from a run (names, hosts, kernels, CPU models,
// options, labels, errors) plain text in Markdown and in the HTML a
// Markdown renderer lets through: no tag (< > and & as entities), no
// markup (the backslash and every character that opens inline markup
// or a cell backslash-escaped; with [ escaped, ( and ! start nothing),
// no newline, so it can neither start a line's block nor
// break a table's row.
func mdText(s string) string { return mdEscaper.Replace(s) }

var mdEscaper = strings.NewReplacer(
	"\r\n", " ", "\r", " ", "\n", " ",
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	"\\", "\\\\", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_",
	"[", "\\[", "]", "\\]", "~", "\\~",
)

// fence keeps a code block closed: no line of its own of backquotes.
func fence(s string) string { return strings.ReplaceAll(s, "```", "ʼʼʼ") }

// mdTable writes a table; every head and cell is text (mdText), so a
// value from a run can neither end its cell nor carry markup or a tag.
func mdTable(b *strings.Builder, head []string, rows [][]string) {
	esc := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = mdText(c)
		}
		return out
	}
	escaped := make([][]string, len(rows))
	for i, row := range rows {
		escaped[i] = esc(row)
	}
	mdRows(b, esc(head), escaped)
}

// mdRows writes a table of cells that are Markdown already: each of their
// texts went through mdText.
func mdRows(b *strings.Builder, head []string, rows [][]string) {
	cell := func(s string) string {
		if s == "" {
			return " "
		}
		return s
	}
	b.WriteString("|")
	for _, h := range head {
		b.WriteString(" " + cell(h) + " |")
	}
	b.WriteString("\n|")
	for range head {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, row := range rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
}
