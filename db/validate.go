package db

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on the text a run carries besides its name and labels: what the
// runs list shows of every run and filters on.
const (
	MaxHostLen   = 255  // a hostname (RFC 1035 bounds a whole name at 255)
	MaxKernelLen = 255  // a kernel release
	MaxTargetLen = 4096 // a path (PATH_MAX)
	MaxListItems = 64   // engines or schedulers
	MaxItemLen   = 64   // one engine variant or scheduler
)

// finalStatuses are the statuses a run can be stored with by anything but
// the process running it: an import or a push brings a run that ended.
var finalStatuses = []string{StatusDone, StatusPartial, StatusFailed, StatusCancelled, StatusInterrupted}

// CheckRun is the one check every write of a run goes through — CreateRun,
// ImportRun, and (through CleanName and CleanLabels) RenameRun and the
// label edits: names, labels, hosts, kernels, targets, engines and
// schedulers within their bounds and without control characters, a known
// status and source. It cleans r's name and labels in place (trimmed,
// duplicates dropped). An empty name is allowed here (a plan without
// --name), not in a rename.
func CheckRun(r *Run) error {
	if !slices.Contains(statuses, r.Status) {
		return fmt.Errorf("status %q is not one of %s", r.Status, strings.Join(statuses, ", "))
	}
	if !slices.Contains(sources, r.Source) {
		return fmt.Errorf("source %q is not one of %s", r.Source, strings.Join(sources, ", "))
	}
	if strings.TrimSpace(r.Name) != "" {
		name, err := CleanName(r.Name)
		if err != nil {
			return err
		}
		r.Name = name
	} else if r.Name != "" {
		return fmt.Errorf("the name is only blanks")
	}
	tags, err := CleanLabels(r.Tags)
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		tags = nil
	}
	r.Tags = tags
	for _, f := range []struct {
		what, v string
		max     int
	}{
		{"hostname", r.Hostname, MaxHostLen},
		{"host's hostname", r.Host.Hostname, MaxHostLen},
		{"kernel", r.Kernel, MaxKernelLen},
		{"host's kernel", r.Host.KernelRelease, MaxKernelLen},
		{"target", r.Target, MaxTargetLen},
	} {
		if err := checkText(f.what, f.v, f.max); err != nil {
			return err
		}
	}
	if len(r.Error) > MaxErrorLen {
		return fmt.Errorf("the run's error is %d bytes: at most %d", len(r.Error), MaxErrorLen)
	}
	if err := checkPlanText(&r.Plan); err != nil {
		return err
	}
	for _, l := range []struct {
		what string
		v    []string
	}{{"engines", r.Engines}, {"schedulers", r.Schedulers}} {
		if len(l.v) > MaxListItems {
			return fmt.Errorf("%d %s: at most %d", len(l.v), l.what, MaxListItems)
		}
		for _, v := range l.v {
			if err := checkText(l.what, v, MaxItemLen); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFinal refuses a status that only the process running a run may
// set: an imported run stored as running would never end.
func checkFinal(status string) error {
	if !slices.Contains(finalStatuses, status) {
		return fmt.Errorf("status %q: an imported run must have ended (one of %s)", status, strings.Join(finalStatuses, ", "))
	}
	return nil
}

// checkText checks one text field: valid UTF-8, at most max characters,
// no control characters.
func checkText(what, v string, max int) error {
	switch {
	case !utf8.ValidString(v):
		return fmt.Errorf("the %s is not valid UTF-8", what)
	case utf8.RuneCountInString(v) > max:
		return fmt.Errorf("the %s is longer than %d characters", what, max)
	case strings.ContainsFunc(v, isControl):
		return fmt.Errorf("the %s %q has control characters", what, v)
	}
	return nil
}

// isControl reports the characters no name or label may hold: C0 and C1
// controls and DEL (a terminal acts on them), and the bidirectional
// overrides that make text read other than it is stored.
func isControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
