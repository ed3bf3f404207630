package fio

import (
	"fmt"
	"strconv"

	"iolab/bench"
	"iolab/bench/units"
)

// bufferOptions are fio's options for what the buffers hold and how writes
// are synced: buffer contents, fsync, O_SYNC, the page cache. Their Set
// functions do what fio's option callbacks do when the option is parsed
// (options.c str_buffer_pattern_cb, str_buffer_compress_cb, str_dedupe_cb),
// in the order the options come; the fix-ups fio makes once a job is
// complete are bench.Job.WriteBuffers.
var bufferOptions = []bench.OptionSpec{
	{Name: "buffered", Example: "0", Unit: "bool", Default: "1", Help: "use the page cache (buffered=0 is direct=1)",
		Set: func(j *bench.Job, v string) error {
			b, err := units.ParseFlag(v)
			if err == nil {
				j.Direct = !b
			}
			return err
		},
		Get: func(j *bench.Job) string { return boolString(!j.Direct) }},
	{Name: "zero_buffers", Flag: true, Unit: "bool", Default: "0", Help: "write zeros (and no scramble, unless scramble_buffers is given)",
		Set: setBuffers(bench.SetZeroBuffers, func(j *bench.Job) *bool { return &j.ZeroBuffers }),
		Get: bench.GetBool(func(j *bench.Job) *bool { return &j.ZeroBuffers })},
	{Name: "refill_buffers", Flag: true, Unit: "bool", Default: "0", Help: "fill each write's buffer anew (random, or what the other buffer options say)",
		Set: setBuffers(bench.SetRefillBuffers, func(j *bench.Job) *bool { return &j.RefillBuffers }),
		Get: bench.GetBool(func(j *bench.Job) *bool { return &j.RefillBuffers })},
	{Name: "scramble_buffers", Example: "0", Unit: "bool", Default: "1",
		Help: "mark every written sector with its offset and a sequence number, so no two are alike (when not refilled)",
		Set:  setBuffers(bench.SetScrambleBuffers, func(j *bench.Job) *bool { return &j.ScrambleBuffers }),
		Get:  bench.GetBool(func(j *bench.Job) *bool { return &j.ScrambleBuffers })},
	{Name: "buffer_pattern", Example: `0xdeadbeef`, Unit: "pattern",
		Help: `fill write buffers with this pattern: 0x hex, decimal, "text", 'file', joined`,
		Set: func(j *bench.Job, v string) error {
			p, err := parseBufferPattern(v)
			if err != nil {
				return err
			}
			j.BufferPattern = p
			// Jobs that read (or compress) refill, or reads would leave
			// their data in the buffers; no scramble, no zeros.
			j.RefillBuffers = j.CompressPercentage > 0 || j.Reads()
			j.ScrambleBuffers, j.ZeroBuffers = false, false
			return nil
		}},
	{Name: "buffer_compress_percentage", Example: "50", Unit: "%",
		Help: "make writes this compressible: each chunk this much zeros (or pattern), the rest random",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseInt(v, 0, 100)
			if err == nil {
				j.CompressPercentage = n
				j.BuffersSet |= bench.SetCompress
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.Itoa(j.CompressPercentage) }},
	{Name: "buffer_compress_chunk", Example: "4k", Unit: "size", Default: "512",
		Help: "the chunk buffer_compress_percentage applies to (0: the block size)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseSize(v)
			if err == nil && n > 1<<30 {
				err = fmt.Errorf("%s is beyond any block size", v)
			}
			if err == nil {
				j.CompressChunk = int(n)
				j.BuffersSet |= bench.SetCompressChunk
			}
			return err
		},
		Get: func(j *bench.Job) string { return units.FormatSize(int64(j.CompressChunk)) }},
	{Name: "dedupe_percentage", Example: "50", Unit: "%",
		Help: "this share of writes repeat an earlier write's data (refills every write)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseInt(v, 0, 100)
			if err == nil {
				j.DedupePercentage = n
				j.BuffersSet |= bench.SetCompress
				j.RefillBuffers = true
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.Itoa(j.DedupePercentage) }},
	{Name: "dedupe_mode", Example: "working_set", Unit: "mode", Default: bench.DedupeRepeat,
		Help: "how dedupe_percentage's writes repeat: repeat (the last write that was none) or working_set (one of the job's first writes, at random)",
		Set: func(j *bench.Job, v string) error {
			if err := oneOf(func(j *bench.Job) *string { return &j.DedupeMode }, bench.DedupeRepeat, bench.DedupeWorkingSet)(j, v); err != nil {
				return err
			}
			j.BuffersSet |= bench.SetDedupeMode
			return nil
		},
		Get: func(j *bench.Job) string { return j.DedupeMode }},
	{Name: "dedupe_working_set_percentage", Example: "10", Unit: "%", Default: "5",
		Help: "working_set: how many of the job's first writes the repeats draw from, as a share of size in blocks",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseInt(v, 0, 100)
			if err == nil {
				j.DedupeWorkingSet = n
				j.BuffersSet |= bench.SetDedupeWorkingSet
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.Itoa(j.DedupeWorkingSet) }},
	{Name: "dedupe_global", Example: "1", Unit: "bool", Default: "0",
		Help: "working_set: draw from every job of the run, an equal share of each one's first writes",
		Set: func(j *bench.Job, v string) error {
			b, err := units.ParseFlag(v)
			if err == nil {
				j.DedupeGlobal = b
				j.BuffersSet |= bench.SetDedupeGlobal
			}
			return err
		},
		Get: bench.GetBool(func(j *bench.Job) *bool { return &j.DedupeGlobal })},

	{Name: "fsync", Example: "32", Unit: "int", Default: "0", Help: "fsync the file every this many writes (through the engine)",
		Set: bench.IntField(0, 1<<31-1, func(j *bench.Job) *int { return &j.FsyncBlocks }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.FsyncBlocks) }},
	{Name: "fdatasync", Example: "32", Unit: "int", Default: "0", Help: "fdatasync the file every this many writes (through the engine)",
		Set: bench.IntField(0, 1<<31-1, func(j *bench.Job) *int { return &j.FdatasyncBlocks }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.FdatasyncBlocks) }},
	{Name: "end_fsync", Example: "1", Unit: "bool", Default: "0", Help: "fsync the file when the job's I/O is done, inside its runtime",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.EndFsync }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.EndFsync })},
	{Name: "fsync_on_close", Example: "1", Unit: "bool", Default: "0", Help: "fsync the file when the job closes it",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.FsyncOnClose }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.FsyncOnClose })},
	{Name: "sync", Example: "dsync", Unit: "mode", Default: "none", Help: "open with O_SYNC (sync or 1) or O_DSYNC (dsync); none or 0: neither",
		Set: func(j *bench.Job, v string) error {
			switch v {
			case "none", "0":
				j.SyncIO = ""
			case "sync", "1":
				j.SyncIO = "sync"
			case "dsync":
				j.SyncIO = "dsync"
			default:
				return fmt.Errorf("%q is not one of none, 0, sync, 1, dsync", v)
			}
			return nil
		},
		Get: func(j *bench.Job) string {
			if j.SyncIO == "" {
				return "none"
			}
			return j.SyncIO
		}},
}

