package randgen

import "math/bits"

// BlockMap is fio's random map (lib/axmap.c): a bit per block of a file
// for the blocks random I/O has done this pass, and above it levels of
// summary bits, one per full word of the level below, so that finding a
// free block after a taken one costs a word per level, not a scan. fio
// keeps it when a job picks uniform random offsets with the Tausworthe
// generators and without norandommap: a taken block sends the I/O to the
// next free one, so every block is done once per pass.
type BlockMap struct {
	n      uint64
	levels [][]uint64 // levels[0]: one bit per block; levels[i+1]: one bit per full word of levels[i]
}

// NewBlockMap is an empty map of n blocks (fio's axmap_new).
func NewBlockMap(n uint64) *BlockMap {
	m := &BlockMap{n: n}
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

// Reset marks every block free again, for a new pass (fio's axmap_reset).
func (m *BlockMap) Reset() {
	for _, l := range m.levels {
		clear(l)
	}
}

// IsSet reports whether block b is done. Like fio's axmap_isset it
// looks at b = n too: the unused bits of the last word can be set
// (SetNr).
func (m *BlockMap) IsSet(b uint64) bool {
	w := b / 64
	return b <= m.n && w < uint64(len(m.levels[0])) && m.levels[0][w]&(1<<(b%64)) != 0
}

// SetNr marks up to nr blocks from b done, stopping before the first one
// already done, and returns how many it marked (fio's axmap_set_nr).
// As fio's does, it goes on past the last block to the end of its word:
// fio's __axmap_set works out a count clipped to the map and then does
// not use it (fio 3.33 lib/axmap.c:276-279), so an I/O that overhangs the
// map's blocks marks bits beyond them, which can fill the word and mark
// it full a level up. Copied: it decides where later draws land.
func (m *BlockMap) SetNr(b, nr uint64) uint64 {
	var set uint64
	for nr > 0 {
		// fio's __axmap_set lets a run reach block n (bit_nr > nr_bits,
		// lib/axmap.c:276); when n is a whole number of words, that is
		// the word past its map, which fio reads and writes out of
		// bounds, so what it counts there is the heap's (only a strided
		// zone's map, which ends before the region does, gets there).
		// iolab stops at its map's end.
		if b > m.n || b/64 >= uint64(len(m.levels[0])) {
			break
		}
		bit := b % 64
		want := min(nr, 64-bit)
		mask := lowBits(want) << bit
		word := &m.levels[0][b/64]
		if over := *word & mask; over != 0 {
			// Only the free run up to the first done block.
			want = uint64(bits.TrailingZeros64(over)) - bit
			if want == 0 {
				break
			}
			mask = lowBits(want) << bit
		}
		m.setMask(b/64, mask)
		set += want
		if want != min(nr, 64-bit) {
			break
		}
		nr -= want
		b += want
	}
	return set
}

// lowBits is a word with its n low bits set (n ≤ 64).
func lowBits(n uint64) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// setMask sets mask in word w of the bottom level, and each word it
// fills as full in the level above.
func (m *BlockMap) setMask(w, mask uint64) {
	l := m.levels[0]
	l[w] |= mask
	for i := 1; i < len(m.levels) && l[w] == ^uint64(0); i++ {
		l = m.levels[i]
		l[w/64] |= 1 << (w % 64)
		w /= 64
	}
}

// FirstFree returns the first free block at or after b.
func (m *BlockMap) FirstFree(b uint64) (uint64, bool) {
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

// NextFree returns the first free block after b, going round to the
// start of the file (fio's axmap_next_free).
func (m *BlockMap) NextFree(b uint64) (uint64, bool) {
	if b >= m.n {
		return 0, false
	}
	next := b + 1
	if next >= m.n {
		next = 0
	}
	if f, ok := m.FirstFree(next); ok {
		return f, true
	}
	if next == 0 {
		return 0, false
	}
	return m.FirstFree(0)
}
