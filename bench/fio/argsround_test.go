package fio

import (
	"slices"
	"strings"
	"testing"
)

// A job file whose sections say name= (as iolab's own rendering of a
// plan does) goes to a command line and back as the same jobs: the name
// is said once, not twice (a second --name would start an empty job).
func TestJobFileArgsRoundTrip(t *testing.T) {
	cfg, err := ParseJobFile(strings.NewReader("[global]\nrw=randread\n[a]\nname=a\nfilename=/dev/loop3\nbs=4k\n[b]\nfilename=/dev/loop4\n"), "jobfile")
	if err != nil {
		t.Fatal(err)
	}
	args := cfg.Args()
	back, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var names, files []string
	for _, j := range back.Jobs {
		names, files = append(names, j.Name), append(files, j.Filename)
	}
	if !slices.Equal(names, []string{"a", "b"}) || !slices.Equal(files, []string{"/dev/loop3", "/dev/loop4"}) {
		t.Fatalf("args %q: jobs %q on %q", args, names, files)
	}
}
