package bench

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/guard"
)

func TestVerifySums(t *testing.T) {
	// Known answers: CRC32C of "123456789" is e3069283; fio keeps the
	// register uninverted. xxHash32 of "" and "abc" with seed 0.
	if got := fioCRC32C([]byte("123456789")); got != ^uint32(0xe3069283) {
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
			k, ok := LookupVerify(tc.kind)
			if tc.kind == "pattern_hdr" {
				k, ok = patternHeader, true
			}
			if !ok {
				t.Fatal("no such kind")
			}
			v := &verifySpec{kind: k, interval: tc.interval, offset: tc.voff, pattern: tc.pattern}
			buf := make([]byte, 4096)
			m := blockMeta{offset: 1 << 20, seed: 42, numberio: 7, thread: 1}
			v.fill(buf, m)
			read := verifyRead{file: "f", off: 1 << 20, numberio: 7, checkNum: true, seed: 42, seedKnown: tc.pattern == nil}
			check := func() *VerifyError {
				c := append([]byte(nil), buf...)
				return v.check("j", c, read)
			}
			if e := check(); e != nil {
				t.Fatalf("a clean block: %v", e)
			}
			if !k.NoHeader {
				r2 := read
				r2.off += 4096
				if e := v.check("j", append([]byte(nil), buf...), r2); e == nil || e.What != "offset" {
					t.Errorf("another offset's block: %v", e)
				}
				r2 = read
				r2.numberio++
				if e := v.check("j", append([]byte(nil), buf...), r2); e == nil || e.What != "numberio" {
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

func TestVerifyState(t *testing.T) {
	v := &verifier{job: &Job{Name: "a/b"}, thread: 3, numberio: 10, writes: 10,
		lastComp: [][]int64{make([]int64, 4)}, lastIdx: []int{0}}
	for i := range 10 {
		v.lastComp[0][v.lastIdx[0]] = int64(i) * 4096
		v.lastIdx[0] = (v.lastIdx[0] + 1) % 4
	}
	name := filepath.Join(t.TempDir(), verifyStateName("a/b", 2))
	if !strings.HasSuffix(name, "local-a.b-2-verify.state") {
		t.Errorf("state name %s", name)
	}
	if err := v.saveState(name); err != nil {
		t.Fatal(err)
	}
	s, err := loadVerifyState(guard.Unrestricted(), name)
	if err != nil {
		t.Fatal(err)
	}
	if s.numberio != 10 || s.depth != 4 || len(s.comps) != 4 || s.comps[0].off != 9*4096 {
		t.Fatalf("loaded %+v", s)
	}
	// Pieces 0..9 are verified, 10 is not.
	for i := range 11 {
		stop := s.shouldStop(uint64(i), verifyPiece{off: int64(i) * 4096})
		if stop != (i == 10) {
			t.Errorf("piece %d: stop=%v", i, stop)
		}
	}
}

func TestLatestPieces(t *testing.T) {
	ps := []verifyPiece{{off: 0, numberio: 0}, {off: 4096, numberio: 1}, {off: 0, numberio: 2}}
	got := latestPieces(ps)
	if len(got) != 2 || got[0].off != 4096 || got[1].numberio != 2 {
		t.Errorf("latest = %+v", got)
	}
}

func TestMergeVerify(t *testing.T) {
	a := &VerifyResult{Reads: DirResult{IOs: 2, Bytes: 8192}, Runtime: 3}
	b := &VerifyResult{Reads: DirResult{IOs: 1, Bytes: 4096}, Runtime: 5, Failed: &VerifyError{Offset: 4096}}
	a.Reads.Clat.Add(100)
	b.Reads.Clat.Add(300)
	m := mergeVerify(a, b)
	if m.Reads.IOs != 3 || m.Reads.Bytes != 12288 || m.Runtime != 5 || m.Failed == nil || m.Reads.Clat.Stat.N != 2 || a.Reads.IOs != 2 {
		t.Errorf("merged %+v (a now %+v)", m, a)
	}
	if mergeVerify(nil, nil) != nil || mergeVerify(nil, b).Reads.IOs != 1 {
		t.Error("merging with nothing")
	}
}

// BenchmarkVerifyFill is the CPU a 4 KiB write's verify data costs, per
// method (fill: data, header and sum; check: header and sum).
func BenchmarkVerifyFill(b *testing.B) {
	for _, k := range verifyKinds {
		if k.internal {
			continue
		}
		v := &verifySpec{kind: &k, interval: 4096, pattern: []byte{1, 2, 3, 4}}
		buf := make([]byte, 4096)
		b.Run(k.Name, func(b *testing.B) {
			b.SetBytes(4096)
			for i := range b.N {
				v.fill(buf, blockMeta{offset: 4096, seed: uint64(i)})
				if e := v.check("j", buf, verifyRead{off: 4096}); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
