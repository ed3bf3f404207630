package bench

import (
	"fmt"

	"iolab/bench/randgen"
	"iolab/bench/units"
)

// fileRegion is the part of one file a job covers, fio's fio_file fields
// that setup_files (filesetup.c) fills in.
type fileRegion struct {
	Path     string
	Offset   int64 // file_offset: where the region starts (get_start_offset)
	IOSize   int64 // io_size: the region's length
	RealSize int64 // real_file_size, once the file is laid out
	// Extend is set when the (regular) file is missing or shorter than
	// Offset+IOSize: it is laid out before the job runs.
	Extend bool
}

// jobLayout is what setup_files works out for one job: each file's region
// and the job's size (fio's o->size afterwards: bytes per loop).
type jobLayout struct {
	Files []fileRegion
	Size  int64
}

// fileState is a file as it is before the job: its size (0 when missing)
// and whether it is a regular file (or missing, to be created).
type fileState struct {
	Path    string
	Size    int64
	Regular bool
}

// startOffset is fio's get_start_offset: offset (or offset=N% of the
// file, aligned up to the smallest block size) plus jobnum times
// offset_increment.
func (j *Job) startOffset(realSize int64) int64 {
	if j.OffsetPercent > 0 {
		off := realSize*int64(j.OffsetPercent)/100 + int64(j.JobNum)*j.OffsetIncrement
		bs := j.MinBS()
		return (off + bs - 1) / bs * bs
	}
	return j.Offset + int64(j.JobNum)*j.OffsetIncrement
}

// layout works out the job's regions from its files as they are, the way
// fio's setup_files does: size is divided among the files (the first ones
// a block larger when it does not divide), filesize sets each file's size
// (a random one per file for a range), size=N% takes a share of each, and
// a regular file shorter than its region is laid out (unless
// create_on_open). seed drives filesize ranges.
func (j *Job) layout(files []fileState, seed uint64) (jobLayout, error) {
	var out jobLayout
	if j.Diskless() {
		size := j.Size - j.Size%j.MinBS()
		if size <= 0 {
			return out, fmt.Errorf("job %s: ioengine=%s needs a size (e.g. size=1g): there is no file to take it from", j.Name, j.IOEngine)
		}
		out.Files = []fileRegion{{IOSize: size, RealSize: size}}
		out.Size = size
		return out, nil
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if total == 0 && j.Size == 0 && j.FileSize[0] == 0 {
		what := "its files do not exist (or are empty)"
		if len(files) == 1 {
			what = files[0].Path + " does not exist (or is empty)"
		}
		return out, fmt.Errorf("job %s: %s; give --size (or filesize) so iolab can lay it out, or point filename at an existing file or device", j.Name, what)
	}
	bs := j.MinBS()
	n := int64(len(files))
	var each, extra int64
	if j.FileSize[0] == 0 {
		each = j.Size / n
		extra = (j.Size - each*n) / bs
	}
	rnd := randgen.NewSplitMix(seed ^ 0xf11e)
	var sum int64
	for _, f := range files {
		r := fileRegion{Path: f.Path, RealSize: f.Size, Offset: j.startOffset(f.Size)}
		switch lo, hi := j.FileSize[0], j.FileSize[1]; {
		case lo == 0:
			r.IOSize = each
			if extra > 0 {
				extra--
				r.IOSize += bs
			}
			if r.IOSize == 0 {
				if r.Offset > f.Size {
					return out, j.offsetError(f, r.Offset)
				}
				r.IOSize = f.Size - r.Offset
			}
		case f.Size < lo || f.Size > hi:
			if r.Offset > lo {
				return out, j.offsetError(f, r.Offset)
			}
			size := lo
			if hi > lo {
				// fio's get_rand_file_size: uniform in [lo, hi), down to
				// a whole number of blocks.
				size = lo + int64(rnd.Below(uint64(hi-lo)))
				size -= size % bs
			}
			r.IOSize = size - r.Offset
		default:
			r.IOSize = f.Size - r.Offset
		}
		if p := int64(j.SizePercent); p > 0 && p != 100 {
			fileSize := r.IOSize + r.Offset
			r.IOSize = min(fileSize*p/100, fileSize-r.Offset)
			r.IOSize -= r.IOSize % bs
		}
		sum += r.IOSize
		if need := r.Offset + r.IOSize; f.Regular && need > f.Size {
			r.RealSize = need
			r.Extend = !j.CreateOnOpen
		}
		out.Files = append(out.Files, r)
	}
	out.Size = j.Size
	if out.Size == 0 || (sum > 0 && out.Size > sum) {
		out.Size = sum
	}
	if out.Size < bs {
		return out, fmt.Errorf("job %s: the region (%s) is smaller than one block (bs=%s); fio refuses it too (\"blocksize is larger than data set range\")",
			j.Name, units.Bytes(float64(max(out.Size, 0))), units.Bytes(float64(bs)))
	}
	// A device is not extended: fio would stop at its end without a word;
	// iolab says so before the run.
	for i, r := range out.Files {
		if files[i].Regular {
			continue
		}
		if r.Offset >= r.RealSize {
			return out, fmt.Errorf("job %s: offset %s is at or past the end of %s (%s); lower offset, or use a larger target",
				j.Name, units.Bytes(float64(r.Offset)), r.Path, units.Bytes(float64(r.RealSize)))
		}
		if r.Offset+r.IOSize > r.RealSize {
			return out, fmt.Errorf("job %s: %s is %s but the job needs %s (offset %s + size %s); lower size or offset, or use a larger target",
				j.Name, r.Path, units.Bytes(float64(r.RealSize)), units.Bytes(float64(r.Offset+r.IOSize)),
				units.Bytes(float64(r.Offset)), units.Bytes(float64(r.IOSize)))
		}
	}
	for _, r := range out.Files {
		if _, err := j.checkPattern(min(r.IOSize, r.RealSize)); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (j *Job) offsetError(f fileState, off int64) error {
	return fmt.Errorf("job %s: offset %s is past the end of %s (%s); lower offset, or use a larger target",
		j.Name, units.Bytes(float64(off)), f.Path, units.Bytes(float64(f.Size)))
}
