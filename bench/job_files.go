package bench

// FileOptions are the job options for the files a job does I/O on beyond
// filename — directory, several files, their names, sizes, layout and
// clean-up (fio's file options) — and for what part of them each I/O
// covers: block sizes per direction, alignment, offsets, zones and how
// much I/O the job does (fio's size and offset options). Zero values mean
// fio's defaults, except Invalidate, which NewJob turns on.
type FileOptions struct {
	// Directory is fio's directory: prefixed to every file name, even an
	// absolute one; several directories (split on ':', "\:" for a colon)
	// are shared out among a job's clones by jobnum.
	Directory string `json:"directory,omitempty"`
	// NrFiles is fio's nrfiles for a job without filename (0: 1); with a
	// filename, the files are the names it lists.
	NrFiles int `json:"nrfiles,omitempty"`
	// FilenameFormat names the files of a job without filename ($jobname,
	// $jobnum, $filenum, $clientuid); "" is fio's $jobname.$jobnum.$filenum.
	FilenameFormat string `json:"filename_format,omitempty"`
	// FileSize is fio's filesize, a size or a range lo-hi for each file
	// ([0,0]: size divided among the files).
	FileSize [2]int64 `json:"filesize,omitempty"`
	// FileService is fio's file_service_type: roundrobin (""), random or
	// sequential; FileServiceNr I/Os go to a file before switching (0: 1).
	FileService   string `json:"file_service_type,omitempty"`
	FileServiceNr int    `json:"file_service_nr,omitempty"`
	CreateOnOpen  bool   `json:"create_on_open,omitempty"`
	// NoFileCreate is fio's allow_file_create=0: a file that is missing,
	// or too short and so to be laid out anew, fails the job instead of
	// being made (stored inverted, so that a job stored before the option
	// existed may create files, as it did then).
	NoFileCreate bool `json:"no_file_create,omitempty"`
	// FillDevice is fio's fill_device (fill_fs): without a size, a file
	// is as big as its filesystem's free space and ENOSPC (or EDQUOT) on
	// a write ends the job without an error (fill_linux.go).
	FillDevice bool `json:"fill_device,omitempty"`
	// CreateParallel is fio's create_serialize=0: the job's files are
	// worked out and laid out when its group starts, alongside the
	// group's other such jobs, not one job at a time before the run.
	CreateParallel bool `json:"create_parallel,omitempty"`
	Unlink         bool `json:"unlink,omitempty"`
	// Fallocate is how a new file is allocated when laid out: native (""),
	// none, posix, keep or truncate.
	Fallocate string `json:"fallocate,omitempty"`
	// Invalidate drops the page cache of the job's files before it runs
	// (fio's default, 1).
	Invalidate bool `json:"invalidate"`

	// SizePercent is size=N%: N percent of each file from its offset.
	SizePercent int `json:"size_percent,omitempty"`
	// OffsetPercent is offset=N%: the region starts N percent into each
	// file, aligned up to the smallest block size.
	OffsetPercent int `json:"offset_percent,omitempty"`
	// WriteBS is the block size of writes (bs=4k,64k); 0: BS.
	WriteBS int64 `json:"bs_write,omitempty"`
	// TrimBS is the block size of trims (bs=4k,64k,1m); 0: the writes'.
	TrimBS int64 `json:"bs_trim,omitempty"`
	// BSRange is bsrange per direction (Read, Write): the smallest and
	// largest block sizes; zero: bs.
	BSRange [2][2]int64 `json:"bsrange,omitempty"`
	// BSSplit is bssplit per direction: block sizes and their shares.
	BSSplit [2][]BSSplit `json:"bssplit,omitempty"`
	// BlockAlign is ba (blockalign) per direction: random offsets are
	// multiples of it; 0: the smallest block size.
	BlockAlign [2]int64 `json:"blockalign,omitempty"`
	// NumberIOs ends the job after this many I/Os (per loop); 0: no limit.
	NumberIOs uint64 `json:"number_ios,omitempty"`
	// Loops runs the job this many times over (0: 1).
	Loops int `json:"loops,omitempty"`
	// OffsetIncrement moves each clone's region by jobnum times this.
	OffsetIncrement int64 `json:"offset_increment,omitempty"`
	// RWSeqNr is rw=randread:N: a new random offset every N I/Os (0: 1).
	RWSeqNr int `json:"rw_seq_nr,omitempty"`
	// RWSeqAdd is rw=write:4k: a hole of this many bytes after each
	// sequential I/O (negative: backwards).
	RWSeqAdd int64 `json:"rw_seq_add,omitempty"`
	// RWSequencer is what the I/Os between two random offsets do:
	// sequential ("") or identical.
	RWSequencer string `json:"rw_sequencer,omitempty"`
	// ZoneMode is zonemode: none ("") or strided, with ZoneSize bytes of
	// I/O in each zone of ZoneRange bytes, then ZoneSkip bytes skipped.
	ZoneMode  string `json:"zonemode,omitempty"`
	ZoneSize  int64  `json:"zonesize,omitempty"`
	ZoneRange int64  `json:"zonerange,omitempty"`
	ZoneSkip  int64  `json:"zoneskip,omitempty"`

	// JobNum is fio's jobnum (subjob_number) of a numjobs clone: 0 for the
	// job itself, then numjobs-1 down to 1 in the order the clones are
	// added; set by Expand.
	JobNum int `json:"jobnum,omitempty"`
}

