package bench

// GrowsTo is the most bytes a job may make one of its regular files
// hold, worked out as its layout (layout, fillLayout) would be but
// without touching the file: cur is the file's size now (0: missing),
// nfiles how many files the job has. It is the end of the file's region
// — size shared out among the files (the first a block larger when it
// does not divide), or filesize at the top of its range — or cur when
// the job does not grow the file (its region fits, or the job takes the
// file's own size). A job's I/O stays inside its region, so this is
// also what its writes can reach. It is -1 when only the filesystem
// bounds it: fill_device without a size writes until the filesystem is
// full.
func (j *Job) GrowsTo(cur int64, nfiles int) int64 {
	if j.Diskless() {
		return cur
	}
	if j.FillDevice && j.Size == 0 && j.SizePercent == 0 && j.FileSize[0] == 0 {
		return -1 // fills (fill_linux.go)
	}
	var need int64
	switch lo, hi := j.FileSize[0], j.FileSize[1]; {
	case lo == 0:
		n := int64(max(nfiles, 1))
		each := j.Size / n
		if each*n < j.Size {
			each += j.MinBS()
		}
		if each <= 0 {
			return cur // the file's own size
		}
		need = j.startOffset(cur) + each
	case cur >= lo && cur <= hi:
		return cur
	default:
		// A size drawn in [lo, hi): at most hi.
		need = max(lo, hi)
	}
	return max(need, cur)
}
