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
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
)

// commandTable lists iolab's commands in the order help shows them.
func commandTable() []*command {
	return []*command{
		&serveCommand, &runCommand, &agentCommand, &calibrateCommand,
		&runsCommand, &showCommand, &compareCommand, &reportCommand, &exportCommand, &importCommand, &pushCommand,
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
	e := &env{stdout: stdout, stderr: stderr, logger: logger, commands: commandTable(),
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

// flagSet is a new, empty flag set for the command, which reports its
// errors by returning them, never by printing.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// checkRest looks at the arguments that are not the command's flags: an
// operand command refuses the flags among them (up to "--", which it
// drops), suggesting the nearest of its own; a fio command hands them on,
// unless one that fio does not know is nearer to its own flags than to
// any fio option (--sweeep is --sweep mistyped, not an unknown fio
// option).
func (c *command) checkRest(rest []string, own map[string]bool) ([]string, error) {
	ownNames := make([]string, 0, len(own))
	for n := range own {
		ownNames = append(ownNames, n)
	}
	var known []string
	if c.fioArgs {
		known = fioArgNames()
	}
	out := rest[:0:0]
	for i, a := range rest {
		if a == "--" {
			if c.fioArgs {
				return append(out, rest[i:]...), nil
			}
			return append(out, rest[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !c.fioArgs {
			return nil, usageError{fmt.Sprintf("%s: unknown flag --%s%s (see iolab help %s)", c.name, name, didYouMean(name, ownNames, "--"), c.name)}
		}
		if fio.KnownToFio(name) {
			out = append(out, a)
			continue
		}
		if near := units.Closest(name, append(known, ownNames...)); isOwn(near, own) {
			return nil, usageError{fmt.Sprintf("%s: unknown flag --%s%s", c.name, name, didYouMean(name, []string{near}, "--"))}
		}
		out = append(out, a)
	}
	return out, nil
}

func isOwn(name string, own map[string]bool) bool {
	_, ok := own[name]
	return ok
}

// fioArgNames are the names of the fio options iolab takes, and their
// aliases.
func fioArgNames() []string {
	var names []string
	for _, o := range fio.AllOptions() {
		names = append(names, o.Name)
		names = append(names, o.Aliases...)
	}
	return names
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

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// flagNames lists fs's flags, each with whether it takes a value (every
// flag but a bool one).
func flagNames(fs *flag.FlagSet) map[string]bool {
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		names[f.Name] = !ok || !b.IsBoolFlag()
	})
	return names
}

// splitOwn separates a command's own flags (names, with whether they take
// a value) from the fio options, job files and operands around them; what
// follows "--" is not looked at.
func splitOwn(args []string, names map[string]bool) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return own, append(rest, args[i:]...)
		}
		name, _, hasValue := strings.Cut(a, "=")
		takesValue, ok := names[strings.TrimLeft(name, "-")]
		if !ok || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		own = append(own, a)
		if takesValue && !hasValue && i+1 < len(args) {
			own = append(own, args[i+1])
			i++
		}
	}
	return own, rest
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// storePath is --db: a path, never empty (an empty --db would otherwise
// quietly mean the default store).
type storePath string

const storePathUsage = "the run store's SQLite `FILE` (default $XDG_DATA_HOME/iolab/iolab.db)"

func (p *storePath) String() string { return string(*p) }

func (p *storePath) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("--db needs a path; leave --db out for the default store")
	}
	*p = storePath(v)
	return nil
}

// dbFlag defines --db on fs.
func dbFlag(fs *flag.FlagSet) *string {
	var p string
	fs.Var((*storePath)(&p), "db", storePathUsage)
	return &p
}

// limitFlags defines --max-steps, --max-jobs and --max-buffers, the plan
// limits (sweep.Limits), on fs.
func limitFlags(fs *flag.FlagSet, l *sweep.Limits) {
	d := sweep.DefaultLimits()
	*l = d
	fs.IntVar(&l.Steps, "max-steps", d.Steps, "refuse a plan of more than `N` steps, repeats included")
	fs.IntVar(&l.Jobs, "max-jobs", d.Jobs, "refuse a step of more than `N` job threads at once")
	fs.Func("max-buffers", fmt.Sprintf("refuse a step that maps more than `SIZE` of I/O buffers, e.g. 8g (default %s)", units.FormatSize(d.Buffers)), func(v string) error {
		n, err := units.ParseSize(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("--max-buffers %q: a size such as 8g", v)
		}
		l.Buffers = n
		return nil
	})
}

// envDefault is v, or the environment variable key when v is empty: a
// flag whose default comes from the environment reads it after parsing,
// so help shows $KEY and never the secret it holds.
func envDefault(v, key string) string {
	if v == "" {
		return os.Getenv(key)
	}
	return v
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
