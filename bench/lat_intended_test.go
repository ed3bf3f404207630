package bench

import "testing"

// TestHeldSince: an I/O due inside a hold counts the rest of that hold and
// every hold after it; one due between holds (the job was free) counts
// nothing; one due before every hold the ring still has was held all along.
func TestHeldSince(t *testing.T) {
	h := newHolds()
	h.add(100, 200) // a stall from 100 to 200
	h.add(210, 220)
	h.add(230, 240)
	for _, tc := range []struct {
		due, want int64
	}{
		{50, 0},              // before the first hold, nothing lost: free
		{100, 100 + 10 + 10}, // at the stall's start
		{150, 50 + 10 + 10},  // inside it
		{199, 1 + 10 + 10},   // at its last ns
		{200, 0},             // as it ended: the job was free
		{205, 0},             // between holds
		{215, 5 + 10},        // inside the second
		{240, 0},             // after the last
		{1000, 0},            // long after
	} {
		if got := h.heldSince(tc.due); got != tc.want {
			t.Errorf("heldSince(%d) = %d, want %d", tc.due, got, tc.want)
		}
	}
	h.add(300, 300) // an empty call holds nothing
	if h.n != 3 {
		t.Errorf("an empty hold was kept: %d holds", h.n)
	}
	// Past the ring's size the oldest go; a due time before what is kept
	// was held throughout.
	for i := range int64(holdsKept) {
		h.add(1000+2*i, 1001+2*i)
	}
	if got := h.heldSince(150); got != -1 {
		t.Errorf("due before the kept holds: heldSince = %d, want -1 (held all along)", got)
	}
	if got := h.heldSince(1000 + 2*10); got != holdsKept-10 {
		t.Errorf("due at the start of the 10th kept hold: %d, want %d", got, holdsKept-10)
	}
}

// BenchmarkHeldSince: the look-up is a binary search over the ring.
func BenchmarkHeldSince(b *testing.B) {
	h := newHolds()
	for i := range int64(holdsKept) {
		h.add(2*i, 2*i+1)
	}
	b.ResetTimer()
	for i := range b.N {
		h.heldSince(int64(i % (2 * holdsKept)))
	}
}
