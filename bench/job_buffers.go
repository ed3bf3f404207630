package bench

import "iolab/bench/system"

// BufferOptions are the job options for what write buffers hold and how
// writes are synced — buffer contents, fsync, O_SYNC, the page cache — and
// the options of the sync engines (fio's options.c, engines/sync.c).
type BufferOptions struct {
	// What writes carry (fio's zero_buffers, refill_buffers,
	// scramble_buffers, buffer_pattern, buffer_compress_percentage,
	// buffer_compress_chunk, dedupe_percentage, dedupe_mode,
	// dedupe_working_set_percentage, dedupe_global); see WriteBuffers.
	ZeroBuffers     bool `json:"zero_buffers,omitempty"`
	RefillBuffers   bool `json:"refill_buffers,omitempty"`
	ScrambleBuffers bool `json:"scramble_buffers"` // default true
	// BufferPattern is buffer_pattern's bytes (at most MaxPatternSize),
	// repeated over each buffer.
	BufferPattern      []byte `json:"buffer_pattern,omitempty"`
	CompressPercentage int    `json:"buffer_compress_percentage,omitempty"`
	CompressChunk      int    `json:"buffer_compress_chunk"` // bytes; default 512, 0 means bs
	DedupePercentage   int    `json:"dedupe_percentage,omitempty"`
	// DedupeMode is how a repeated write is made: DedupeRepeat (the last
	// buffer that was no repeat) or DedupeWorkingSet (a block drawn from
	// the job's first DedupeWorkingSet % of size in blocks, shared among
	// every job of the run with DedupeGlobal).
	DedupeMode       string `json:"dedupe_mode,omitempty"`
	DedupeWorkingSet int    `json:"dedupe_working_set_percentage"` // default 5
	DedupeGlobal     bool   `json:"dedupe_global,omitempty"`
	// BuffersSet says which of them the job gave, which fio's fix-ups
	// consult (its fio_option_is_set and TD_F_COMPRESS).
	BuffersSet BufferSet `json:"buffers_set,omitempty"`

	// Syncing (fio's fsync, fdatasync, end_fsync, fsync_on_close, sync).
	FsyncBlocks     int  `json:"fsync,omitempty"`     // an fsync every N writes
	FdatasyncBlocks int  `json:"fdatasync,omitempty"` // an fdatasync every N writes
	EndFsync        bool `json:"end_fsync,omitempty"`
	FsyncOnClose    bool `json:"fsync_on_close,omitempty"`
	// SyncIO is fio's sync: "" (none), "sync" (O_SYNC) or "dsync" (O_DSYNC).
	SyncIO string `json:"sync,omitempty"`

	// pvsync2's own options: the share of I/Os flagged RWF_HIPRI when hipri
	// is on (default 100), and RWF_NOWAIT.
	HipriPercentage int  `json:"hipri_percentage"`
	NoWait          bool `json:"nowait,omitempty"`
}

// BufferSet records which buffer options a job gave.
type BufferSet uint16

// The buffer options fio asks "was it given?" of.
const (
	SetZeroBuffers BufferSet = 1 << iota
	SetRefillBuffers
	SetScrambleBuffers
	SetCompressChunk
	// SetCompress is fio's TD_F_COMPRESS: buffer_compress_percentage or
	// dedupe_percentage was given, whatever its value.
	SetCompress
	// The dedupe options that shape dedupe_percentage's repeats, which
	// mean nothing without it.
	SetDedupeMode
	SetDedupeWorkingSet
	SetDedupeGlobal
)

// The dedupe modes (fio's dedupe_mode).
const (
	DedupeRepeat     = "repeat"
	DedupeWorkingSet = "working_set"
)

// MaxPatternSize is the longest buffer_pattern fio takes (its
// MAX_PATTERN_SIZE).
const MaxPatternSize = 512

// DefaultBufferOptions are fio's defaults.
func DefaultBufferOptions() BufferOptions {
	return BufferOptions{ScrambleBuffers: true, CompressChunk: 512, DedupeMode: DedupeRepeat, DedupeWorkingSet: 5, HipriPercentage: 100}
}

