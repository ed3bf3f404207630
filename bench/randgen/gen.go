package randgen

import "math"

// fio's random number generators, bit for bit, so that a job with the same
// options and seed picks the same offsets as fio 3.33: the combined
// Tausworthe generators of lib/rand.h (taus88, fio's "tausworthe", and
// taus258, its "tausworthe64"), the maximal-length LFSR of lib/lfsr.c
// ("lfsr") and the hashes fio scatters its skewed distributions and seeds
// with (hash.h). Each step is a handful of shifts and XORs and allocates
// nothing.

// Taus88 is L'Ecuyer's maximally equidistributed combined Tausworthe
// generator with period 2^88 (fio's __rand32).
type Taus88 struct{ s1, s2, s3 uint32 }

// NewTaus88 seeds the generator as fio's __init_rand32 does: an LCG
// spreads the seed over the three components, each kept above the
// minimum the recurrence needs, then six steps discard the start.
func NewTaus88(seed uint64) Taus88 {
	s := uint32(seed)
	// fio writes the LCG's start as (2^31) + (2^17) + (2^7), in C, where ^
	// is XOR: 29 + 19 + 5 = 53.
	var t Taus88
	t.s1 = atLeast(53*69069^s, 1)
	t.s2 = atLeast(t.s1*69069^s, 7)
	t.s3 = atLeast(t.s2*69069^s, 15)
	for range 6 {
		t.Next()
	}
	return t
}

// atLeast keeps a component of the state above the minimum its
// recurrence needs (fio's __seed).
func atLeast[T uint32 | uint64](x, m T) T {
	if x < m {
		return x + m
	}
	return x
}

// Next is the next 32-bit draw (fio's __rand32).
func (t *Taus88) Next() uint32 {
	t.s1 = (t.s1&0xfffffffe)<<12 ^ (t.s1<<13^t.s1)>>19
	t.s2 = (t.s2&0xfffffff8)<<4 ^ (t.s2<<2^t.s2)>>25
	t.s3 = (t.s3&0xfffffff0)<<17 ^ (t.s3<<3^t.s3)>>11
	return t.s1 ^ t.s2 ^ t.s3
}

// Between returns a number in [lo, hi] the way fio's rand_between does
// on a 32-bit state: hi-lo+1 times the next value over 2^32, truncated.
// The product is exact in a float64, so integer arithmetic gives the same
// numbers.
func (t *Taus88) Between(lo, hi uint32) uint32 {
	return lo + uint32(uint64(t.Next())*uint64(hi-lo+1)>>32)
}

// Taus258 is L'Ecuyer's 64-bit combined Tausworthe generator with period
// 2^258 (fio's __rand64, "tausworthe64").
type Taus258 struct{ s1, s2, s3, s4, s5 uint64 }

// NewTaus258 seeds as fio's __init_rand64.
func NewTaus258(seed uint64) Taus258 {
	var t Taus258
	t.s1 = atLeast(53*6906969069^seed, 1)
	t.s2 = atLeast(t.s1*6906969069^seed, 7)
	t.s3 = atLeast(t.s2*6906969069^seed, 15)
	t.s4 = atLeast(t.s3*6906969069^seed, 33)
	t.s5 = atLeast(t.s4*6906969069^seed, 49)
	for range 6 {
		t.Next()
	}
	return t
}

// Next is the next 64-bit draw (fio's __rand64).
func (t *Taus258) Next() uint64 {
	t.s1 = (t.s1&0xfffffffffffffffe)<<10 ^ (t.s1<<1^t.s1)>>53
	t.s2 = (t.s2&0xfffffffffffffe00)<<5 ^ (t.s2<<24^t.s2)>>50
	t.s3 = (t.s3&0xfffffffffffff000)<<29 ^ (t.s3<<3^t.s3)>>23
	t.s4 = (t.s4&0xfffffffffffe0000)<<23 ^ (t.s4<<5^t.s4)>>24
	t.s5 = (t.s5&0xffffffffff800000)<<8 ^ (t.s5<<3^t.s5)>>33
	return t.s1 ^ t.s2 ^ t.s3 ^ t.s4 ^ t.s5
}

