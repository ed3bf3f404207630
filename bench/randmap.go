package bench

import "math/bits"

// blockMap is fio's random map (lib/axmap.c): a bit per block of a file
// for the blocks random I/O has done this pass, and above it levels of
// summary bits, one per full word of the level below, so that finding a
// free block after a taken one costs a word per level, not a scan. fio
// keeps it when a job picks uniform random offsets with the Tausworthe
// generators and without norandommap: a taken block sends the I/O to the
// next free one, so every block is done once per pass.
type blockMap struct {
	n      uint64
	levels [][]uint64 // levels[0]: one bit per block; levels[i+1]: one bit per full word of levels[i]
}

func newBlockMap(n uint64) *blockMap {
	m := &blockMap{n: n}
	total := 0
	var sizes []int
	for words := (n + 63) / 64; ; words = (words + 63) / 64 {
		sizes = append(sizes, int(words))
		total += int(words)
		if words <= 1 {
			break
		}
	}
	mem := mapWords(m, total)
	for _, w := range sizes {
		m.levels = append(m.levels, mem[:w:w])
		mem = mem[w:]
	}
	return m
}

func (m *blockMap) reset() {
	for _, l := range m.levels {
		clear(l)
	}
}

func (m *blockMap) isSet(b uint64) bool {
	return b < m.n && m.levels[0][b/64]&(1<<(b%64)) != 0
}

// set marks block b done, and each word it fills as full in the level
// above.
func (m *blockMap) set(b uint64) {
	for _, l := range m.levels {
		l[b/64] |= 1 << (b % 64)
		if l[b/64] != ^uint64(0) {
			return
		}
		b /= 64
	}
}

// firstFree returns the first free block at or after b.
func (m *blockMap) firstFree(b uint64) (uint64, bool) {
	if b >= m.n {
		return 0, false
	}
	// Climb while the rest of the word at this level is taken: the next
	// candidate is the next word, whose fullness the level above records.
	l := 0
	for {
		words := m.levels[l]
		w := b / 64
		if w >= uint64(len(words)) {
			return 0, false
		}
		if free := ^words[w] &^ (1<<(b%64) - 1); free != 0 {
			b = w*64 + uint64(bits.TrailingZeros64(free))
			break
		}
		if l+1 == len(m.levels) {
			return 0, false
		}
		b = w + 1
		l++
	}
	// Descend: a clear bit at level l is a word at level l-1 with a free
	// bit in it (or the unused tail of the last word, beyond the blocks).
	for ; l > 0; l-- {
		words := m.levels[l-1]
		if b >= uint64(len(words)) {
			return 0, false
		}
		b = b*64 + uint64(bits.TrailingZeros64(^words[b]))
	}
	return b, b < m.n
}

// nextFree returns the first free block after b, going round to the
// start of the file (fio's axmap_next_free).
func (m *blockMap) nextFree(b uint64) (uint64, bool) {
	next := b + 1
	if next >= m.n {
		next = 0
	}
	if f, ok := m.firstFree(next); ok {
		return f, true
	}
	if next == 0 {
		return 0, false
	}
	return m.firstFree(0)
}
