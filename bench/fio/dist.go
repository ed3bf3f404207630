package fio

import "iolab/bench"

// fio's names of the distributions' buckets (stat.c
// show_thread_status_json and show_thread_status_normal).
var (
	depthKeys = []string{"1", "2", "4", "8", "16", "32", ">=64"}
	callKeys  = []string{"0", "4", "8", "16", "32", "64", ">=64"}
	latKeys   = []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"}
	latMSKeys = append(append([]string(nil), latKeys...), "2000", ">=2000")
)

// distributions are a job's shares in %, as fio computes them.
type distributions struct {
	level, submit, complete Dist
	latN, latU, latM        Dist
}

// distShares is fio's stat_calc_dist and stat_calc_lat: each bucket's
// share of the job's I/Os (or of its submit or reap calls), in %, a
// non-empty bucket shown as at least 0.1 % (depths) or 0.01 %
// (latencies); all 0 when there is nothing to share.
func distShares(d *bench.IODist) distributions {
	issued := d.Issued[bench.Read] + d.Issued[bench.Write] + d.Issued[bench.Trim] // fio's ddir_rw_sum
	return distributions{
		level:    shares(depthKeys, d.Depth[:], issued, 0.1),
		submit:   shares(callKeys, d.Submit[:], d.Submits, 0.1),
		complete: shares(callKeys, d.Complete[:], d.Reaps, 0.1),
		latN:     shares(latKeys, d.LatN[:], issued, 0.01),
		latU:     shares(latKeys, d.LatU[:], issued, 0.01),
		latM:     shares(latMSKeys, d.LatM[:], issued, 0.01),
	}
}

func shares(keys []string, counts []uint64, total uint64, least float64) Dist {
	out := make(Dist, len(keys))
	for i, k := range keys {
		out[i].Key = k
		if total == 0 {
			continue
		}
		p := 100 * float64(counts[i]) / float64(total)
		if p < least && counts[i] > 0 {
			p = least
		}
		out[i].Percent = p
	}
	return out
}