// Frand is fio's struct frand_state: taus88, or taus258 with use64
// (random_generator=tausworthe64), behind one next and one maximum, as
// fio's __rand and rand_max are. fio draws block sizes and picks files
// with it.
type Frand struct {
	use64 bool
	t32   Taus88
	t64   Taus258
}

// NewFrand seeds as fio's init_rand_seed: the 32-bit generator takes
// the seed's low 32 bits.
func NewFrand(seed uint64, use64 bool) Frand {
	if use64 {
		return Frand{use64: true, t64: NewTaus258(seed)}
	}
	return Frand{t32: NewTaus88(seed)}
}

// Next is the next draw of whichever generator f holds (fio's __rand).
func (f *Frand) Next() uint64 {
	if f.use64 {
		return f.t64.Next()
	}
	return uint64(f.t32.Next())
}

// Max is fio's rand_max: the largest value Next returns.
func (f *Frand) Max() uint64 {
	if f.use64 {
		return math.MaxUint64
	}
	return math.MaxUint32
}

// Scale is fio's n * (r / (rand_max + 1.0)) in doubles, truncated: a
// number below n from one draw (the 64-bit one rounds r to a double
// first, as C's conversion does, and can reach n).
func (f *Frand) Scale(n uint64) uint64 {
	return uint64(float64(n) * (float64(f.Next()) / (float64(f.Max()) + 1.0)))
}

// LFSR walks 0..n-1, each value once, with a maximal-length XNOR LFSR of
// the fewest bits whose period covers n, skipping the states beyond n-1
// (fio's lib/LFSR.c with spin 0, which is all fio uses). It needs no map
// of the blocks done.
type LFSR struct {
	state, xormask, top, max uint64
	done                     uint64 // values returned since the last reset
	// extra is fio's cycle_length bookkeeping, which with spin 0 makes the
	// first value after NewLFSR (not after a reset) take two steps.
	extra bool
}

// lfsrTaps are the tap positions of maximal-length LFSRs of 3 to 63 bits
// (the table fio takes from the LFSRtaps list it cites).
var lfsrTaps = [64][]uint8{
	3: {3, 2}, 4: {4, 3}, 5: {5, 3}, 6: {6, 5}, 7: {7, 6}, 8: {8, 6, 5, 4},
	9: {9, 5}, 10: {10, 7}, 11: {11, 9}, 12: {12, 6, 4, 1}, 13: {13, 4, 3, 1},
	14: {14, 5, 3, 1}, 15: {15, 14}, 16: {16, 15, 13, 4}, 17: {17, 14},
	18: {18, 11}, 19: {19, 6, 2, 1}, 20: {20, 17}, 21: {21, 19}, 22: {22, 21},
	23: {23, 18}, 24: {24, 23, 22, 17}, 25: {25, 22}, 26: {26, 6, 2, 1},
	27: {27, 5, 2, 1}, 28: {28, 25}, 29: {29, 27}, 30: {30, 6, 4, 1},
	31: {31, 28}, 32: {32, 31, 29, 1}, 33: {33, 20}, 34: {34, 27, 2, 1},
	35: {35, 33}, 36: {36, 25}, 37: {37, 5, 4, 3, 2, 1}, 38: {38, 6, 5, 1},
	39: {39, 35}, 40: {40, 38, 21, 19}, 41: {41, 38}, 42: {42, 41, 20, 19},
	43: {43, 42, 38, 37}, 44: {44, 43, 18, 17}, 45: {45, 44, 42, 41},
	46: {46, 45, 26, 25}, 47: {47, 42}, 48: {48, 47, 21, 20}, 49: {49, 40},
	50: {50, 49, 24, 23}, 51: {51, 50, 36, 35}, 52: {52, 49}, 53: {53, 52, 38, 37},
	54: {54, 53, 18, 17}, 55: {55, 31}, 56: {56, 55, 35, 34}, 57: {57, 50},
	58: {58, 39}, 59: {59, 58, 38, 37}, 60: {60, 59}, 61: {61, 60, 46, 45},
	62: {62, 61, 6, 5}, 63: {63, 62},
}

