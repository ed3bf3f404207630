package bench

import (
	"encoding/binary"
	"errors"
	"fmt"

	"iolab/bench/guard"
	"iolab/bench/verify"
)

// fio 3.33's verify state file (verify-state.h, verify.c
// write_thread_list_state and verify_load_state), read by Debian's
// fio-verify-state: a verify_state_hdr (version 3, the size and the
// crc32c of what follows, each a little-endian u64) and one
// thread_io_list:
//
//	no_comps u64, depth u32, nofiles u32, numberio u64, index u64,
//	rand { use64 u64, s[6] u64 }, name [64]byte,
//	comps [depth*nofiles] { fileno u64, offset u64 }
//
// numberio is the writes the job issued, comps the offsets of the last
// iodepth writes that completed, per file: verify_only with
// verify_state_load checks up to there and stops.

const (
	vstateVersion   = 3
	vstateHdrSize   = 24
	vstateListSize  = 152 // sizeof(struct thread_io_list)
	vstateCompSize  = 16
	vstateNameBytes = 64
)

// verifyState is a loaded thread_io_list.
type verifyState struct {
	numberio uint64
	depth    uint64
	comps    []vstateComp
}

type vstateComp struct {
	file int64
	off  int64
}

// saveState writes the job's verify state to name.
func (v *verifier) saveState(name string) error {
	depth, nofiles := len(v.lastComp[0]), len(v.lastComp)
	b := make([]byte, vstateListSize+depth*nofiles*vstateCompSize)
	le := binary.LittleEndian
	comps := 0
	for f := range v.lastComp {
		// fio's __fill_file_completions: the newest first, at most depth.
		n := min(v.writes, uint64(depth))
		j := v.lastIdx[f] - 1
		for range n {
			if j == -1 {
				j = depth - 1
			}
			at := vstateListSize + comps*vstateCompSize
			le.PutUint64(b[at:], uint64(f))
			le.PutUint64(b[at+8:], uint64(v.lastComp[f][j]))
			comps++
			j--
		}
	}
	le.PutUint64(b[0:], uint64(comps))
	le.PutUint32(b[8:], uint32(depth))
	le.PutUint32(b[12:], uint32(nofiles))
	le.PutUint64(b[16:], v.numberio)
	le.PutUint64(b[24:], uint64(v.thread-1))
	// rand: iolab's offsets do not come from fio's generator; use64 0 and
	// a zero state say nothing of it.
	copy(b[88:88+vstateNameBytes-1], v.job.Name)
	hdr := make([]byte, vstateHdrSize)
	le.PutUint64(hdr[0:], vstateVersion)
	le.PutUint64(hdr[8:], uint64(len(b)))
	le.PutUint64(hdr[16:], uint64(verify.CRC32C(b)))
	return v.files().WriteFile(name, append(hdr, b...))
}

// loadVerifyState reads a state file as fio's verify_load_state does,
// through g (beneath the data directory for the dashboard's runs).
func loadVerifyState(g *guard.Guard, name string) (*verifyState, error) {
	data, err := g.ReadFile(name, 64<<20)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if len(data) < vstateHdrSize+vstateListSize {
		return nil, fmt.Errorf("%s: %d bytes is too short for a verify state", name, len(data))
	}
	if v := le.Uint64(data); v != vstateVersion {
		return nil, fmt.Errorf("%s: unsupported verify state version %d (fio 3.33 writes %d)", name, v, vstateVersion)
	}
	size := le.Uint64(data[8:])
	body := data[vstateHdrSize:]
	if size != uint64(len(body)) {
		return nil, fmt.Errorf("%s: the header says %d bytes, the file has %d", name, size, len(body))
	}
	if crc := uint64(verify.CRC32C(body)); crc != le.Uint64(data[16:]) {
		return nil, errors.New(name + ": verify state is corrupt (bad crc32c)")
	}
	s := &verifyState{numberio: le.Uint64(body[16:]), depth: uint64(le.Uint32(body[8:]))}
	n := le.Uint64(body[0:])
	if n > (size-vstateListSize)/vstateCompSize {
		return nil, fmt.Errorf("%s: %d completions do not fit in %d bytes", name, n, size)
	}
	for i := range n {
		at := vstateListSize + i*vstateCompSize
		s.comps = append(s.comps, vstateComp{file: int64(le.Uint64(body[at:])), off: int64(le.Uint64(body[at+8:]))})
	}
	return s, nil
}

// shouldStop is fio's verify_state_should_stop: reads is the verify reads
// done so far; within the last depth writes before the state's numberio,
// only a block the state saw complete is read.
func (s *verifyState) shouldStop(reads uint64, p verifyPiece) bool {
	if (reads < s.depth || s.numberio-reads > s.depth) && s.numberio > s.depth {
		return false
	}
	for _, c := range s.comps {
		if c.file == int64(p.file) && c.off == p.off {
			return false
		}
	}
	return true
}
