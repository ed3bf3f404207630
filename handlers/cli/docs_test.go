package cli

import (
	"bufio"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository's top, where the documents are, from this
// package's directory (where go test runs its tests).
var repoRoot = filepath.Join("..", "..")

// docFiles are the documents whose command lines and links are checked:
// the README, CONTRIBUTING.md and the manual in docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	manual, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(manual) == 0 {
		t.Fatal("docs/*.md: no manual")
	}
	return append([]string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "CONTRIBUTING.md")}, manual...)
}

// docCommand is a command line of a document's code block.
type docCommand struct {
	file string
	line int    // where it starts
	text string // its lines joined, without the backslashes that continue them
}

// docCommands extracts the command lines of path's fenced code blocks:
// the lines that start with "iolab " or "./iolab ", with the lines a
// trailing backslash continues them onto.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []docCommand
	inBlock := false
	var cur *docCommand
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur != nil {
			cur.text += " " + strings.TrimSuffix(line, `\`)
			if !strings.HasSuffix(line, `\`) {
				cmds, cur = append(cmds, *cur), nil
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock || !(strings.HasPrefix(line, "iolab ") || strings.HasPrefix(line, "./iolab ")) {
			continue
		}
		c := docCommand{file: path, line: n, text: strings.TrimSuffix(line, `\`)}
		if strings.HasSuffix(line, `\`) {
			cur = &c
			continue
		}
		cmds = append(cmds, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: the last line ends in a backslash", path, cur.line)
	}
	return cmds
}

// shellWords splits a command line as sh would, as far as the docs need:
// words, single and double quotes, backslash escapes; a comment, a
// redirection, a pipe or a separator ends the command.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '#' && !inWord, c == ';', c == '>', c == '<', c == '|', c == '&':
			end()
			return words
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return words
}

// runsWithoutDevice reports whether iolab args needs no device, store or
// network: help, presets, version, a --help, or a --parse-only run.
func runsWithoutDevice(args []string) bool {
	if len(args) > 0 && slices.Contains([]string{"help", "presets", "version"}, args[0]) {
		return true
	}
	return slices.ContainsFunc(args, func(a string) bool {
		return isHelpFlag(a) || a == "--parse-only" || a == "-parse-only"
	})
}

// parseableRun reports whether args, an iolab run on a device, can be
// checked with --parse-only as it stands: it names no job file (a word
// ending in .fio), holds no placeholder (…), and goes to no dashboard
// (--on, --push).
func parseableRun(args []string) bool {
	if len(args) == 0 || args[0] != "run" {
		return false
	}
	return !slices.ContainsFunc(args, func(a string) bool {
		return strings.Contains(a, "…") || strings.HasSuffix(a, ".fio") ||
			a == "--on" || a == "--push" || strings.HasPrefix(a, "--on=") || strings.HasPrefix(a, "--push=")
	})
}

// TestDocCommandLines runs every command line of the README, CONTRIBUTING.md
// and docs/ that needs no device through iolab itself, so the docs cannot
// drift from the commands: each must exit 0. A run on a device is checked
// with --parse-only added (parseableRun), and every other line must at
// least name a command iolab has.
func TestDocCommandLines(t *testing.T) {
	ran := 0
	for _, path := range docFiles(t) {
		for _, c := range docCommands(t, path) {
			words := shellWords(c.text)
			args := words[1:]
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") && lookupCommand(commandTable(), args[0]) == nil {
				t.Errorf("%s:%d: %q: iolab has no command %q", c.file, c.line, c.text, args[0])
				continue
			}
			if !runsWithoutDevice(args) {
				if !parseableRun(args) {
					continue
				}
				// A run on a device is read as written and checked,
				// running nothing: its options are fio's and iolab's.
				args = append(slices.Clip(args), "--parse-only")
			}
			ran++
			t.Logf("%s:%d: iolab %s", c.file, c.line, strings.Join(args, " "))
			if code, _, stderr := runOut(t, args...); code != 0 {
				t.Errorf("%s:%d: %s: exit %d\n%s", c.file, c.line, c.text, code, stderr)
			}
		}
	}
	// The README alone has two runs, help, presets and version: fewer
	// means the extraction lost them.
	if ran < 6 {
		t.Errorf("%d command lines of the docs ran; the README alone has 6", ran)
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"iolab help run   # a comment", []string{"iolab", "help", "run"}},
		{`iolab run --sweep 'rate_iops=10%..100%' --slo "p99.9<500us" --name=a\ b`,
			[]string{"iolab", "run", "--sweep", "rate_iops=10%..100%", "--slo", "p99.9<500us", "--name=a b"}},
		{"iolab export 7 > run7.json", []string{"iolab", "export", "7"}},
		{"iolab runs; iolab show 7", []string{"iolab", "runs"}},
		{"iolab run --name=x#y", []string{"iolab", "run", "--name=x#y"}},
	} {
		if got := shellWords(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestReadmeShort: the README is a front door a newcomer reads in five
// minutes; the manual is in docs/.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; at most 200 (move the rest to docs/)", n)
	}
}

// mdLink is a Markdown link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of the README, CONTRIBUTING.md and
// docs/ names a file or directory that exists, relative to its document.
func TestDocLinks(t *testing.T) {
	checked := 0
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				checked++
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
					t.Errorf("%s:%d: link %s: %v", path, n+1, m[1], err)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the README links to docs/")
	}
}

// TestReadmeCommands: the README's table of commands has a row for every
// command of commandTable, in its order.
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		listed = append(listed, m[1])
	}
	var want []string
	for _, c := range commandTable() {
		want = append(want, c.name)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("README.md's table of commands lists %q; commandTable has %q", listed, want)
	}
}

// TestDocImages: every image the README, CONTRIBUTING.md and docs/ show
// is a PNG that decodes, of a size a repository carries (docs/img's are
// 2× chart screenshots, about 100 KiB); every PNG under docs/img is shown
// somewhere; and each PNG docs/img/experiments.sh writes is committed.
func TestDocImages(t *testing.T) {
	const maxSize = 400 << 10
	image := regexp.MustCompile(`!\[([^\]]*)\]\(([^)\s]+\.png)\)`)
	shown := map[string]bool{}
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range image.FindAllStringSubmatch(string(b), -1) {
			file := filepath.Clean(filepath.Join(filepath.Dir(path), m[2]))
			shown[file] = true
			if strings.TrimSpace(m[1]) == "" {
				t.Errorf("%s: image %s has no alt text", path, m[2])
			}
			f, err := os.Open(file)
			if err != nil {
				t.Errorf("%s: image %s: %v", path, m[2], err)
				continue
			}
			cfg, err := png.DecodeConfig(f)
			st, _ := f.Stat()
			f.Close()
			switch {
			case err != nil:
				t.Errorf("%s: image %s is no PNG: %v", path, m[2], err)
			case cfg.Width < 600 || cfg.Height < 300:
				t.Errorf("%s: image %s is %d×%d: too small to read", path, m[2], cfg.Width, cfg.Height)
			case st.Size() > maxSize:
				t.Errorf("%s: image %s is %d KiB, over %d KiB", path, m[2], st.Size()>>10, maxSize>>10)
			}
		}
	}
	img := filepath.Join(repoRoot, "docs", "img")
	pngs, err := filepath.Glob(filepath.Join(img, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pngs {
		if !shown[filepath.Clean(p)] {
			t.Errorf("%s: no document shows it", p)
		}
	}
	script, err := os.ReadFile(filepath.Join(img, "experiments.sh"))
	if err != nil {
		t.Fatal(err)
	}
	written := regexp.MustCompile(`\bkeep [a-z-]+ [a-z]+ ([a-z0-9-]+\.png)`).FindAllStringSubmatch(string(script), -1)
	if len(written) < 4 {
		t.Errorf("experiments.sh keeps %d charts; the three experiments have 4 key charts", len(written))
	}
	for _, m := range written {
		if !shown[filepath.Join(img, m[1])] {
			t.Errorf("experiments.sh writes docs/img/%s, which no document shows", m[1])
		}
	}
}
