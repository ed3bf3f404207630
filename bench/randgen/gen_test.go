package randgen

import (
	"fmt"
	"runtime"
	"testing"
)

// TestBlockMap checks the random map against a plain slice of bools:
// NextFree finds the first free block after b, going round, whatever the
// map's levels hold.
func TestBlockMap(t *testing.T) {
	for _, n := range []uint64{1, 2, 63, 64, 65, 100, 4096, 4097, 64*64*64 + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := NewBlockMap(n)
			ref := make([]bool, n)
			r := NewTaus88(n)
			want := func(b uint64) (uint64, bool) {
				for i := uint64(1); i <= n; i++ {
					if c := (b + i) % n; !ref[c] {
						return c, true
					}
				}
				return 0, false
			}
			// Fill the map in a random order, checking every step, then
			// once more after a reset.
			for pass := range 2 {
				for done := uint64(0); done < n; done++ {
					b := uint64(r.Next()) % n
					if m.IsSet(b) != ref[b] {
						t.Fatalf("pass %d: block %d set %v, want %v", pass, b, m.IsSet(b), ref[b])
					}
					if ref[b] {
						got, ok := m.NextFree(b)
						w, wok := want(b)
						if got != w || ok != wok {
							t.Fatalf("pass %d: next free after %d = %d,%v, want %d,%v", pass, b, got, ok, w, wok)
						}
						b = got
					}
					m.SetNr(b, 1)
					ref[b] = true
				}
				for b := range n {
					if _, ok := m.NextFree(b); ok {
						t.Fatalf("pass %d: a full map has a free block after %d", pass, b)
					}
				}
				m.Reset()
				clear(ref)
			}
		})
	}
}

// TestBlockMapSetNr pins fio's axmap_set_nr: a run of blocks marked up
// to the first one already done, across words, and past the last block
// to the end of its word, which then counts as full, as in fio.
func TestBlockMapSetNr(t *testing.T) {
	m := NewBlockMap(100)
	for _, tc := range []struct{ b, nr, want uint64 }{
		{10, 5, 5},   // 10..14
		{8, 5, 2},    // 8 and 9: 10 is done
		{12, 3, 0},   // done already
		{60, 10, 10}, // 60..63 and 64..69, across a word
		{96, 40, 32}, // 96..99 and on past the map's 100 blocks to the word's end
		{101, 1, 0},  // fio's __axmap_set sets nothing past block 100
		{100, 1, 0},  // done by the run that went past the end
		{70, 26, 26}, // 70..95: the last word is full
	} {
		if got := m.SetNr(tc.b, tc.nr); got != tc.want {
			t.Errorf("SetNr(%d, %d) = %d, want %d", tc.b, tc.nr, got, tc.want)
		}
	}
	if !m.IsSet(100) || !m.IsSet(69) || m.IsSet(7) || m.IsSet(15) {
		t.Error("IsSet disagrees with the blocks marked")
	}
	if m.levels[1][0]&2 == 0 {
		t.Error("the last word is full, its unused bits included, but not marked so a level up")
	}
	if b, ok := m.NextFree(99); !ok || b != 0 {
		t.Errorf("next free after 99 = %d, %v; want 0 (going round)", b, ok)
	}
	if b, ok := m.NextFree(8); !ok || b != 15 {
		t.Errorf("next free after 8 = %d, %v; want 15", b, ok)
	}
}

// TestBlockMapLarge: a map big enough to live outside the Go heap works
// the same, and goes away with the collector.
func TestBlockMapLarge(t *testing.T) {
	const n = 1<<23 + 5 // 2^17 words and more
	m := NewBlockMap(n)
	for b := uint64(0); b < n-1; b++ {
		m.SetNr(b, 1)
	}
	if b, ok := m.NextFree(7); !ok || b != n-1 {
		t.Errorf("next free after 7 = %d, %v; want %d", b, ok, uint64(n-1))
	}
	m.SetNr(n-1, 1)
	if _, ok := m.NextFree(0); ok {
		t.Error("a full map has a free block")
	}
	m.Reset()
	if b, ok := m.NextFree(n - 1); !ok || b != 0 {
		t.Errorf("after a reset, next free after the last = %d, %v; want 0", b, ok)
	}
	m = nil
	runtime.GC()
}

// TestLFSRWalksEveryBlockOnce: an LFSR over n returns each of 0..n-1
// exactly once, then stops, and after a reset walks them all again.
func TestLFSRWalksEveryBlockOnce(t *testing.T) {
	for _, n := range []uint64{1, 2, 7, 8, 9, 255, 256, 1000, 1 << 16} {
		l, ok := NewLFSR(n, 0x89)
		if !ok {
			t.Fatalf("n=%d: no LFSR", n)
		}
		for pass := range 2 {
			seen := make([]bool, n)
			for range n {
				v, ok := l.Next()
				if !ok || v >= n || seen[v] {
					t.Fatalf("n=%d pass %d: %d, %v (seen %v)", n, pass, v, ok, v < n && seen[v])
				}
				seen[v] = true
			}
			if v, ok := l.Next(); ok {
				t.Fatalf("n=%d pass %d: a value (%d) beyond the n", n, pass, v)
			}
			l.Reset(0x89)
		}
	}
	if _, ok := NewLFSR(100, 0x7f); ok {
		t.Error("a seed whose low 7 bits are all ones (the XNOR LFSR's dead state) was taken")
	}
}

func TestTausBetween(t *testing.T) {
	r := NewTaus88(1)
	var seen [101]int
	for range 100000 {
		v := r.Between(1, 100)
		if v < 1 || v > 100 {
			t.Fatalf("between(1, 100) = %d", v)
		}
		seen[v]++
	}
	for v := 1; v <= 100; v++ {
		if seen[v] < 800 || seen[v] > 1200 {
			t.Errorf("%d drawn %d times in 100000, want about 1000", v, seen[v])
		}
	}
}
