package cli

import (
	"bytes"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/golden"
	"iolab/bench/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the output the tests produce")

// runOut runs iolab with args and returns its exit code, standard output
// and standard error.
func runOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(args, &stdout, &stderr)
	if err != nil {
		stderr.WriteString("iolab: " + err.Error() + "\n")
	}
	return exitCode(err), stdout.String(), stderr.String()
}

// TestHelp pins the help of iolab and of every command to
// testdata/help/NAME.txt (go test -run TestHelp -update rewrites them, to be
// read as text). Each command answers -h, --help and iolab help NAME
// alike, on the standard output with status 0, within helpWidth columns.
func TestHelp(t *testing.T) {
	check := func(t *testing.T, name string, variants ...[]string) {
		t.Helper()
		code, want, stderr := runOut(t, variants[0]...)
		if code != 0 || stderr != "" {
			t.Fatalf("iolab %q: exit %d, stderr %q", variants[0], code, stderr)
		}
		golden.Check(t, *update, filepath.Join("testdata", "help", name+".txt"), []byte(want))
		for _, args := range variants[1:] {
			if code, got, stderr := runOut(t, args...); code != 0 || stderr != "" || got != want {
				t.Errorf("iolab %q: exit %d, stderr %q, and its output differs from iolab %q's", args, code, stderr, variants[0])
			}
		}
		for i, line := range strings.Split(want, "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth && !strings.Contains(line, "https://") {
				t.Errorf("line %d is %d columns wide:\n%s", i+1, n, line)
			}
		}
	}
	t.Run("iolab", func(t *testing.T) {
		check(t, "iolab", []string{"help"}, []string{"--help"}, []string{"-h"})
	})
	for _, c := range commandTable() {
		t.Run(c.name, func(t *testing.T) {
			check(t, c.name, []string{c.name, "--help"}, []string{c.name, "-h"}, []string{"help", c.name},
				[]string{c.name, "-help"})
		})
	}
	// Help wins wherever it stands before "--", as with Go's flags.
	if code, out, _ := runOut(t, "run", "--name=x", "--iodepth=4", "-h"); code != 0 || !strings.HasPrefix(out, "iolab run: ") {
		t.Errorf("iolab run --name=x --iodepth=4 -h: exit %d\n%s", code, out)
	}
}

// TestRunHelpListsTheTables: iolab run --help lists every fio option with
// its unit and default, every sweep axis and every engine, read from their
// tables — an option added to a table is in the help without more ado.
func TestRunHelpListsTheTables(t *testing.T) {
	_, out, _ := runOut(t, "run", "--help")
	lines := strings.Split(out, "\n")
	row := func(name string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, "  "+name+" ") {
				return l
			}
		}
		return ""
	}
	// The options' tables come after the flags, axes, engines and units.
	optionLines := lines[slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  option ") }):]
	words := strings.Join(strings.Fields(out), " ")
	for _, o := range fio.AllOptions() {
		l := ""
		for _, line := range optionLines {
			if strings.HasPrefix(line, "  "+o.Name+" ") {
				l = line
				break
			}
		}
		unit, def := o.Unit, o.Default
		if o.Flag {
			unit = "flag"
		}
		if def == "" {
			def = "-"
		}
		if l == "" || !strings.Contains(l, " "+unit+" ") || len(def) <= maxDefaultColumn && !strings.Contains(l, " "+def+" ") {
			t.Errorf("option %s (unit %s, default %s) is not listed as such: %q", o.Name, unit, def, l)
		}
		for _, a := range o.Aliases {
			if !strings.Contains(words, "also "+a) && !strings.Contains(words, ", "+a) {
				t.Errorf("alias %s of %s is not listed", a, o.Name)
			}
		}
	}
	for _, f := range fio.OptionFamilies() {
		if len(f.Options) > 0 && !strings.Contains(out, f.Name+" options: ") {
			t.Errorf("family %s has no heading", f.Name)
		}
	}
	for _, e := range bench.Engines() {
		if row(e.Name) == "" {
			t.Errorf("engine %s is not listed", e.Name)
		}
	}
	for _, a := range sweep.Axes() {
		if row(string(a.Name)) == "" {
			t.Errorf("sweep axis %s is not listed", a.Name)
		}
	}
	if !strings.Contains(out, fioHOWTO) {
		t.Errorf("run --help does not say where fio's options are documented")
	}
}

// TestDidYouMean: a mistyped command or flag is a usage error (status 2)
// that names the nearest one.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `unknown command "rnu" (did you mean "run"?)`},
		{[]string{"shwo", "1"}, `unknown command "shwo" (did you mean "show"?)`},
		{[]string{"help", "calibrat"}, `help: unknown command "calibrat" (did you mean "calibrate"?)`},
		{[]string{"show", "--dbb", "x.db", "1"}, `show: unknown flag --dbb (did you mean "--db"?)`},
		{[]string{"serve", "--listn", ":0"}, `serve: unknown flag --listn (did you mean "--listen"?)`},
		{[]string{"import", "--lable", "x", "f.json"}, `import: unknown flag --lable (did you mean "--label"?)`},
		{[]string{"run", "--name=x", "--sweeep", "iodepth=1,2"}, `run: unknown flag --sweeep (did you mean "--sweep"?)`},
		{[]string{"run", "--name=x", "--repaet=2"}, `run: unknown flag --repaet (did you mean "--repeat"?)`},
		{[]string{"calibrate", "--ruonds=2", "--name=x"}, `calibrate: unknown flag --ruonds (did you mean "--rounds"?)`},
		// Nearer to a fio option than to run's flags, or fio's own: fio's
		// parser says so.
		{[]string{"run", "--name=x", "--iodeph=4"}, `unknown option "iodeph" (did you mean "iodepth"?)`},
		{[]string{"run", "--name=x", "--debug=io"}, `fio's --debug is not supported by iolab`},
		{[]string{"run", "--name=x", "--eta=never"}, `fio's --eta is not supported by iolab`},
		{[]string{"calibrate", "--name=x", "--cpuclock-test"}, `fio's --cpuclock-test is not supported by iolab`},
	} {
		code, out, stderr := runOut(t, tt.args...)
		if code != 2 || out != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("iolab %q: exit %d, stdout %q, stderr:\n%s\nwant status 2 and %q", tt.args, code, out, stderr, tt.want)
		}
	}
	// With nothing near, the list of commands.
	if code, _, stderr := runOut(t, "frobnicate"); code != 2 || !strings.Contains(stderr, "commands:\n") || strings.Contains(stderr, "did you mean") {
		t.Errorf("iolab frobnicate: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestOperands: commands refuse operands they do not take, with their
// usage.
func TestOperands(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "extra"}, "usage: iolab version"},
		{[]string{"presets", "extra"}, "usage: iolab presets"},
		{[]string{"show"}, "usage: iolab show [--db FILE] [--lat KIND] ID"},
		{[]string{"show", "seven"}, `iolab show: "seven" is not a run id`},
		{[]string{"push", "1"}, "usage: iolab push [--db FILE] [--token TOKEN] ID URL"},
		{[]string{"help", "run", "show"}, "usage: iolab help [COMMAND]"},
	} {
		if code, _, stderr := runOut(t, tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("iolab %q: exit %d, stderr %q, want status 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
