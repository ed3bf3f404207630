package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

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

type stringList []string

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
