package fio

import "iolab/bench"

// OptionFamily is one table of general fio options (options_*.go): the
// options of one concern, which help lists under its name.
type OptionFamily struct {
	Name    string // "job", "files", …
	Help    string // one line: what the family's options are about
	Options []bench.OptionSpec
}

// optionFamilies lists the general options, a table per family, in the
// order help shows them; each engine has its own (bench.Engine.Options).
// A new family is a file with its table and a row here.
var optionFamilies = []struct {
	name, help string
	options    *[]bench.OptionSpec
}{
	{"job", "what a job does: its target, pattern, size, depth, time, groups and batching", &jobOptions},
	{"files", "the files a job does I/O on: names, directory, counts, sizes, layout and clean-up", &fileOptions},
	{"pattern", "where the I/Os go: random distributions, generators, the share of random I/O", &patternOptions},
	{"pacing", "when I/Os are issued and how jobs run together: rates, think time, delays, CPUs, statistics", &pacingOptions},
	{"flow", "jobs that share a flow issue I/Os in proportion to their weights", &flowOptions},
	{"numa", "NUMA placement: the nodes whose CPUs run a job and whose memory holds its buffers", &numaOptions},
	{"errors", "what a job does on an I/O error: the errors it goes on after, and how each is reported", &errorOptions},
	{"logs", "fio's log files: bandwidth, IOPS, latency and histogram logs, per I/O or averaged", &logOptions},
	{"buffers", "what the buffers hold and how writes are synced: contents, fsync, O_SYNC, page cache", &bufferOptions},
	{"verify", "data verification: checksummed headers in every write, read back and checked", &verifyOptions},
	{"steady", "ending a job on what it measures: steady state, and the deepest queue that meets a latency target", &steadyOptions},
	{"priority", "the I/O priority of the job's thread (ioprio_set); per I/O, see the io_uring and libaio cmdprio options", &ioprioOptions},
}

// OptionFamilies lists the general options by family, in help's order;
// with each engine's (bench.Engine.Options) they are AllOptions.
func OptionFamilies() []OptionFamily {
	out := make([]OptionFamily, len(optionFamilies))
	for i, f := range optionFamilies {
		out[i] = OptionFamily{Name: f.name, Help: f.help, Options: *f.options}
	}
	return out
}
