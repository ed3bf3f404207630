package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRunSeveralFormatsLikeFio: a run asked for several formats (fio's
// --output-format=A,B and its older --append-terse) prints them in the
// order fio 3.33 prints them — the job lines first, then the terse lines,
// the JSON document and the normal statistics — whatever order they were
// asked in. fio and iolab run the same job on one file; their outputs are
// cut into runs of one kind of line and the kinds compared in order.
func TestRunSeveralFormatsLikeFio(t *testing.T) {
	fio := lookFio(t)
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	job := []string{"--name=j", "--filename=" + target, "--size=1m", "--rw=read", "--bs=64k"}
	for _, formats := range [][]string{
		{"--append-terse"},
		{"--output-format=normal,terse"},
		{"--output-format=json,terse"},
		{"--output-format=normal,json"},
		{"--output-format=normal,json,terse"},
		{"--output-format=json", "--append-terse"},
		{"--append-terse", "--output-format=json"},
	} {
		t.Run(strings.Join(formats, " "), func(t *testing.T) {
			args := append(slices.Clone(job), formats...)
			out, err := exec.Command(fio, args...).Output()
			if err != nil {
				t.Fatalf("fio: %v", err)
			}
			want := lineKinds(string(out))
			code, stdout, stderr := runOut(t, append([]string{"run", "--no-save"}, args...)...)
			if code != 0 {
				t.Fatalf("iolab: exit %d\n%s", code, stderr)
			}
			if got := lineKinds(stdout); !slices.Equal(got, want) {
				t.Errorf("iolab prints %q, fio %q\niolab:\n%s\nfio:\n%s", got, want, stdout, out)
			}
		})
	}
}

var (
	jobLine   = regexp.MustCompile(`^\S+: \(g=\d+\): rw=`)
	terseLine = regexp.MustCompile(`^[2-5];`)
)

// lineKinds cuts a run's output into runs of one kind of line — "head"
// (the job lines, version and thread count fio prints as a run starts),
// "terse", "json" (one per document) and "stats" (the normal output's
// statistics) — and returns the kinds in order.
func lineKinds(out string) []string {
	var kinds []string
	add := func(k string) {
		if len(kinds) == 0 || kinds[len(kinds)-1] != k || k == "json" {
			kinds = append(kinds, k)
		}
	}
	inJSON := false
	for l := range strings.SplitSeq(out, "\n") {
		switch {
		case inJSON:
			inJSON = l != "}"
		case l == "{":
			inJSON = true
			add("json")
		case strings.TrimSpace(l) == "":
		case jobLine.MatchString(l), strings.HasPrefix(l, "Starting "),
			strings.HasPrefix(l, "fio-"), strings.HasPrefix(l, "iolab-"):
			add("head")
		case terseLine.MatchString(l):
			add("terse")
		default:
			add("stats")
		}
	}
	return kinds
}
