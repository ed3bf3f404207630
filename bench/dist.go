package bench

// IODist is what fio keeps of a job's queue and latencies besides the
// histograms (fio's thread_stat io_u_map, io_u_submit, io_u_complete,
// io_u_lat_n/u/m, total_io_u, total_submit, total_complete; stat.h), for
// its "IO depths", "submit", "complete", "issued rwts" and "lat (usec)"
// lines and the JSON's iodepth_* and latency_* maps. The job loop fills it
// over the measured window, with the same rules as fio's io_u.c
// (io_u_mark_depth, io_u_mark_submit, io_u_mark_complete,
// io_u_mark_latency): array increments, no allocation, no clock read.
type IODist struct {
	// Depth counts I/Os by how many were checked out when they were
	// committed: 1, 2–3, 4–7, 8–15, 16–31, 32–63, ≥64.
	Depth [DistBuckets]uint64 `json:"depth"`
	// Submit counts submit calls by the I/Os each carried: 0, 1–4, 5–8,
	// 9–16, 17–32, 33–64, >64; Complete the same for reaps.
	Submit   [DistBuckets]uint64 `json:"submit"`
	Complete [DistBuckets]uint64 `json:"complete"`
	Submits  uint64              `json:"submits"`   // fio's total_submit: submit calls
	Reaps    uint64              `json:"completes"` // fio's total_complete: reap calls
	// Issued counts I/Os queued per direction (fio's total_io_u), the
	// base of the depth and latency shares.
	Issued DirCounts `json:"issued"`
	// LatN, LatU and LatM count completions by their clat: below 2, 4, 10,
	// 20, 50, 100, 250, 500, 750, 1000 ns (LatN), µs (LatU) or ms (LatM,
	// with 2000 and ≥2000 after).
	LatN [10]uint64 `json:"lat_n"`
	LatU [10]uint64 `json:"lat_u"`
	LatM [12]uint64 `json:"lat_m"`
}

// DistBuckets is fio's FIO_IO_U_MAP_NR.
const DistBuckets = 7

// latLimits are the upper ends of fio's latency buckets within a unit.
var latLimits = [...]uint64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000}

// MarkDepth records n I/Os committed with cur checked out.
func (d *IODist) MarkDepth(cur, n int) {
	i := 0
	for c := cur; c > 1 && i < DistBuckets-1; c >>= 1 {
		i++
	}
	d.Depth[i] += uint64(n)
}

// callBucket is fio's __io_u_mark_map: 0, 1–4, 5–8, 9–16, 17–32, 33–64,
// above.
func callBucket(n int) int {
	switch {
	case n <= 0:
		return 0
	case n <= 4:
		return 1
	}
	i := 2
	for lim := 8; n > lim && i < DistBuckets-1; lim <<= 1 {
		i++
	}
	return i
}

// MarkSubmit records one submit call that carried n I/Os.
func (d *IODist) MarkSubmit(n int) {
	d.Submit[callBucket(n)]++
	d.Submits++
}

// MarkComplete records one reap that returned n completions.
func (d *IODist) MarkComplete(n int) {
	d.Complete[callBucket(n)]++
	d.Reaps++
}

// MarkLatency records a completion's clat.
func (d *IODist) MarkLatency(ns uint64) {
	switch {
	case ns < 1000:
		d.LatN[latIndex(ns, 9)]++
	case ns < 1_000_000:
		d.LatU[latIndex(ns/1000, 9)]++
	default:
		d.LatM[latIndex(ns/1_000_000, 11)]++
	}
}

// latIndex is the first bucket whose limit is above v, at most last.
func latIndex(v uint64, last int) int {
	i := 0
	for i < last && v >= latLimits[i] {
		i++
	}
	return i
}

// Merge adds o into d (fio's sum_thread_stats).
func (d *IODist) Merge(o *IODist) {
	for i := range d.Depth {
		d.Depth[i] += o.Depth[i]
		d.Submit[i] += o.Submit[i]
		d.Complete[i] += o.Complete[i]
	}
	d.Submits += o.Submits
	d.Reaps += o.Reaps
	for i := range d.Issued {
		d.Issued[i] += o.Issued[i]
	}
	for i := range d.LatN {
		d.LatN[i] += o.LatN[i]
		d.LatU[i] += o.LatU[i]
	}
	for i := range d.LatM {
		d.LatM[i] += o.LatM[i]
	}
}