// BSSplit is one entry of bssplit: a block size and its share in percent.
type BSSplit struct {
	BS      int64 `json:"bs"`
	Percent int   `json:"percent"`
}

// dirBS is the fixed block size of direction d: bs, or bs's write or
// trim value (a trim without one of its own takes the writes', as fio's
// handle_option copies the last value given to the directions after it).
func (j *Job) dirBS(d int) int64 {
	if d == Trim && j.TrimBS > 0 {
		return j.TrimBS
	}
	if d >= Write && j.WriteBS > 0 {
		return j.WriteBS
	}
	return j.BS
}

// BlockSizes returns the smallest and largest block size of direction d
// (Read, Write or Trim), fio's min_bs and max_bs: from bssplit, else
// bsrange, else bs. Trims take the writes' bssplit and bsrange, which
// take no third value.
func (j *Job) BlockSizes(d int) (lo, hi int64) {
	if d == Trim && j.TrimBS > 0 {
		return j.TrimBS, j.TrimBS
	}
	if d == Trim {
		d = Write
	}
	if s := j.BSSplit[d]; len(s) > 0 {
		lo, hi = s[0].BS, s[0].BS
		for _, e := range s[1:] {
			lo, hi = min(lo, e.BS), max(hi, e.BS)
		}
		return lo, hi
	}
	if r := j.BSRange[d]; r[0] > 0 {
		return r[0], r[1]
	}
	bs := j.dirBS(d)
	return bs, bs
}

// MaxBS is the largest I/O the job issues: what each buffer must hold.
func (j *Job) MaxBS() int64 {
	_, r := j.BlockSizes(Read)
	_, w := j.BlockSizes(Write)
	return max(r, w)
}

// MinBS is the smallest block size of the directions the job does (fio's
// td_min_bs): sizes are rounded to it.
func (j *Job) MinBS() int64 {
	var out int64
	for d := range Trim + 1 {
		if (d == Read && !j.Reads()) || (d == Write && !j.Writes()) || (d == Trim && !j.Trims()) {
			continue
		}
		if lo, _ := j.BlockSizes(d); out == 0 || lo < out {
			out = lo
		}
	}
	if out == 0 {
		out, _ = j.BlockSizes(Read)
	}
	return out
}

// rwMinBS is fio's rw_min_bs: the smallest block size of reads, writes
// and trims, whether the job does them or not (fixup_options), the unit
// of its random map and LFSR.
func (j *Job) rwMinBS() int64 {
	r, _ := j.BlockSizes(Read)
	w, _ := j.BlockSizes(Write)
	t, _ := j.BlockSizes(Trim)
	return min(r, w, t)
}

// Align is the alignment of direction d's random offsets: ba, or the
// smallest block size (fio's fixup_options; sequential I/O ignores ba).
func (j *Job) Align(d int) int64 {
	lo, _ := j.BlockSizes(d)
	ba := j.BlockAlign[min(d, Write)] // trims take the writes' ba
	if ba > 0 && j.Random() {
		return ba
	}
	return lo
}

func defaultFileOptions() FileOptions { return FileOptions{Invalidate: true} }
