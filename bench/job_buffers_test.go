package bench

import (
	"testing"

	"iolab/bench/system"
)

// TestWriteBuffers: fio's fix-ups and flags (init.c fixup_options,
// setup_td_flags; io_u.c get_io_u), option by option.
func TestWriteBuffers(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *BufferOptions)
		want WriteBuffers
	}{
		{"defaults: random, scrambled", func(o *BufferOptions) {}, WriteBuffers{Scramble: true, Chunk: 512}},
		{"zero_buffers: no scramble", func(o *BufferOptions) { o.ZeroBuffers, o.BuffersSet = true, SetZeroBuffers },
			WriteBuffers{Zero: true, Chunk: 512}},
		{"zero_buffers with scramble_buffers given", func(o *BufferOptions) {
			o.ZeroBuffers, o.BuffersSet = true, SetZeroBuffers|SetScrambleBuffers
		}, WriteBuffers{Zero: true, Scramble: true, Chunk: 512}},
		{"zero_buffers=0 given: scramble", func(o *BufferOptions) { o.BuffersSet = SetZeroBuffers },
			WriteBuffers{Scramble: true, Chunk: 512}},
		{"scramble_buffers=0", func(o *BufferOptions) { o.ScrambleBuffers, o.BuffersSet = false, SetScrambleBuffers },
			WriteBuffers{Chunk: 512}},
		{"refill_buffers", func(o *BufferOptions) { o.RefillBuffers, o.BuffersSet = true, SetRefillBuffers },
			WriteBuffers{Refill: true, Scramble: true, Chunk: 512}},
		{"compress 40: refills, no scramble", func(o *BufferOptions) { o.CompressPercentage, o.BuffersSet = 40, SetCompress },
			WriteBuffers{Refill: true, Compress: 40, Chunk: 512}},
		{"compress 40 with refill_buffers=0 given", func(o *BufferOptions) {
			o.CompressPercentage, o.BuffersSet = 40, SetCompress|SetRefillBuffers
		}, WriteBuffers{Compress: 40, Chunk: 512}},
		{"compress 100 is zeros", func(o *BufferOptions) { o.CompressPercentage, o.BuffersSet = 100, SetCompress },
			WriteBuffers{Zero: true, Chunk: 512}},
		{"compress 0 given: no scramble, no refill", func(o *BufferOptions) { o.BuffersSet = SetCompress },
			WriteBuffers{Chunk: 512}},
		{"chunk 0 is bs", func(o *BufferOptions) { o.CompressPercentage, o.CompressChunk, o.BuffersSet = 10, 0, SetCompress },
			WriteBuffers{Refill: true, Compress: 10, Chunk: 4096}},
		{"chunk above bs is bs", func(o *BufferOptions) { o.CompressPercentage, o.CompressChunk, o.BuffersSet = 10, 1<<20, SetCompress },
			WriteBuffers{Refill: true, Compress: 10, Chunk: 4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJob()
			tc.set(&j.BufferOptions)
			if got := j.WriteBuffers(); got.Refill != tc.want.Refill || got.Scramble != tc.want.Scramble || got.Zero != tc.want.Zero ||
				got.Compress != tc.want.Compress || got.Dedupe != tc.want.Dedupe || got.Chunk != tc.want.Chunk {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestSyncingFileJobsLeaveTheDiskUnchecked: a job that syncs a file makes
// its filesystem write a journal too, so the disk's bytes are not held
// against the job's (no false "disturbed"); on a block device they are.
func TestSyncingFileJobsLeaveTheDiskUnchecked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(j *Job)
		block   bool
		checked bool
	}{
		{"direct writes", func(j *Job) {}, false, true},
		{"fsync on a file", func(j *Job) { j.FsyncBlocks = 8 }, false, false},
		{"O_DSYNC on a file", func(j *Job) { j.SyncIO = "dsync" }, false, false},
		{"end_fsync on a file", func(j *Job) { j.EndFsync = true }, false, false},
		{"fsync on a device", func(j *Job) { j.FsyncBlocks = 8 }, true, true},
		{"fsync on a file, reading", func(j *Job) { j.FsyncBlocks, j.RW = 8, "read" }, false, true},
	} {
		j := NewJob()
		j.RW, j.Direct = "write", true
		tc.set(&j)
		util := []system.DiskUtilization{{Name: "vda"}}
		countJobBytes(util, []Group{{Jobs: []Job{j}}}, [][][]system.Target{{{{Disk: "vda", IsBlock: tc.block}}}},
			[][]JobResult{{{Moved: [2]uint64{0, 4096}}}})
		if checked := util[0].JobBytes != 0; checked != tc.checked {
			t.Errorf("%s: disk checked %v, want %v", tc.name, checked, tc.checked)
		}
	}
}
