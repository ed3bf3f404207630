package handlers

import (
	"context"
	"html/template"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"

	"iolab/handlers/report"
)

// A run whose every free-text field holds HTML, Markdown and table
// syntax: the README.md of its bundle holds none of it as markup. Outside
// the code blocks of its plan there is no '<' at all, no unescaped pipe
// or backquote inside a table's cell (each row has its head's columns),
// no link and no line broken by a value.
func TestReportMarkdownEscapes(t *testing.T) {
	const tag = "<img src=x onerror=alert(1)>"
	hostile := func(what string) string { return what + tag + "|`x`[l](javascript:alert(1))*b*_i_\\|&lt;b&gt;" }
	ts := newTestServer(t, Config{})
	ctx := context.Background()
	seeded := seedFairnessRun(t, ts.store)
	e, err := ts.store.Export(ctx, seeded.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.Run.UID = ""
	e.Run.Name = hostile("name")
	e.Run.Hostname, e.Run.Host.Hostname = hostile("host"), hostile("host")
	e.Run.Kernel, e.Run.Host.KernelRelease = hostile("kernel"), hostile("kernel")
	e.Run.Host.KernelVersion = hostile("version")
	e.Run.Host.CPUModel = hostile("cpu")
	e.Run.Host.Arch = hostile("arch")
	e.Run.Target = hostile("target")
	e.Run.Targets[0].Path, e.Run.Targets[0].Disk = hostile("path"), hostile("disk")
	e.Run.Status, e.Run.Error = db.StatusFailed, hostile("run error")+"\n# heading"
	for i := range e.Steps {
		st := &e.Steps[i]
		for g := range st.Result.Groups {
			for j := range st.Result.Groups[g].Jobs {
				jr := &st.Result.Groups[g].Jobs[j]
				jr.Name = hostile("job") + " | forged | row |"
				jr.Job.Name = jr.Name
			}
		}
		if i == 1 {
			st.Status, st.Error = "failed", hostile("step error")+"\n- item"
		}
	}
	id, err := ts.store.Import(ctx, e, db.SourceImport)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, ts.store, []int64{id}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := rep.WriteBundle(ctx, dir, report.BundleOptions{Chromium: "no-such-chromium"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{"host&lt;img src=x onerror=alert(1)&gt;\\|\\`x\\`\\[l\\](javascript:alert(1))\\*b\\*\\_i\\_\\\\\\|&amp;lt;b&amp;gt;",
		"kernel&lt;img", "cpu&lt;img", "job&lt;img", "run error&lt;img", "step error&lt;img", "path&lt;img", "name&lt;img"} {
		if !strings.Contains(md, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	inCode, cols := false, 0
	for n, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if strings.Contains(line, "<") {
			t.Errorf("line %d has a raw '<': %s", n+1, line)
		}
		if strings.HasPrefix(line, "# heading") || strings.HasPrefix(line, "- item") || strings.HasPrefix(line, "| forged") {
			t.Errorf("line %d was started by a value: %s", n+1, line)
		}
		if strings.Contains(strings.ReplaceAll(line, "\\](", ""), "](javascript") {
			t.Errorf("line %d has a link: %s", n+1, line)
		}
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		// Cells are split by the pipes no backslash escapes.
		got := len(splitCells(line))
		if cols == 0 {
			cols = got
		} else if got != cols {
			t.Errorf("line %d has %d cells, its table %d: %s", n+1, got, cols, line)
		}
		if strings.Count(strings.ReplaceAll(line, "\\\\", ""), "`") != strings.Count(strings.ReplaceAll(line, "\\\\", ""), "\\`") {
			t.Errorf("line %d has an unescaped backquote: %s", n+1, line)
		}
	}
	if inCode {
		t.Error("a code block is left open")
	}
}

// splitCells splits a Markdown table row at its unescaped pipes.
func splitCells(line string) []string {
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			cur.WriteByte(line[i])
			cur.WriteByte(line[i+1])
			i++
		case line[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, cur.String())
}

// A report's chart that leaves series out to stay readable says which,
// as the dashboard's does: a numjobs × iodepth run's IOPS chart has a
// series per numjobs value, nine for a chart of 8. The HTML and the
// bundle's README both carry the note.
func TestReportSaysWhatAChartHides(t *testing.T) {
	ts := newTestServer(t, Config{})
	plan := labPlan(t, "numjobs × iodepth", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring"}, 1,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "8"}},
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}})
	run := seedLab(t, ts.store, plan, system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab"}, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		return labStep{iops: 50e3, median: 100 * time.Microsecond, spread: 0.2}
	})
	rep, err := report.Build(context.Background(), ts.store, []int64{run.ID}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hidden string
	for _, c := range rep.Charts {
		if c.Kind == "iops" {
			hidden = c.Hidden
		}
	}
	if !strings.HasPrefix(hidden, "Not drawn (") || !strings.Contains(hidden, "numjobs=9") {
		t.Fatalf("the IOPS chart's note: %q, want it to name numjobs=9", hidden)
	}
	var html strings.Builder
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `<p class="chart-hidden" role="note">`+template.HTMLEscapeString(hidden)+`</p>`) {
		t.Errorf("the report's HTML lacks the note %q", hidden)
	}
	dir := t.TempDir()
	if _, err := rep.WriteBundle(context.Background(), dir, report.BundleOptions{Chromium: "no-such-chromium"}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Not drawn (") {
		t.Errorf("the bundle's README lacks the note:\n%s", md)
	}
}
