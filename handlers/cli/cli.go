// Package cli is iolab's command line: the commands are the CLI's
// handlers as the routes are the web's. Its commands are the rows of
// commandTable (one cmd_NAME.go each): `iolab help` lists them,
// `iolab help COMMAND` or `iolab COMMAND --help` tells one's flags, and
// `iolab` alone is `iolab serve`. Main runs one command line.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
)

// commandTable lists iolab's commands in the order help shows them.
func commandTable() []*command {
	return []*command{
		&serveCommand, &runCommand, &ptsCommand, &agentCommand, &calibrateCommand,
		&runsCommand, &pruneCommand, &showCommand, &compareCommand, &reportCommand, &exportCommand, &importCommand, &pushCommand,
		&presetsCommand, &versionCommand, &helpCommand,
	}
}

// command is one of iolab's commands: its row says everything dispatch
// and help need. Adding a command is a cmd_NAME.go declaring its command
// and a row in commandTable.
type command struct {
	name    string
	summary string // one line, for the list of commands
	usage   string // what follows "iolab NAME" in its synopsis
	// about is what help says beyond the summary: paragraphs separated by
	// blank lines; lines indented by two spaces are examples, kept as
	// they are. "" when the summary says it all.
	about string
	// fioArgs: the arguments that are not the command's own flags are fio
	// options and job files, handed on as written. Otherwise they are
	// operands, and an unknown flag is an error.
	fioArgs bool
	// flags defines the command's flags on fs and returns what runs the
	// command once they are parsed, with the arguments left.
	flags func(fs *flag.FlagSet) runFunc
	// more writes help's sections after the flags (run's sweep axes,
	// engines and fio options); nil when there are none.
	more func(w io.Writer)
}

// runFunc runs a command with its flags parsed.
type runFunc func(ctx context.Context, e *env, args []string) error

// env is what a command runs with.
type env struct {
	stdin          io.Reader // iolab import - reads it
	stdout, stderr io.Writer
	logger         *slog.Logger
	runner         *bench.Runner
	cmd            *command   // the command running
	commands       []*command // the table, for help
}

// usage is the usage error of the command running: its synopsis.
func (e *env) usage() error {
	return usageError{"usage: " + e.cmd.synopsis()}
}

// Main runs the command line args (os.Args[1:]), writing to stdout and
// stderr, and returns the process's exit status: iolab's main is
// os.Exit(cli.Main(…)).
func Main(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "iolab: %s\n", printableLines(err.Error()))
	}
	return exitCode(err)
}

// exitCode is 0 on success, 2 for a bad command line or job option (as
// fio), and 1 for anything that went wrong while running.
func exitCode(err error) int {
	var oe *bench.OptionError
	var ue usageError
	var pe *sweep.PreflightError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &oe), errors.As(err, &ue), errors.As(err, &pe):
		return 2
	}
	return 1
}

// usageError is a bad command line outside the job options.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr, logger: logger, commands: commandTable(),
		runner: &bench.Runner{Sys: system.FS{}, Log: logger}}
	name, rest := "serve", args
	switch {
	case len(args) == 0:
	case isHelpFlag(args[0]):
		name, rest = "help", args[1:]
	case args[0] == "--version" || args[0] == "-version":
		name, rest = "version", args[1:]
	case strings.HasPrefix(args[0], "-"):
		// iolab [--listen ADDR] … is iolab serve [--listen ADDR] ….
	default:
		name, rest = args[0], args[1:]
	}
	c := lookupCommand(e.commands, name)
	if c == nil {
		near := didYouMean(name, commandNames(e.commands), "")
		if near == "" {
			writeCommandList(stderr, e.commands)
		}
		return usageError{fmt.Sprintf("unknown command %q%s", name, near)}
	}
	e.cmd = c
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.exec(ctx, e, rest)
}

// exec parses the command's flags out of args and runs it; -h or --help
// anywhere before "--" prints its help instead.
func (c *command) exec(ctx context.Context, e *env, args []string) error {
	if wantsHelp(args) {
		return writeCommandHelp(e.stdout, c)
	}
	fs := c.flagSet()
	runCmd := c.flags(fs)
	names := flagNames(fs)
	own, rest := splitOwn(args, names)
	rest, err := c.checkRest(rest, names)
	if err != nil {
		return err
	}
	if err := fs.Parse(own); err != nil {
		return usageError{fmt.Sprintf("%s: %v (see iolab help %s)", c.name, err, c.name)}
	}
	return runCmd(ctx, e, rest)
}

// lookupCommand finds a command by name; nil when there is none.
func lookupCommand(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames(cmds []*command) []string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	return names
}

// didYouMean is " (did you mean PREFIX+NAME?)" with the candidate nearest
// to s, or "" when none is near.
func didYouMean(s string, candidates []string, prefix string) string {
	if near := units.Closest(s, candidates); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", prefix+near)
	}
	return ""
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printableLines escapes the control characters of each line of s (an
// error may quote a job file's or a stored name's bytes) and keeps the
// line breaks.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = units.Printable(l)
	}
	return strings.Join(lines, "\n")
}
