package fioserver

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
)

// CheckAllowedTarget says whether entry can be one of a fio server host's
// allowed targets: an absolute path written as its one plain spelling
// (filepath.Clean's: no "//", "/./", "..", trailing '/'), naming a file
// or device, not a directory of the kernel's (/proc, /sys) and holding
// nothing fio, or its job file, reads as more than a name (':' splits
// fio's file lists, '\' escapes, '$' starts fio's substitutions, ';' and
// '#' comments, quotes patterns; blanks and control characters). A job's
// filename is then compared with the entries byte for byte, on this
// machine: iolab cannot resolve anything on the host.
func CheckAllowedTarget(entry string) error {
	bad := func(why string) error {
		return fmt.Errorf("allowed target %q: %s", entry, why)
	}
	switch {
	case entry == "":
		return bad("empty")
	case !strings.HasPrefix(entry, "/"):
		return bad("not an absolute path: fio would take it in the server's working directory")
	case strings.ContainsAny(entry, `:\$;#='"[]`):
		return bad(`':', '\', '$', ';', '#', '=', quotes and brackets mean more than a name to fio (file lists, escapes, substitutions, comments, patterns)`)
	case strings.ContainsFunc(entry, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return bad("blanks and control characters are not taken")
	case filepath.Clean(entry) != entry:
		return bad(fmt.Sprintf("not written plainly (no //, /./, .. or trailing /): write %s", filepath.Clean(entry)))
	}
	for _, dir := range []string{"/", "/dev", "/proc", "/sys", "/dev/fd"} {
		if entry == dir {
			return bad("a directory, not a file or device")
		}
	}
	for _, dir := range []string{"/proc/", "/sys/", "/dev/fd/"} {
		if strings.HasPrefix(entry, dir) {
			return bad("under " + strings.TrimSuffix(dir, "/") + ", which leads to other files and kernel settings")
		}
	}
	return nil
}

// allowedTargets are h's entries that CheckAllowedTarget takes; a stored
// entry it refuses (one added before it checked) is never matched.
func (h Host) allowedTargets() []string {
	var out []string
	for _, e := range h.AllowTargets {
		if CheckAllowedTarget(e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// describeTargets says what h allows, and which of its stored entries
// are not taken and why (entries stored before they were checked).
func (h Host) describeTargets() string {
	ok := h.allowedTargets()
	s := "the host allows " + strings.Join(ok, ", ")
	if len(ok) == 0 {
		s = "the host allows no file or device: list its allowed targets on the Hosts page"
	}
	for _, e := range h.AllowTargets {
		if err := CheckAllowedTarget(e); err != nil {
			s += "; " + err.Error() + ": not taken, add it again as jobs must name it"
		}
	}
	return s
}

// checkJobFile refuses, on host h, the job file text that fio's client
// would send it, read as fio reads it (fio.ReadJobFileSections), unless
// every option it holds stays within what the host allows: a filename
// that is, byte for byte, one of the host's allowed targets (no ':' list,
// even of allowed entries, one file per job; no relative path, /proc,
// "..", "//"), every job naming its file (a diskless engine aside, which
// opens none), and no option that fio.OptionReach says makes up a file
// name, opens another file, runs a program or writes kernel settings —
// nor an option neither iolab nor that table knows.
//
// It checks the text, not the config it was written from, because the
// text is what the server runs.
func checkJobFile(h Host, text string) error {
	sections, err := fio.ReadJobFileSections(text)
	if err != nil {
		return hostError(h, "", ErrTarget, err.Error(), nil)
	}
	var bad []string
	refuse := func(i int, o bench.Option, why string) {
		where := "job " + sections[i].Name
		if sections[i].Name == "global" {
			// Named by the jobs it applies to.
			var jobs []string
			for _, s := range sections[i+1:] {
				if s.Name != "global" {
					jobs = append(jobs, s.Name)
				}
			}
			where = "[global] of job " + strings.Join(jobs, ", ")
		}
		bad = append(bad, fmt.Sprintf("%s: %s: %s", where, o.Line(), why))
	}
	for i, s := range sections {
		for _, o := range s.Options {
			if why := optionRefusal(h, o); why != "" {
				refuse(i, o, why)
			}
		}
		if s.Name == "global" {
			continue
		}
		eff := fio.EffectiveOptions(sections, i)
		value := func(name string) (string, bool) {
			k := slices.IndexFunc(eff, func(o bench.Option) bool { return o.Name == name })
			if k < 0 {
				return "", false
			}
			return eff[k].Value, true
		}
		engine := bench.NewJob().IOEngine // fio's psync
		if v, ok := value("ioengine"); ok {
			engine = v
		}
		e, known := bench.LookupEngine(engine)
		if _, ok := value("filename"); !ok && (!known || !e.Has(bench.Diskless)) {
			bad = append(bad, fmt.Sprintf("job %s: names no filename: fio would make one up (jobname.N.M in the server's working directory); give filename=one of the host's allowed targets", s.Name))
		}
		if f, ok := value("filename"); ok && isDevicePath(f) {
			if v, _ := value("allow_file_create"); v != "0" {
				bad = append(bad, fmt.Sprintf("job %s: filename=%s without allow_file_create=0: fio would make a file in the host's /dev if the device is missing there", s.Name, f))
			}
		}
		for _, d := range fio.ReachDefaults() {
			if w, ok := value(d.With); !ok || w == "" || w == "0" || w == "none" {
				continue
			}
			if _, given := value(d.Name); given {
				continue
			}
			o := bench.Option{Name: d.Name, Value: d.Value}
			if why := optionRefusal(h, o); why != "" {
				refuse(i, o, "fio's default with "+d.With+": "+why)
			}
		}
	}
	if len(bad) > 0 {
		return hostError(h, "", ErrTarget, strings.Join(bad, "; ")+"; "+h.describeTargets(), nil)
	}
	return nil
}

// optionRefusal is why option o may not be sent to host h; "" when it
// may.
func optionRefusal(h Host, o bench.Option) string {
	reach, why, known := fio.OptionReach(o.Name, o.Value)
	switch {
	case !known:
		return "an option iolab does not know, so it cannot tell what fio would do with it on the host"
	case reach == fio.ReachNone:
		return ""
	case reach == fio.ReachNamesTarget:
		return targetRefusal(h, o.Value)
	}
	return fmt.Sprintf("%s (%s); a fio server host runs only jobs on its allowed targets: run this job with iolab agent on the host", reach, why)
}

// targetRefusal is why filename v is not one of h's allowed targets, ""
// when it is. The comparison is literal; the reasons only help the user
// see why a path that looks like an entry is not one.
func targetRefusal(h Host, v string) string {
	if slices.Contains(h.allowedTargets(), v) {
		return ""
	}
	var why string
	switch {
	case strings.Contains(v, ":"):
		why = "a ':' list of files (fio's): one file per job, each one of the host's allowed targets"
	case !strings.HasPrefix(v, "/"):
		why = "a relative path, which fio takes in the server's working directory"
	case v == "/proc" || strings.HasPrefix(v, "/proc/") || v == "/sys" || strings.HasPrefix(v, "/sys/"):
		why = "under /proc or /sys, which lead to other devices and kernel settings"
	case filepath.Clean(v) != v:
		why = fmt.Sprintf("not written as listed (//, /./, .. or a trailing /: fio would open %s, or what it leads to on the host)", filepath.Clean(v))
	case slices.Contains(h.AllowTargets, v):
		why = CheckAllowedTarget(v).Error()
	default:
		why = "not one of the host's allowed targets"
	}
	return why
}

// isDevicePath reports whether p is under /dev, /dev/shm (files in
// memory) aside.
func isDevicePath(p string) bool {
	return strings.HasPrefix(p, "/dev/") && p != "/dev/shm" && !strings.HasPrefix(p, "/dev/shm/")
}

// noCreateOnDevices is cfg with allow_file_create=0 on every job whose
// filename is under /dev: fio creates a missing file, so an allowed
// device that is absent on the host would otherwise become a regular
// file in its /dev (devtmpfs: memory), which the job would then test and
// later jobs fill. The job fails instead ("file creation disallowed").
// cfg is not changed.
func noCreateOnDevices(cfg *bench.Config) (*bench.Config, error) {
	out := *cfg
	out.Jobs = make([]bench.Job, len(cfg.Jobs))
	for i := range cfg.Jobs {
		j := cfg.Jobs[i].Clone()
		if isDevicePath(j.Filename) && !j.NoFileCreate {
			if err := fio.ApplyOption(&j, "allow_file_create", "0"); err != nil {
				return nil, err
			}
		}
		out.Jobs[i] = j
	}
	return &out, nil
}
