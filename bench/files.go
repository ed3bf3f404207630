package bench

import (
	"os"
	"strconv"
	"strings"
)

// SplitFileList splits a fio list of names (filename, directory) on ':',
// as fio's get_next_str does: "\:" is a colon inside a name, empty names
// between colons are skipped, and an empty name at the end ends the list.
func SplitFileList(v string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
		}
		b.Reset()
	}
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			b.WriteByte(':')
			i++
		case v[i] == ':':
			flush()
		default:
			b.WriteByte(v[i])
		}
	}
	flush()
	return out
}

// formatFilename names a file of a job without filename (fio's
// make_filename): each keyword, matched without regard to case, is
// replaced in turn. $clientuid is empty: iolab is never fio's server.
func formatFilename(format, jobname string, jobnum, filenum int) string {
	if format == "" {
		return jobname + "." + strconv.Itoa(jobnum) + "." + strconv.Itoa(filenum)
	}
	for _, kw := range [...]struct{ key, val string }{
		{"$jobname", jobname}, {"$jobnum", strconv.Itoa(jobnum)}, {"$filenum", strconv.Itoa(filenum)}, {"$clientuid", ""},
	} {
		// Searching on after each replacement: a job name holding a
		// keyword would make fio's search from the start loop forever.
		for from := 0; ; {
			i := strings.Index(strings.ToLower(format[from:]), kw.key)
			if i < 0 {
				break
			}
			i += from
			format = format[:i] + kw.val + format[i+len(kw.key):]
			from = i + len(kw.val)
		}
	}
	return format
}

// FilePaths are the files the job does I/O on, named the way fio's
// add_job and add_file name them: filename's list, or nrfiles files named
// by filename_format; each behind directory (the one of the clone's jobnum
// when it lists several) when it is set. Relative paths are relative to
// the working directory, as in fio. A diskless job has none.
func (j *Job) FilePaths() []string {
	if j.Diskless() {
		return nil
	}
	prefix := ""
	if dirs := SplitFileList(j.Directory); len(dirs) > 0 {
		prefix = dirs[j.JobNum%len(dirs)] + "/"
	}
	var names []string
	if j.Filename != "" {
		names = SplitFileList(j.Filename)
	} else {
		n := max(j.NrFiles, 1)
		if fi, err := os.Lstat(j.Name); n == 1 && err == nil && !fi.Mode().IsRegular() {
			// fio's exists_and_not_regfile: a job named after a device
			// uses it.
			names = []string{j.Name}
		} else {
			for i := range n {
				names = append(names, formatFilename(j.FilenameFormat, j.Name, j.JobNum, i))
			}
		}
	}
	for i := range names {
		names[i] = prefix + names[i]
	}
	return names
}

// ConfigPaths lists the distinct files a config's jobs use, in order.
func ConfigPaths(cfg *Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range cfg.Groups {
		for i := range g.Jobs {
			for _, p := range g.Jobs[i].FilePaths() {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}
