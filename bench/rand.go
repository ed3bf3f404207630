package bench

import "math/bits"

// rng is splitmix64: fast, allocation-free and good enough to pick offsets
// and directions; it is no part of any result.
type rng struct{ s uint64 }

func newRand(seed uint64) rng { return rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a number in [0, n) without modulo bias worth mentioning
// (Lemire's multiply-shift).
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// blockPerm walks the n blocks of a region in a random order, each block
// once per pass, without a bitmap: it is what fio's random map guarantees
// (every block touched once before any twice), done by cycle-walking a
// full-period LCG over the next power of two through a bijective mixer.
type blockPerm struct {
	n, mask uint64
	x, key  uint64
	shift   uint
}

func newBlockPerm(n, seed uint64) blockPerm {
	k := uint(bits.Len64(n - 1)) // 2^k >= n
	if n <= 1 {
		k = 0
	}
	// The seed picks the walk's start and, mixed, a key XORed in before
	// the mixer (a bijection too): different seeds give different orders,
	// not rotations of one.
	key := newRand(seed ^ 0x6b6579)
	return blockPerm{n: n, mask: 1<<k - 1, x: seed, key: key.next(), shift: k/2 + 1}
}

func (p *blockPerm) next() uint64 {
	for {
		// a ≡ 1 (mod 4) and odd c give period 2^k (Hull–Dobell).
		p.x = (p.x*6364136223846793005 + 1442695040888963407) & p.mask
		y := (p.x ^ p.key) & p.mask
		y ^= y >> p.shift
		y = (y * 0x9e3779b97f4a7c15) & p.mask
		y ^= y >> p.shift
		if y < p.n {
			return y
		}
	}
}