// setBuffers sets one of the buffer flags and records that it was given.
func setBuffers(set bench.BufferSet, field func(*bench.Job) *bool) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		b, err := units.ParseFlag(v)
		if err == nil {
			*field(j) = b
			j.BuffersSet |= set
		}
		return err
	}
}

func boolString(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// finishBuffers is FinishJob's part for these options: what fio would
// silently ignore is refused.
func finishBuffers(j *bench.Job, fail func(option, format string, args ...any) error) error {
	if j.BuffersSet&bench.SetCompressChunk != 0 && (j.CompressPercentage == 0 || j.CompressPercentage == 100) && j.DedupePercentage == 0 {
		return fail("buffer_compress_chunk", "buffer_compress_chunk has no effect without buffer_compress_percentage between 1 and 99 (add it, or remove buffer_compress_chunk)")
	}
	if err := finishDedupe(j, fail); err != nil {
		return err
	}
	if j.HipriPercentage != 100 && !j.Hipri {
		return fail("hipri_percentage", "hipri_percentage has no effect without hipri (add hipri, or remove hipri_percentage)")
	}
	return nil
}

// finishDedupe refuses the dedupe options that would change nothing, and
// what fio's fixup_options refuses of a working set: a size not given in
// bytes, several files, or a working set too big to leave room for the
// repeats (its blocks are unique writes).
func finishDedupe(j *bench.Job, fail func(option, format string, args ...any) error) error {
	set := j.BuffersSet
	for _, o := range []struct {
		flag bench.BufferSet
		name string
	}{{bench.SetDedupeMode, "dedupe_mode"}, {bench.SetDedupeWorkingSet, "dedupe_working_set_percentage"}, {bench.SetDedupeGlobal, "dedupe_global"}} {
		if set&o.flag != 0 && (j.DedupePercentage == 0 || j.DedupePercentage == 100) {
			return fail(o.name, "%s has no effect without dedupe_percentage between 1 and 99 (at 100 every write repeats one buffer; add it, or remove %s)", o.name, o.name)
		}
	}
	if j.DedupeMode != bench.DedupeWorkingSet {
		for _, o := range []struct {
			flag bench.BufferSet
			name string
		}{{bench.SetDedupeWorkingSet, "dedupe_working_set_percentage"}, {bench.SetDedupeGlobal, "dedupe_global"}} {
			if set&o.flag != 0 {
				return fail(o.name, "%s has no effect without dedupe_mode=working_set (add it, or remove %s)", o.name, o.name)
			}
		}
		return nil
	}
	if j.DedupePercentage == 0 {
		return nil
	}
	files := max(j.NrFiles, 1)
	if j.Filename != "" {
		files = len(bench.SplitFileList(j.Filename))
	}
	switch {
	case j.Size <= 0:
		return fail("dedupe_mode", "dedupe_mode=working_set needs size in bytes (e.g. size=1g): its working set is a share of it")
	case files != 1:
		return fail("dedupe_mode", "dedupe_mode=working_set works on one file per job, and the job has %d (fio's limit too)", files)
	case j.DedupeWorkingSet+j.DedupePercentage > 100:
		return fail("dedupe_working_set_percentage", "dedupe_working_set_percentage=%d with dedupe_percentage=%d: the working set's blocks are unique writes, so the two cannot add up to more than 100 (fio refuses it too)",
			j.DedupeWorkingSet, j.DedupePercentage)
	}
	if ws := j.WriteBuffers().WorkingSet; ws < 1 {
		return fail("dedupe_working_set_percentage", "dedupe_working_set_percentage=%d of size=%s is less than one block: there is nothing to repeat", j.DedupeWorkingSet, units.FormatSize(j.Size))
	}
	return nil
}
