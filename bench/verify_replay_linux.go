package bench

// experimental_verify (fio 3.33's backend.c do_verify, its
// td->o.experimental_verify branch): the writes are not logged. Once they
// are done, clear_io_state puts the job's files back at their start and,
// with randrepeat, reseeds its generators, and do_verify draws the job's
// I/Os again from the start: each write drawn becomes a read of the same
// block, numbered as the writes were (verify_read_issues), until as many
// bytes are read as the writes completed. So every write is read back in
// the order it was made, a block written twice twice — its first read
// then finds the second write's header, and the job fails as fio's does
// (bad numberio) — where the logged verify reads each block once.

// replayWrites draws the job's I/Os anew from its seeds, as the write
// phase drew them, and yields its writes as the blocks to read back.
func (l *loop) replayWrites() pieceSource {
	v := l.vfy
	g := newIOGen(l.j, l.r.layout, l.r.index)
	if l.r.info.Sync {
		g.syncEngine()
	}
	minW, _ := l.j.BlockSizes(Write)
	var numberio, replayed uint64
	return func() (verifyPiece, bool) {
		for {
			// fio stops once another smallest block would go past the
			// bytes written (td->bytes_verified + rw_min_bs > verify_bytes).
			if replayed+uint64(minW) > v.wrote {
				return verifyPiece{}, false
			}
			op, file, off, n, ok := g.next()
			if !ok {
				return verifyPiece{}, false
			}
			if op != opWrite {
				continue // a sync (or a read, which fio counts and skips)
			}
			p := verifyPiece{off: off, n: n, file: int32(file), numberio: uint16(numberio)}
			numberio++
			replayed += uint64(n)
			return p, true
		}
	}
}
