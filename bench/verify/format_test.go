package verify

import (
	"bytes"
	"fmt"
	"testing"
)

func TestVerifySums(t *testing.T) {
	// Known answers: CRC32C of "123456789" is e3069283; fio keeps the
	// register uninverted. xxHash32 of "" and "abc" with seed 0.
	if got := CRC32C([]byte("123456789")); got != ^uint32(0xe3069283) {
		t.Errorf("fio crc32c = %08x, want %08x", got, ^uint32(0xe3069283))
	}
	for in, want := range map[string]uint32{"": 0x02cc5d05, "abc": 0x32d153ff} {
		if got := xxh32([]byte(in), 0); got != want {
			t.Errorf("xxh32(%q) = %08x, want %08x", in, got, want)
		}
	}
	// fio's sha512 is its input buffer: the data's tail over the start of
	// its first 128 bytes (300 bytes: 256 hashed, 44 left over).
	d := make([]byte, 300)
	for i := range d {
		d[i] = byte(i * 7)
	}
	out := make([]byte, 128)
	fioSHA512(d, out)
	if want := append(append([]byte(nil), d[256:300]...), d[44:128]...); !bytes.Equal(out, want) {
		t.Errorf("fio sha512 of 300 bytes = %x, want %x", out, want)
	}
}

// TestVerifyFillCheck fills a block the way each method does and checks
// it back; a changed byte, a header for another offset or another write
// fails, naming the interval.
func TestVerifyFillCheck(t *testing.T) {
	for _, tc := range []struct {
		kind           string
		interval, voff int
		pattern        []byte
		at             int // a byte a change there is seen at
	}{
		{"crc32c", 4096, 0, nil, 1000}, {"md5", 512, 0, nil, 1000}, {"sha1", 4096, 0, nil, 4095},
		{"sha256", 4096, 0, nil, 200}, {"sha512", 4096, 0, nil, 4095}, {"xxhash", 1024, 100, nil, 3000},
		{"meta", 4096, 0, nil, 20}, {"pattern", 4096, 0, []byte{1, 2, 3}, 5}, {"pattern_hdr", 4096, 0, []byte("ab"), 100},
	} {
		t.Run(fmt.Sprintf("%s/%d/%d", tc.kind, tc.interval, tc.voff), func(t *testing.T) {
			k, ok := Lookup(tc.kind)
			if tc.kind == "pattern_hdr" {
				k, ok = PatternHeader, true
			}
			if !ok {
				t.Fatal("no such kind")
			}
			v := &Spec{Kind: k, Interval: tc.interval, Offset: tc.voff, Pattern: tc.pattern}
			buf := make([]byte, 4096)
			m := Meta{Offset: 1 << 20, Seed: 42, NumberIO: 7, Thread: 1}
			v.Fill(buf, m)
			read := ReadBack{File: "f", Off: 1 << 20, NumberIO: 7, CheckNum: true, Seed: 42, SeedKnown: tc.pattern == nil}
			check := func() *Error {
				c := append([]byte(nil), buf...)
				return v.Check("j", c, read)
			}
			if e := check(); e != nil {
				t.Fatalf("a clean block: %v", e)
			}
			if !k.NoHeader {
				r2 := read
				r2.Off += 4096
				if e := v.Check("j", append([]byte(nil), buf...), r2); e == nil || e.What != "offset" {
					t.Errorf("another offset's block: %v", e)
				}
				r2 = read
				r2.NumberIO++
				if e := v.Check("j", append([]byte(nil), buf...), r2); e == nil || e.What != "numberio" {
					t.Errorf("another write's block: %v", e)
				}
			}
			buf[tc.at] ^= 0x40
			e := check()
			if e == nil {
				t.Fatalf("a change at %d passed", tc.at)
			}
			if want := int64(1<<20 + tc.at - tc.at%tc.interval); e.Offset != want || e.Length != tc.interval {
				t.Errorf("failure at %d+%d, want %d+%d: %v", e.Offset, e.Length, want, tc.interval, e)
			}
		})
	}
}

// BenchmarkVerifyFill is the CPU a 4 KiB write's verify data costs, per
// method (fill: data, header and sum; check: header and sum).
func BenchmarkVerifyFill(b *testing.B) {
	for _, k := range kinds {
		if k.internal {
			continue
		}
		v := &Spec{Kind: &k, Interval: 4096, Pattern: []byte{1, 2, 3, 4}}
		buf := make([]byte, 4096)
		b.Run(k.Name, func(b *testing.B) {
			b.SetBytes(4096)
			for i := range b.N {
				v.Fill(buf, Meta{Offset: 4096, Seed: uint64(i)})
				if e := v.Check("j", buf, ReadBack{Off: 4096}); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