// NewLFSR sets up an LFSR over n values from seed (fio's lfsr_init). It
// fails, as fio's does, for more than 2^63 values or a seed whose low bits
// are the one state an XNOR LFSR never leaves.
func NewLFSR(n, seed uint64) (LFSR, bool) {
	bitsN := 3
	for bitsN < 64 && uint64(1)<<bitsN <= n {
		bitsN++
	}
	if bitsN == 64 || n == 0 {
		return LFSR{}, false
	}
	var l LFSR
	for _, tap := range lfsrTaps[bitsN] {
		l.xormask |= 1 << (tap - 1)
	}
	l.top = 1 << (bitsN - 1)
	l.max = n - 1
	l.extra = true
	return l, l.Reset(seed)
}

// Reset starts the walk again from seed (fio's lfsr_reset).
func (l *LFSR) Reset(seed uint64) bool {
	mask := l.top<<1 - 1
	l.done = 0
	l.state = seed & mask
	return l.state != mask
}

func (l *LFSR) step() {
	v := l.state
	// An even state XORs the taps in: (v&1)-1 is all ones then.
	l.state = (v>>1 | l.top) ^ ((v&1 - 1) & l.xormask)
}

// Next returns the Next value, or false once all n have been returned
// since the last reset.
func (l *LFSR) Next() (uint64, bool) {
	if l.done > l.max {
		return 0, false
	}
	l.done++
	for {
		if l.extra {
			l.extra = false
			l.step()
		}
		l.step()
		if l.state <= l.max {
			return l.state, true
		}
	}
}

// goldenRatio64 is the multiplier of fio's __hash_u64 (hash.h), which
// scatters the values of its zipf, pareto and normal distributions over
// the file.
const goldenRatio64 = 0x61C8864680B583EB

// JHash is fio's JHash (hash.h), a Bob Jenkins hash, including its quirk
// of adding single bytes, not words, for each 12-byte block but the last.
// fio seeds the skewed distributions with the hash of the file's name.
func JHash(key string, initval uint32) uint32 {
	rol := func(w uint32, s uint) uint32 { return w<<s | w>>(32-s) }
	a := 0x61C88647 + uint32(len(key)) + initval
	b, c := a, a
	k := key
	for len(k) > 12 {
		a += uint32(k[0])
		b += uint32(k[4])
		c += uint32(k[8])
		a -= c
		a ^= rol(c, 4)
		c += b
		b -= a
		b ^= rol(a, 6)
		a += c
		c -= b
		c ^= rol(b, 8)
		b += a
		a -= c
		a ^= rol(c, 16)
		c += b
		b -= a
		b ^= rol(a, 19)
		a += c
		c -= b
		c ^= rol(b, 4)
		b += a
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var last [12]byte
	copy(last[:], k)
	a += uint32(last[0]) | uint32(last[1])<<8 | uint32(last[2])<<16 | uint32(last[3])<<24
	b += uint32(last[4]) | uint32(last[5])<<8 | uint32(last[6])<<16 | uint32(last[7])<<24
	c += uint32(last[8]) | uint32(last[9])<<8 | uint32(last[10])<<16 | uint32(last[11])<<24
	c ^= b
	c -= rol(b, 14)
	a ^= c
	a -= rol(c, 11)
	b ^= a
	b -= rol(a, 25)
	c ^= b
	c -= rol(b, 16)
	a ^= c
	a -= rol(c, 4)
	b ^= a
	b -= rol(a, 14)
	c ^= b
	c -= rol(b, 24)
	return c
}
