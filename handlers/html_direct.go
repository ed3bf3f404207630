package handlers

import (
	"html/template"
	"strconv"
	"strings"

	"iolab/handlers/report"
)

// OptionAttr is the chart's data-option attribute, escaped as
// html/template escapes a quoted attribute's value (its
// htmlReplacementTable), byte for byte. The template's own escaper goes
// rune by rune through reflection, and a long run's timeline option is
// megabytes: a third of its page's build.
func (v chartView) OptionAttr() template.HTMLAttr {
	var b strings.Builder
	// Sized to the escaped text: a JSON option is a fifth quotes, each
	// written as five bytes, and growing a few MB as it goes cost as much
	// as the escaping.
	n := len(v.Option) + 16
	for _, e := range attrEscapes {
		n += strings.Count(v.Option, e[0]) * (len(e[1]) - len(e[0]))
	}
	b.Grow(n)
	b.WriteString(`data-option="`)
	_, _ = attrValueEscaper.WriteString(&b, v.Option)
	b.WriteByte('"')
	return template.HTMLAttr(b.String())
}

// attrEscapes are what attrValueEscaper replaces, and with what.
var attrEscapes = [...][2]string{{"\x00", "\uFFFD"}, {`"`, "&#34;"}, {"&", "&amp;"}, {"'", "&#39;"}, {"+", "&#43;"}, {"<", "&lt;"}, {">", "&gt;"}}

var attrValueEscaper = func() *strings.Replacer {
	var pairs []string
	for _, e := range attrEscapes {
		pairs = append(pairs, e[0], e[1])
	}
	return strings.NewReplacer(pairs...)
}()

// TableBody is the rows of the chart page's table, each cell written by
// report.TableCell and escaped as html/template escapes text, byte for byte, as
// {{range .Rows}}<tr>{{range .}}<td class="num">{{cell .}}</td>{{end}}</tr>{{end}}
// writes them: a whole run's timeline is tens of thousands of rows, and
// the template took most of its page's build calling cell through
// reflection.
func (d *chartPageData) TableBody() template.HTML {
	if d.Table == nil {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, row := range d.Table.Rows {
		n += 9 + 22*len(row)
		for _, c := range row {
			n += len(c)
		}
	}
	b.Grow(n)
	for _, row := range d.Table.Rows {
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString(`<td class="num">`)
			_, _ = attrValueEscaper.WriteString(&b, report.TableCell(c))
			b.WriteString("</td>")
		}
		b.WriteString("</tr>")
	}
	return template.HTML(b.String())
}

// StepRowsHTML is the rows of the run page's step table, as the
// run-steps template writes them (runparts.html), byte for byte: a long
// run's table is thousands of rows, and the template took a third of
// its page's build to write them through reflection. The test holds the
// two to each other.
func (d *runPageData) StepRowsHTML() template.HTML {
	var b strings.Builder
	b.Grow(768 * len(d.Steps))
	esc := func(s string) { _, _ = attrValueEscaper.WriteString(&b, s) }
	for si := range d.Steps {
		s := &d.Steps[si]
		n := strconv.Itoa(len(s.Jobs))
		td := func(class, v string) {
			b.WriteString(`<td`)
			if class != "" {
				b.WriteString(` class="`)
				b.WriteString(class)
				b.WriteByte('"')
			}
			b.WriteString(` rowspan="`)
			b.WriteString(n)
			b.WriteString(`">`)
			esc(v)
			b.WriteString(`</td>`)
		}
		for i := range s.Jobs {
			j := &s.Jobs[i]
			b.WriteString(`<tr class="st-`)
			esc(s.Status)
			if i > 0 {
				b.WriteString(` job-more`)
			}
			if j.Total {
				b.WriteString(` job-total`)
			}
			b.WriteString(`">`)
			if i == 0 {
				td("", strconv.Itoa(s.Seq))
				td("axes", s.Label)
				b.WriteString(`<td rowspan="`)
				b.WriteString(n)
				b.WriteString(`">`)
				esc(s.Status)
				if s.Disturbed != "" {
					b.WriteString(` <span class="flag" title="`)
					esc(s.Disturbed)
					b.WriteString(`">disturbed</span>`)
				}
				b.WriteString(`</td>`)
			}
			b.WriteString(`<td class="job">`)
			if j.Name != "" {
				b.WriteString(`<strong>`)
				esc(j.Name)
				b.WriteString(`</strong>`)
			}
			if j.Options != "" {
				b.WriteString(` <span class="muted">`)
				esc(j.Options)
				b.WriteString(`</span>`)
			}
			if j.Saturated != "" {
				b.WriteString(` <span class="flag" title="`)
				esc(j.Saturated)
				b.WriteString(`">saturated</span>`)
			}
			if j.FewOneToOne != "" {
				b.WriteString(` <span class="flag" title="the block-layer parts are of the I/Os timed: one-to-one onto a request, or split with every piece seen">`)
				esc(j.FewOneToOne)
				b.WriteString(`</span>`)
			}
			for _, o := range j.Outcomes {
				b.WriteString(`<div class="outcome">`)
				esc(o)
				b.WriteString(`</div>`)
			}
			b.WriteString("</td>\n<td class=\"num\">")
			esc(j.IOPS)
			b.WriteString(`</td><td class="num">`)
			esc(j.BW)
			b.WriteString("</td>\n")
			for k, p := range [2]string{j.P50, j.P99} {
				if k > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(`<td class="num`)
				if j.Unreliable[k] != "" {
					b.WriteString(` unreliable"`)
					b.WriteString(` title="`)
					esc(j.Unreliable[k])
				}
				b.WriteString(`">`)
				esc(p)
				b.WriteString(`</td>`)
			}
			if d.Block {
				for _, v := range j.Block {
					b.WriteString(`<td class="num">`)
					esc(v)
					b.WriteString(`</td>`)
				}
			}
			if i == 0 {
				for _, v := range [...]string{s.Busy, s.IRQ, s.IOWait, s.PerIO, s.RPS, s.WPS, s.RAwait, s.WAwait, s.AQU, s.Util} {
					td("num", v)
				}
			}
			b.WriteString("</tr>\n")
		}
	}
	if len(d.Steps) == 0 {
		b.WriteString(`<tr><td colspan="18" class="muted">No step has finished yet.</td></tr>`)
	}
	b.WriteByte('\n')
	return template.HTML(b.String())
}
