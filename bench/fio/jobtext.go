package fio

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"iolab/bench"
)

// FormatJobFile writes cfg's jobs as a fio job file, for fio itself to run
// them (fio --client sends a job file to its servers; it takes no jobs from
// its command line): a [global] section with cfg.GlobalOptions, then a
// section per job of cfg.Jobs (before numjobs; fio clones them again) with
// the options it records, as written.
//
// What a job holds but its options do not say — a runtime or ramp_time a
// plan sets, the stonewall a second job file implies, a global option
// that applied only to the jobs after it — is written in the job's
// section (in place of the job's own value for that option, if any),
// and the text is read back (ParseJobFile) to check that it makes the same
// jobs; if it does not, FormatJobFile says which job and values differ.
// A name or value a job file cannot hold (a line break, a ']' in a job
// name, blanks at either end, a ${VAR} that fio would expand where it
// runs) is an error.
func FormatJobFile(cfg *bench.Config) (string, error) {
	if len(cfg.Jobs) == 0 {
		return "", errors.New("fio job file: no jobs")
	}
	extra := make([][]bench.Option, len(cfg.Jobs))
	for pass := 0; ; pass++ {
		text, err := writeJobFile(cfg, extra)
		if err != nil {
			return "", err
		}
		back, err := ParseJobFile(strings.NewReader(text), "job file")
		if err != nil {
			return "", fmt.Errorf("fio job file: iolab cannot read back what it wrote: %w", err)
		}
		if len(back.Jobs) != len(cfg.Jobs) {
			return "", fmt.Errorf("fio job file: %d jobs read back, want %d", len(back.Jobs), len(cfg.Jobs))
		}
		var diffs []string
		added := false
		for i := range cfg.Jobs {
			d := jobDiff(&cfg.Jobs[i], &back.Jobs[i])
			if len(d) == 0 {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("job %q: %s", cfg.Jobs[i].Name, strings.Join(d, ", ")))
			if pass == 0 {
				more := spelledOut(&cfg.Jobs[i], &back.Jobs[i])
				extra[i] = append(extra[i], more...)
				added = added || len(more) > 0
			}
		}
		if len(diffs) == 0 {
			return text, nil
		}
		if !added {
			return "", fmt.Errorf("fio job file: the options do not say what the jobs do (%s)", strings.Join(diffs, "; "))
		}
	}
}

// writeJobFile writes the sections, each job's extra options after its own.
func writeJobFile(cfg *bench.Config, extra [][]bench.Option) (string, error) {
	var b strings.Builder
	if len(cfg.GlobalOptions) > 0 {
		b.WriteString("[global]\n")
		for _, o := range cfg.GlobalOptions {
			if err := writeOption(&b, o); err != nil {
				return "", fmt.Errorf("fio job file: [global]: %w", err)
			}
		}
	}
	for i, j := range cfg.Jobs {
		if err := checkSectionName(j.Name); err != nil {
			return "", fmt.Errorf("fio job file: %w", err)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", j.Name)
		for _, o := range withExtra(j.Options, extra[i]) {
			if o.Name == "name" {
				continue // the section's name
			}
			if err := writeOption(&b, o); err != nil {
				return "", fmt.Errorf("fio job file: job %q: %w", j.Name, err)
			}
		}
	}
	return b.String(), nil
}

// withExtra is opts with each extra option's value in place of the same
// option's, or after them.
func withExtra(opts, extra []bench.Option) []bench.Option {
	out := slices.Clone(opts)
	for _, e := range extra {
		if i := slices.IndexFunc(out, func(o bench.Option) bool { return o.Name == e.Name }); i >= 0 {
			out[i].Value = e.Value
			continue
		}
		out = append(out, e)
	}
	return out
}

func checkSectionName(name string) error {
	switch {
	case name == "":
		return errors.New("a job has no name")
	case strings.HasPrefix(name, "global"):
		return fmt.Errorf("job %q: fio reads a section whose name starts with global as [global]", name)
	case strings.ContainsAny(name, "[]\r\n"), name != strings.TrimSpace(name):
		return fmt.Errorf("job %q: a job file cannot name a section so (brackets, line breaks or blanks at either end)", name)
	}
	return nil
}

func writeOption(b *strings.Builder, o bench.Option) error {
	switch {
	case o.Name == "" || strings.ContainsAny(o.Name, "=[]#; \t\r\n"):
		return fmt.Errorf("option %q cannot be written in a job file", o.Name)
	case strings.ContainsAny(o.Value, "\r\n"), o.Value != strings.TrimSpace(o.Value):
		return fmt.Errorf("%s=%q: a job file cannot hold a line break or blanks at either end of a value", o.Name, o.Value)
	case strings.Contains(o.Value, "${"):
		return fmt.Errorf("%s=%s: fio would replace ${…} with the environment where it runs", o.Name, o.Value)
	}
	b.WriteString(o.Line())
	b.WriteByte('\n')
	return nil
}

// structuralFlags are the value-less options that place or report a job
// and that no OptionSpec reads back (they have no Get).
var structuralFlags = []struct {
	name  string
	field func(*bench.Job) bool
}{
	{"stonewall", func(j *bench.Job) bool { return j.Stonewall }},
	{"new_group", func(j *bench.Job) bool { return j.NewGroup }},
	{"group_reporting", func(j *bench.Job) bool { return j.GroupReporting }},
}

// spelledOut are the options that set what job has and back does not:
// each option that reads its value back (OptionSpec.Get) and the
// structural flags.
func spelledOut(job, back *bench.Job) []bench.Option {
	var out []bench.Option
	seen := map[string]bool{}
	for _, o := range AllOptions() {
		if o.Get == nil || seen[o.Name] {
			continue
		}
		seen[o.Name] = true
		want := o.Get(job)
		if want == o.Get(back) {
			continue
		}
		if want == "" {
			want = "0" // FormatDuration's zero; fio's too
		}
		out = append(out, bench.Option{Name: o.Name, Value: want})
	}
	for _, f := range structuralFlags {
		if f.field(job) != f.field(back) {
			v := "0"
			if f.field(job) {
				v = "1"
			}
			out = append(out, bench.Option{Name: f.name, Value: v})
		}
	}
	return out
}

// jobDiff names the fields (by their JSON names) in which two jobs
// differ, their options (as written) aside.
func jobDiff(a, b *bench.Job) []string {
	x, y := a.Clone(), b.Clone()
	x.Options, y.Options = nil, nil
	var out []string
	diffFields(reflect.ValueOf(x), reflect.ValueOf(y), &out)
	return out
}

func diffFields(a, b reflect.Value, out *[]string) {
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			diffFields(a.Field(i), b.Field(i), out)
			continue
		}
		if !f.IsExported() || reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		*out = append(*out, fmt.Sprintf("%s %v, read back %v", name, a.Field(i).Interface(), b.Field(i).Interface()))
	}
}
