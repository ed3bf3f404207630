package verify

import (
	"encoding/binary"

	"iolab/bench/randgen"
)

// The data a write carries, on every platform: the buffers fill with it
// (bench/buffers_linux.go), and verify writes and rebuilds it (format.go).

// FillRandom fills p with random bytes from seed.
func FillRandom(p []byte, seed uint64) {
	r := randgen.NewSplitMix(seed)
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], r.Next())
	}
	if i < len(p) {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], r.Next())
		copy(p[i:], last[:])
	}
}

// CopyPattern repeats pattern over p from its start (fio's cpy_pattern).
func CopyPattern(p, pattern []byte) {
	n := copy(p, pattern)
	for n < len(p) {
		n += copy(p[n:], p[:n])
	}
}
