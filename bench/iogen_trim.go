package bench

// trimWriteDir is the direction of the next I/O on f of a trimwrite or
// randtrimwrite job (fio 3.33 io_u.c set_rw_ddir): a trim when the
// file's last trim and last write started at the same offset (a pair is
// done, or none began), else the write of the block just trimmed.
func (g *ioGen) trimWriteDir(f *genFile) ioOp {
	if f.lastStart[Write] == f.lastStart[Trim] {
		return opTrim
	}
	return opWrite
}

// pairedWrite is the write of a randtrimwrite job: the block its last
// trim took, whole (fio's get_next_block and get_next_buflen), not marked
// in the random map again. The offset is relative to the region, as
// fill's others are.
func (g *ioGen) pairedWrite(f *genFile) (off, size int64) {
	return f.lastStart[Trim] - f.offset, f.lastPos[Trim] - f.lastStart[Trim]
}
