package bench

import "math/bits"

// rng is splitmix64: fast, allocation-free and good enough to pick offsets
// and directions; it is no part of any result.
type rng struct{ s uint64 }

func newRand(seed uint64) rng { return rng{s: seed} }

// rngStep is what each draw adds to splitmix64's state.
const rngStep = 0x9e3779b97f4a7c15

func (r *rng) next() uint64 {
	r.s += rngStep
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// skip is r after n more draws: splitmix64's state is a counter, so a
// jump costs one multiplication.
func (r rng) skip(n uint64) rng { return rng{s: r.s + n*rngStep} }

// below returns a number in [0, n) without modulo bias worth mentioning
// (Lemire's multiply-shift).
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}
