package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

var helpCommand = command{
	name:    "help",
	summary: "this list, or a command's flags and what it does",
	usage:   "[COMMAND]",
	flags: func(fs *flag.FlagSet) runFunc {
		return func(ctx context.Context, e *env, args []string) error {
			switch len(args) {
			case 0:
				return writeHelp(e.stdout, e.commands)
			case 1:
				c := lookupCommand(e.commands, args[0])
				if c == nil {
					return usageError{fmt.Sprintf("help: unknown command %q%s (see iolab help)", args[0], didYouMean(args[0], commandNames(e.commands), ""))}
				}
				return writeCommandHelp(e.stdout, c)
			}
			return e.usage()
		}
	},
}

// helpWidth is the width help text is wrapped to.
const helpWidth = 100

// writeHelp is `iolab help`: what iolab is and its commands.
func writeHelp(w io.Writer, cmds []*command) error {
	var b strings.Builder
	b.WriteString("iolab is a Linux block-I/O lab: fio's options and job files run by its own engines\n" +
		"(io_uring, libaio, psync, null), swept and repeated, every run stored, and a dashboard.\n\n")
	b.WriteString("usage: iolab COMMAND [flags] [arguments]   (iolab alone is iolab serve)\n\n")
	writeCommandList(&b, cmds)
	b.WriteString("\n\"iolab help COMMAND\" or \"iolab COMMAND --help\" tells a command's flags and what it does.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCommandList lists the commands with their summaries.
func writeCommandList(w io.Writer, cmds []*command) {
	rows := make([][2]string, len(cmds))
	for i, c := range cmds {
		rows[i] = [2]string{c.name, c.summary}
	}
	io.WriteString(w, "commands:\n")
	writeDefinitions(w, rows)
}

// synopsis is the command's usage line: "iolab show [--db FILE] ID".
func (c *command) synopsis() string {
	return strings.TrimSpace("iolab " + c.name + " " + c.usage)
}

// writeCommandHelp is `iolab help NAME`: the synopsis, the summary and
// about, the flags from the command's own flag set, and its own sections.
func writeCommandHelp(w io.Writer, c *command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", wrap("iolab "+c.name+": "+c.summary, helpWidth, "  "))
	fmt.Fprintf(&b, "usage: %s\n", wrap(c.synopsis(), helpWidth-len("usage: "), "         "))
	if c.about != "" {
		b.WriteString("\n")
		writeParagraphs(&b, c.about)
	}
	fs := c.flagSet()
	c.flags(fs)
	var rows [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		rows = append(rows, flagRow(f))
	})
	if len(rows) > 0 {
		b.WriteString("\nflags:\n")
		writeDefinitions(&b, rows)
	}
	if c.more != nil {
		c.more(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// flagRow is a flag as help lists it: "--db FILE" and its usage, with its
// default when that is not the zero value. A one-letter flag is "-o DIR",
// as usage lines and examples write it.
func flagRow(f *flag.Flag) [2]string {
	name, usage := flag.UnquoteUsage(f)
	term := "--" + f.Name
	if len(f.Name) == 1 {
		term = "-" + f.Name
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
		if name == "" || name == "value" || name == "string" || name == "int" {
			name = "VALUE"
		}
		term += " " + name
	}
	switch f.DefValue {
	case "", "0", "false", "[]":
	default:
		usage += " (default " + f.DefValue + ")"
	}
	return [2]string{term, usage}
}

// writeDefinitions writes terms and their meanings in two columns, the
// meanings wrapped to helpWidth under their own column; a term too long
// for the column has its meaning on the next line.
func writeDefinitions(w io.Writer, rows [][2]string) {
	col := 0
	for _, r := range rows {
		if n := utf8.RuneCountInString(r[0]); n <= 24 {
			col = max(col, n)
		}
	}
	indent := strings.Repeat(" ", 2+col+2)
	for _, r := range rows {
		lead := "  " + r[0]
		if pad := col - utf8.RuneCountInString(r[0]); pad >= 0 {
			lead += strings.Repeat(" ", pad+2)
		} else {
			lead += "\n" + indent
		}
		io.WriteString(w, lead+wrap(r[1], helpWidth-len(indent), indent)+"\n")
	}
}

// writeParagraphs writes text wrapped to helpWidth: paragraphs apart by
// blank lines are wrapped; lines that start with two spaces (examples)
// are kept as they are.
func writeParagraphs(w io.Writer, text string) {
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			io.WriteString(w, "\n")
		}
		var prose []string
		flush := func() {
			if len(prose) > 0 {
				io.WriteString(w, wrap(strings.Join(prose, " "), helpWidth, "")+"\n")
				prose = nil
			}
		}
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(line, "  ") {
				flush()
				io.WriteString(w, line+"\n")
				continue
			}
			prose = append(prose, strings.TrimSpace(line))
		}
		flush()
	}
}

// wrap breaks text into lines of at most width characters at spaces (a
// longer word stands alone), each line after the first starting with
// indent.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		wl := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+wl > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += wl
	}
	return b.String()
}
