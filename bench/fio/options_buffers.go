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
	if j.HipriPercentage != 100 && !j.Hipri {
		return fail("hipri_percentage", "hipri_percentage has no effect without hipri (add hipri, or remove hipri_percentage)")
	}
	return nil
}