// WriteBuffers is what a job's writes carry, resolved from its options the
// way fio 3.33 does (init.c fixup_options and setup_td_flags, io_u.c
// get_io_u and fill_io_buffer).
type WriteBuffers struct {
	// Refill fills the buffer anew before every write (TD_F_REFILL_BUFFERS);
	// otherwise it is filled once, when the job starts.
	Refill bool
	// Scramble marks every 512-byte sector of a write that is not refilled
	// with its offset and a sequence number, so no two written sectors are
	// alike (fio's scramble_buffers: offset and time in every sector).
	Scramble bool
	// A fill is, in this order of precedence: chunks of CompressChunk bytes
	// whose first (100-Compress)% are random and the rest zero or Pattern,
	// some buffers repeating the one before (Dedupe %); or Pattern
	// repeated; or zeros; or random bytes.
	Compress, Dedupe int
	Chunk            int // bytes; never 0
	Pattern          []byte
	Zero             bool
	// WorkingSet is dedupe_mode=working_set's number of blocks (0: a
	// repeat is the last buffer that was none, fio's repeat): a repeat is
	// one of the first WorkingSet blocks of the job's own data, drawn at
	// random — with Global, of the first WorkingSet/jobs blocks of each
	// job of the run in turn (fio's dedupe.c).
	WorkingSet int64
	Global     bool
}

// WriteBuffers resolves the job's buffer options.
func (j *Job) WriteBuffers() WriteBuffers {
	o := &j.BufferOptions
	w := WriteBuffers{Refill: o.RefillBuffers, Compress: o.CompressPercentage, Dedupe: o.DedupePercentage,
		Pattern: o.BufferPattern, Zero: o.ZeroBuffers, Chunk: o.CompressChunk}
	// fixup_options: fully compressible is zeros; partly compressible
	// refills unless refill_buffers was given.
	if w.Compress == 100 {
		w.Zero, w.Compress = true, 0
	} else if w.Compress > 0 && o.BuffersSet&SetRefillBuffers == 0 {
		w.Refill = true
	}
	if minBS, _ := j.BlockSizes(Write); w.Chunk <= 0 || int64(w.Chunk) > minBS {
		// fio's min_not_zero(min_bs, compress_chunk), min_bs the smallest
		// write.
		w.Chunk = int(minBS)
	}
	// init_dedupe_working_set_seeds: the working set is a share of size,
	// in blocks of the smallest write. get_buf_state uses it only below
	// 100 %: at 100 every buffer repeats one.
	if w.Dedupe > 0 && w.Dedupe < 100 && o.DedupeMode == DedupeWorkingSet {
		minBS, _ := j.BlockSizes(Write)
		w.WorkingSet = j.Size * int64(o.DedupeWorkingSet) / 100 / minBS
		w.Global = o.DedupeGlobal
	}
	// setup_td_flags: scramble unless zero_buffers was asked for (and
	// scramble_buffers was not); get_io_u: never with compression or
	// dedupe.
	w.Scramble = o.ScrambleBuffers && (o.BuffersSet&SetScrambleBuffers != 0 || !(o.ZeroBuffers && o.BuffersSet&SetZeroBuffers != 0)) &&
		o.BuffersSet&SetCompress == 0
	return w
}

// NeedsPollQueues reports whether the job's hipri needs the device's poll
// queues: its engine fails polled I/O without them (PollQueues).
func (j *Job) NeedsPollQueues() bool {
	e := j.Engine()
	return j.Hipri && (e == nil || e.Has(PollQueues))
}

// syncsFile reports whether the job syncs a file on a filesystem, which
// then writes its journal beside the job's data: the disk's bytes cannot be
// held against the job's.
func (j *Job) syncsFile(targets []system.Target) bool {
	if !j.Writes() || !(j.FsyncBlocks > 0 || j.FdatasyncBlocks > 0 || j.EndFsync || j.FsyncOnClose || j.SyncIO != "") {
		return false
	}
	for _, t := range targets {
		if !t.IsBlock {
			return true
		}
	}
	return false
}
