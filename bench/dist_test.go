package bench

import "testing"

// TestIODistBuckets checks each mark against the bucket edges of fio's
// io_u.c (io_u_mark_depth, __io_u_mark_map, io_u_mark_lat_nsec/usec/msec).
func TestIODistBuckets(t *testing.T) {
	for _, c := range []struct{ cur, bucket int }{{1, 0}, {2, 1}, {3, 1}, {4, 2}, {7, 2}, {8, 3}, {15, 3}, {16, 4}, {31, 4}, {32, 5}, {63, 5}, {64, 6}, {4096, 6}} {
		var d IODist
		d.MarkDepth(c.cur, 3)
		if d.Depth[c.bucket] != 3 {
			t.Errorf("depth %d: buckets %v, want 3 in bucket %d", c.cur, d.Depth, c.bucket)
		}
	}
	for _, c := range []struct{ n, bucket int }{{0, 0}, {1, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 3}, {16, 3}, {17, 4}, {32, 4}, {33, 5}, {64, 5}, {65, 6}} {
		var d IODist
		d.MarkSubmit(c.n)
		d.MarkComplete(c.n)
		if d.Submit[c.bucket] != 1 || d.Complete[c.bucket] != 1 || d.Submits != 1 || d.Reaps != 1 {
			t.Errorf("%d I/Os a call: submit %v complete %v, want bucket %d", c.n, d.Submit, d.Complete, c.bucket)
		}
	}
	type lat struct {
		ns     uint64
		unit   string
		bucket int
	}
	for _, c := range []lat{
		{0, "n", 0}, {1, "n", 0}, {2, "n", 1}, {3, "n", 1}, {4, "n", 2}, {9, "n", 2}, {10, "n", 3}, {49, "n", 4}, {50, "n", 5},
		{249, "n", 6}, {250, "n", 7}, {500, "n", 8}, {749, "n", 8}, {750, "n", 9}, {999, "n", 9},
		{1000, "u", 0}, {1999, "u", 0}, {2000, "u", 1}, {99_999, "u", 5}, {100_000, "u", 6}, {999_999, "u", 9},
		{1_000_000, "m", 0}, {3_999_999, "m", 1}, {750_000_000, "m", 9}, {1_999_999_999, "m", 10}, {2_000_000_000, "m", 11}, {1 << 40, "m", 11},
	} {
		var d IODist
		d.MarkLatency(c.ns)
		got := map[string][]uint64{"n": d.LatN[:], "u": d.LatU[:], "m": d.LatM[:]}
		for unit, counts := range got {
			for i, n := range counts {
				if want := unit == c.unit && i == c.bucket; (n == 1) != want {
					t.Errorf("%d ns: lat_%s[%d] = %d", c.ns, unit, i, n)
				}
			}
		}
	}
}

// TestIODistMerge: group_reporting adds every count.
func TestIODistMerge(t *testing.T) {
	var a, b IODist
	a.MarkDepth(8, 5)
	a.MarkSubmit(1)
	a.MarkLatency(5000)
	a.Issued = DirCounts{5, 0}
	b.MarkDepth(8, 2)
	b.MarkComplete(70)
	b.MarkLatency(3_000_000)
	b.Issued = DirCounts{1, 1}
	a.Merge(&b)
	if a.Depth[3] != 7 || a.Submits != 1 || a.Reaps != 1 || a.Complete[6] != 1 || a.LatU[2] != 1 || a.LatM[1] != 1 || a.Issued != (DirCounts{6, 1}) {
		t.Errorf("merged: %+v", a)
	}
}
