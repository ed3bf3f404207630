package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
)

// fioHOWTO is where fio documents its options in full.
const fioHOWTO = "https://fio.readthedocs.io/en/latest/fio_doc.html"

// unitHelp says how a value of each of OptionSpec's units is written, for
// the units legend of `iolab run --help`; a unit not here has no legend
// line.
var unitHelp = []struct{ unit, help string }{
	{"size", "bytes, with k, m, g, t, p for powers of 1024: 4k, 1m, 10g"},
	{"time", "seconds unless a unit follows (us, ms, s, m, h, d): 10, 500ms, 2m"},
	{"int", "a whole number, decimal or 0x hexadecimal"},
	{"bool", "0 or 1"},
	{"flag", "0 or 1; given alone (--time_based) it means 1"},
	{"%", "a percentage, 0 to 100"},
}

// writeRunHelp writes `iolab run --help`'s own sections, all read from the
// tables: the sweep axes, the engines and their modes, the output options
// and every fio option iolab takes, by family and by engine, with its
// unit, default and meaning.
func writeRunHelp(w io.Writer) {
	var b strings.Builder
	b.WriteString("\nsweep axes (--sweep AXIS=v1,v2,…; on a numeric axis lo..hi is the powers of two between):\n")
	var rows [][2]string
	for _, a := range sweep.Axes() {
		help := a.Help
		if a.Numeric {
			help += " (numeric)"
		}
		rows = append(rows, [2]string{string(a.Name), help})
	}
	writeDefinitions(&b, rows)

	b.WriteString("\nengines (--ioengine=NAME; an ioengine sweep adds modes with +: io_uring+sqpoll+hipri):\n")
	rows = rows[:0]
	for _, e := range bench.Engines() {
		help := e.Help
		if len(e.Modes) > 0 {
			modes := make([]string, len(e.Modes))
			for i, m := range e.Modes {
				modes[i] = "+" + m.Name
				if m.Option != m.Name {
					modes[i] += " (" + m.Option + ")"
				}
			}
			help += "; modes " + strings.Join(modes, ", ")
		}
		rows = append(rows, [2]string{e.Name, help})
	}
	writeDefinitions(&b, rows)

	b.WriteString("\noutput (iolab's, like fio's program options):\n")
	writeDefinitions(&b, [][2]string{
		{"--output-format FORMAT", "normal (fio's text), json, json+ (json with the latency histograms' bins), or terse (fio's ';'-separated line per job; also minimal or csv, as in fio); several joined with commas (normal,terse) print in fio's order: terse, json, normal (default normal)"},
		{"--minimal", "the same as --output-format=terse"},
		{"--append-terse", "add terse to the formats chosen so far (fio's older spelling of ,terse)"},
		{"--terse-version N", "the terse line's version, as fio's: 2, 3, 4 (with trim) or 5 (with bandwidth and IOPS samples) (default 3)"},
		{"--status-interval TIME", "every TIME (fio's units: 1 is a second, 500ms) print a complete report of the running step's jobs in the output format, each cumulative since its measured start (ramp excluded), before the final report; JSON: one document each (100ms to 24h)"},
		{"--output FILE", "write the results to FILE instead of the standard output"},
		{"--parse-only", "read the options and job files, say what is wrong, and run nothing (exit status 0 when they are good)"},
	})

	b.WriteString("\n")
	writeParagraphs(&b, "fio options: fio's names, values and units, as --name=value here or name=value in a job file's "+
		"[global] or job section; an option iolab does not take is an error, never ignored. Their full semantics are "+
		"fio's: see fio's HOWTO ("+fioHOWTO+", or man fio). The few that fio takes and then ignores (its profiles' "+
		"options such as threads, its soft-deprecated verifysort) run with a note saying so.")
	writeUnitLegend(&b)
	var groups []optionGroup
	for _, f := range fio.OptionFamilies() {
		groups = append(groups, optionGroup{f.Name + " options: " + f.Help, f.Options})
	}
	for _, e := range bench.Engines() {
		groups = append(groups, optionGroup{fmt.Sprintf("%s options (with --ioengine=%s)", e.Name, e.Name), e.Options})
	}
	writeOptionTables(&b, groups)
	io.WriteString(w, b.String())
}

// optionGroup is a family's or an engine's options, under a title.
type optionGroup struct {
	title   string
	options []bench.OptionSpec
}

// optionUnit is how help names an option's unit: a flag's is "flag".
func optionUnit(o *bench.OptionSpec) string {
	if o.Flag {
		return "flag"
	}
	return o.Unit
}

// writeUnitLegend says how each unit the options use is written.
func writeUnitLegend(b *strings.Builder) {
	var rows [][2]string
	for _, u := range unitHelp {
		if slices.ContainsFunc(fio.AllOptions(), func(o bench.OptionSpec) bool { return optionUnit(&o) == u.unit }) {
			rows = append(rows, [2]string{u.unit, u.help})
		}
	}
	if len(rows) > 0 {
		b.WriteString("\nunits:\n")
		writeDefinitions(b, rows)
	}
}

// maxDefaultColumn is the widest default the default column takes; a
// longer one is said in the meaning.
const maxDefaultColumn = 10

// writeOptionTables writes each group that has options as a table of
// option, unit, default and meaning, the meaning wrapped under its own
// column; the columns line up across the groups.
func writeOptionTables(b *strings.Builder, groups []optionGroup) {
	nameW, unitW, defW := len("option"), len("unit"), len("default")
	for _, g := range groups {
		for _, o := range g.options {
			nameW = max(nameW, utf8.RuneCountInString(o.Name))
			unitW = max(unitW, utf8.RuneCountInString(optionUnit(&o)))
			if n := utf8.RuneCountInString(o.Default); n <= maxDefaultColumn {
				defW = max(defW, n)
			}
		}
	}
	indent := strings.Repeat(" ", 2+nameW+2+unitW+2+defW+2)
	row := func(name, unit, def, meaning string) {
		fmt.Fprintf(b, "  %-*s  %-*s  %-*s  %s\n", nameW, name, unitW, unit, defW, def,
			wrap(meaning, helpWidth-len(indent), indent))
	}
	for _, g := range groups {
		if len(g.options) == 0 {
			continue
		}
		b.WriteString("\n" + wrap(g.title, helpWidth, "  ") + ":\n")
		row("option", "unit", "default", "meaning")
		for _, o := range g.options {
			meaning, def := o.Help, o.Default
			if len(o.Aliases) > 0 {
				meaning += " (also " + strings.Join(o.Aliases, ", ") + ")"
			}
			switch {
			case def == "":
				def = "-"
			case utf8.RuneCountInString(def) > maxDefaultColumn:
				meaning += " (default " + def + ")"
				def = "…"
			}
			row(o.Name, optionUnit(&o), def, meaning)
		}
	}
}
