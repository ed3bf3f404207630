package randgen

import "math/bits"

// SplitMix is splitmix64: fast, allocation-free and good enough to pick offsets
// and directions; it is no part of any result.
type SplitMix struct{ s uint64 }

// NewSplitMix is a generator that starts from seed.
func NewSplitMix(seed uint64) SplitMix { return SplitMix{s: seed} }

// splitMixStep is what each draw adds to splitmix64's state.
const splitMixStep = 0x9e3779b97f4a7c15

// Next is the next draw.
func (r *SplitMix) Next() uint64 {
	r.s += splitMixStep
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Skip is r after n more draws: splitmix64's state is a counter, so a
// jump costs one multiplication.
func (r SplitMix) Skip(n uint64) SplitMix { return SplitMix{s: r.s + n*splitMixStep} }

// Below returns a number in [0, n) without modulo bias worth mentioning
// (Lemire's multiply-shift).
func (r *SplitMix) Below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Next(), n)
	return hi
}
