package verify

import (
	"crypto/sha1"
	"encoding/binary"
	"math/bits"
)

// The checksums as fio 3.33 writes them into its verify headers (crc/*.c
// and verify.c), which for three of them is not the textbook digest:
//
//   - sha1: the five state words in the CPU's (little-endian) order;
//   - sha256: fio pads with the bit count in little-endian order, so the
//     state is not SHA-256's; then it stores the low byte of each of the
//     eight state words over the start of its 64-byte block buffer and
//     keeps the whole buffer (the last padded block) as the "digest";
//   - sha512: fio never finalises the hash (verify.c calls no
//     fio_sha512_final): what it stores and compares is its 128-byte input
//     buffer after the update, the data's tail and a piece of its first
//     128 bytes. It sees a change only there.
//
// iolab writes and checks the same bytes, so each verifies the other's data.

func fioSHA1(d, out []byte) {
	s := sha1.Sum(d)
	for i := 0; i < 20; i += 4 {
		binary.LittleEndian.PutUint32(out[i:], binary.BigEndian.Uint32(s[i:]))
	}
}

func fioSHA512(d, out []byte) {
	// fio_sha512_update with an empty context: the first 128 bytes go
	// into the buffer, the whole blocks are hashed from the data, the
	// rest is copied over the buffer's start.
	n := copy(out[:128], d)
	if len(d) < 128 {
		clear(out[n:128]) // fio leaves its stack there; iolab refuses such intervals
		return
	}
	i := 128
	for i+127 < len(d) {
		i += 128
	}
	copy(out, d[i:])
}

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

func sha256Block(h *[8]uint32, p []byte) {
	var w [64]uint32
	for i := range 16 {
		w[i] = binary.BigEndian.Uint32(p[4*i:])
	}
	for i := 16; i < 64; i++ {
		s0 := bits.RotateLeft32(w[i-15], -7) ^ bits.RotateLeft32(w[i-15], -18) ^ (w[i-15] >> 3)
		s1 := bits.RotateLeft32(w[i-2], -17) ^ bits.RotateLeft32(w[i-2], -19) ^ (w[i-2] >> 10)
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := range 64 {
		t1 := hh + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) + ((e & f) ^ (^e & g)) + sha256K[i] + w[i]
		t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) + ((a & b) ^ (a & c) ^ (b & c))
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
	h[5] += f
	h[6] += g
	h[7] += hh
}

func fioSHA256(d, out []byte) {
	h := [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
	full := len(d) &^ 63
	for i := 0; i < full; i += 64 {
		sha256Block(&h, d[i:i+64])
	}
	// The padding: 0x80, zeros to 56 mod 64, the bit count little-endian.
	var tail [128]byte
	n := copy(tail[:], d[full:])
	tail[n] = 0x80
	end := 64
	if n >= 56 {
		end = 128
	}
	binary.LittleEndian.PutUint64(tail[end-8:], uint64(uint32(len(d)))<<3)
	sha256Block(&h, tail[:64])
	last := tail[:64]
	if end == 128 {
		sha256Block(&h, tail[64:128])
		last = tail[64:128]
	}
	copy(out[:64], last)
	for i := range 8 {
		out[i] = byte(h[i])
	}
}

func xxhRound(v, x uint32) uint32 { return bits.RotateLeft32(v+x*2246822519, 13) * 2654435761 }

// xxh32 is xxHash32 (fio's crc/xxhash.c, XXH32_init(seed)).
func xxh32(p []byte, seed uint32) uint32 {
	const (
		p1 = 2654435761
		p2 = 2246822519
		p3 = 3266489917
		p4 = 668265263
		p5 = 374761393
	)
	le := binary.LittleEndian
	n := len(p)
	var h uint32
	i := 0
	if n >= 16 {
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for ; i+16 <= n; i += 16 {
			v1 = xxhRound(v1, le.Uint32(p[i:]))
			v2 = xxhRound(v2, le.Uint32(p[i+4:]))
			v3 = xxhRound(v3, le.Uint32(p[i+8:]))
			v4 = xxhRound(v4, le.Uint32(p[i+12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + p5
	}
	h += uint32(n)
	for ; i+4 <= n; i += 4 {
		h = bits.RotateLeft32(h+le.Uint32(p[i:])*p3, 17) * p4
	}
	for ; i < n; i++ {
		h = bits.RotateLeft32(h+uint32(p[i])*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
