package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// Command is the `iolab run` command line that reproduces the plan.
func (p *Plan) Command() string {
	if p.PTS != nil {
		parts := []string{"iolab", "pts"}
		for _, a := range p.PTS.CommandArgs(p.ptsDevice()) {
			parts = append(parts, shellQuote(a))
		}
		return strings.Join(parts, " ")
	}
	parts := []string{"iolab", "run"}
	for _, sw := range p.Sweeps {
		parts = append(parts, shellQuote("--sweep="+sw.String()))
	}
	if r := p.RepeatArg(); r != "" {
		parts = append(parts, "--repeat="+r)
	}
	if p.Discard {
		parts = append(parts, "--discard")
	}
	if p.DropCaches {
		parts = append(parts, "--drop-caches")
	}
	if p.AllowDiskScheduler {
		parts = append(parts, "--allow-disk-scheduler")
	}
	if p.Base.TraceBlock {
		parts = append(parts, "--trace-block")
	}
	if p.SLO != nil {
		parts = append(parts, shellQuote("--slo="+p.SLO.String()))
	}
	for _, a := range p.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// ptsDevice is the device a PTS plan runs on.
func (p *Plan) ptsDevice() string {
	for _, j := range p.Base.Jobs {
		if f := j.FilePaths(); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./:+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// JobFile is the plan's jobs as a fio job file; what a job file cannot say
// (sweeps, repeats, discard) is written as comments with the `iolab run`
// flags that add it.
func (p *Plan) JobFile() string {
	var b strings.Builder
	fmt.Fprintf(&b, "; %s\n", p.Name)
	for _, sw := range p.Sweeps {
		fmt.Fprintf(&b, "; iolab run --sweep=%s\n", shellQuote(sw.String()))
	}
	if r := p.RepeatArg(); r != "" {
		fmt.Fprintf(&b, "; iolab run --repeat=%s\n", r)
	}
	if p.Discard {
		b.WriteString("; iolab run --discard\n")
	}
	if p.DropCaches {
		b.WriteString("; iolab run --drop-caches\n")
	}
	if p.Base.TraceBlock {
		b.WriteString("; iolab run --trace-block\n")
	}
	if p.SLO != nil {
		fmt.Fprintf(&b, "; iolab run --slo=%s\n", shellQuote(p.SLO.String()))
	}
	if len(p.Inferred) > 0 {
		b.WriteString("; not in fio's output, inferred from its results:\n")
		for _, in := range p.Inferred {
			fmt.Fprintf(&b, ";   %s\n", in)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "; note: %s\n", n)
	}
	if len(p.Base.GlobalOptions) > 0 {
		b.WriteString("\n[global]\n")
		for _, o := range p.Base.GlobalOptions {
			b.WriteString(o.Line() + "\n")
		}
	}
	for _, j := range p.Base.Jobs {
		fmt.Fprintf(&b, "\n[%s]\n", j.Name)
		for _, o := range j.Options {
			b.WriteString(o.Line() + "\n")
		}
	}
	return b.String()
}

// RepeatArg is --repeat's value for the plan: a count above 1, or auto
// with its precision and cap; "" for one run of each step.
func (p *Plan) RepeatArg() string {
	if a := p.AutoRepeat; a != nil {
		return fmt.Sprintf("auto:%s%%:%d", strconv.FormatFloat(a.Within*100, 'f', -1, 64), a.Max)
	}
	if p.Repeat > 1 {
		return strconv.Itoa(p.Repeat)
	}
	return ""
}
