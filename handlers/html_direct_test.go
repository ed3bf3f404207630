package handlers

import (
	"html/template"
	"strings"
	"testing"

	"iolab/handlers/chart"
	"iolab/handlers/report"
	"iolab/web"
)

// OptionAttr is what html/template writes for data-option="{{.Option}}",
// byte for byte, whatever the option holds.
func TestOptionAttrIsTheTemplatesEscaping(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<div data-option="{{.Option}}">`))
	mine := template.Must(template.New("").Parse(`<div {{.OptionAttr}}>`))
	for _, opt := range []string{"", `{"a":"b"}`, `{"t":"a \u003cb\u003e \u0026 'c' + d"}`, "<>&'\"+\x00 é 漢 \t\n", strings.Repeat(`{"x":[1,2]}`, 1000)} {
		var want, got strings.Builder
		if err := tmpl.Execute(&want, chartView{Option: opt}); err != nil {
			t.Fatal(err)
		}
		if err := mine.Execute(&got, chartView{Option: opt}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("option %q: got %s, want %s", opt, got.String(), want.String())
		}
	}
}

// TableBody is what the template wrote for the table's rows, byte for
// byte, whatever the cells hold.
func TestTableBodyIsTheTemplates(t *testing.T) {
	tmpl := template.Must(template.New("").Funcs(templateFuncs).Parse(
		`<tbody>{{with .Table}}{{range .Rows}}<tr>{{range .}}<td class="num">{{cell .}}</td>{{end}}</tr>{{end}}{{end}}</tbody>`))
	mine := template.Must(template.New("").Parse(`<tbody>{{.TableBody}}</tbody>`))
	for _, rows := range [][][]string{nil, {}, {{"1", "2.5", "123456.789", "io_uring+sqpoll"}, {"", "<b>&'\"+\x00", "1e-9", "é 漢"}}} {
		data := &chartPageData{Table: &chart.Chart{Rows: rows}}
		var want, got strings.Builder
		if err := tmpl.Execute(&want, data); err != nil {
			t.Fatal(err)
		}
		if err := mine.Execute(&got, data); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("rows %q: got %s, want %s", rows, got.String(), want.String())
		}
	}
	if got := (&chartPageData{}).TableBody(); got != "" {
		t.Errorf("no table: %q", got)
	}
}

// StepRowsHTML writes the rows the run-steps template writes, byte for
// byte, whatever the steps hold.
func TestStepRowsHTMLIsTheTemplates(t *testing.T) {
	set := template.Must(template.New("").Funcs(templateFuncs).ParseFS(web.Templates(), "runparts.html"))
	template.Must(set.New("mine").Parse(`{{template "run-steps-head" .}}{{.StepRowsHTML}}{{template "run-steps-foot" .}}`))
	odd := "<b>&'\"+\x00 é"
	job := func(name string, total bool, extra string) report.JobRow {
		return report.JobRow{Name: name, Total: total, Options: "randread 4k" + extra, IOPS: "1.2k", BW: "4.7" + extra, P50: "81 µs", P99: "1.2 ms"}
	}
	unreliable := job("r", false, "")
	unreliable.Unreliable = [2]string{"from 12 I/Os: p50 needs 20", ""}
	saturated := job("w", false, odd)
	saturated.Saturated, saturated.Unreliable = "a thread used 95 %"+odd, [2]string{"", odd}
	saturated.Outcomes = []string{"verify crc32c: 256 blocks read back intact", "steady state attained" + odd}
	traced := job("r", false, "")
	traced.Block, traced.FewOneToOne = [4]string{"2.1 µs", "3.1 ms / 5.2 ms" + odd, "", "1 µs"}, "72 % timed"+odd
	for _, steps := range [][]report.StepRow{
		nil,
		{{Seq: 1, Label: "iodepth=1", Status: "failed", Error: "boom", Jobs: []report.JobRow{{}}}},
		{
			{Seq: 1, Label: "ioengine=io_uring iodepth=4 repeat 1", Status: "done", Jobs: []report.JobRow{job("a", false, ""), job("b", false, ""), job("total", true, "")},
				Busy: "12", IRQ: "1.5", IOWait: "3", PerIO: "2.1 µs", RPS: "1k", WPS: "12", RAwait: "0.1", WAwait: "0.2", AQU: "3", Util: "99"},
			{Seq: 2, Label: odd, Status: "done" + odd, Disturbed: "nvme0n1 did 1 GiB (12%) more" + odd, Jobs: []report.JobRow{unreliable, saturated, traced}, Busy: odd},
		},
	} {
		for _, block := range []bool{false, true} {
			data := &runPageData{Steps: steps, ReliableP50: 20, ReliableP99: 1000, SaturatedPct: 90, Block: block, MinOneToOnePct: 90}
			var want, got strings.Builder
			if err := set.ExecuteTemplate(&want, "run-steps", data); err != nil {
				t.Fatal(err)
			}
			if err := set.ExecuteTemplate(&got, "mine", data); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%d steps, block %v:\n got %s\nwant %s", len(steps), block, got.String(), want.String())
			}
			if block && len(steps) == 2 && !strings.Contains(got.String(), "3.1 ms / 5.2 ms") {
				t.Errorf("a traced job's parts are not in its row:\n%s", got.String())
			}
		}
	}
}
