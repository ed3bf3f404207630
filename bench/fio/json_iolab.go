package fio

import (
	"strconv"

	"iolab/bench"
)

// IOLabReport is a job's "iolab" object in the JSON output: what iolab
// measures that fio does not. Absent when there is nothing to say.
type IOLabReport struct {
	// Read and Write hold the latency from each I/O's intended start
	// (coordinated omission corrected) of a direction paced by rate or
	// rate_iops, with fio's default percentiles, and the I/Os' time in
	// the block layer under --trace-block; absent when neither is.
	Read  *IOLabDir `json:"read,omitempty"`
	Write *IOLabDir `json:"write,omitempty"`
}

// IOLabDir is one direction of IOLabReport.
type IOLabDir struct {
	IntendedLat *LatReport   `json:"intended_lat_ns,omitempty"`
	Block       *BlockReport `json:"block,omitempty"`
}

// BlockReport is a direction's bench.BlockTime (--trace-block): each
// part's latency as fio reports clat, and the I/Os counted apart.
type BlockReport struct {
	Submit     LatReport `json:"submit_ns"`
	Queue      LatReport `json:"queue_ns"`
	Device     LatReport `json:"device_ns"`
	Completion LatReport `json:"completion_ns"`
	OneToOne   uint64    `json:"one_to_one"`
	Merged     uint64    `json:"merged"`
	Split      uint64    `json:"split"`
	SplitTimed uint64    `json:"split_timed"`
	Unmatched  uint64    `json:"unmatched"`
	// SplitAtLat splits the timed I/Os at each of the job's percentiles
	// of their lat (keys as fio's percentiles'): parts that add up to it.
	SplitAtLat map[string]LatSplitReport `json:"split_at_lat,omitempty"`
}

// LatSplitReport is bench.LatSplit: the timed I/Os at a percentile of
// lat, that lat as fio reports a percentile, how many they are and their
// mean parts (ns).
type LatSplitReport struct {
	Lat        uint64  `json:"lat_ns"`
	IOs        uint64  `json:"ios"`
	Submit     float64 `json:"submit_ns"`
	Queue      float64 `json:"queue_ns"`
	Device     float64 `json:"device_ns"`
	Completion float64 `json:"completion_ns"`
}

func iolabReport(r *bench.JobResult, plus bool) *IOLabReport {
	var out IOLabReport
	for d, dst := range []**IOLabDir{&out.Read, &out.Write} {
		var dir IOLabDir
		if r.Paced(d) {
			l := LatReportFrom(&r.Dirs[d].Intended, r.Job.PercentileList, plus)
			dir.IntendedLat = &l
		}
		if b := r.Dirs[d].Block; b != nil {
			list := r.Job.PercentileList
			dir.Block = &BlockReport{
				Submit: LatReportFrom(&b.Submit, list, plus), Queue: LatReportFrom(&b.Queue, list, plus),
				Device: LatReportFrom(&b.Device, list, plus), Completion: LatReportFrom(&b.Completion, list, plus),
				OneToOne: b.OneToOne, Merged: b.Merged, Split: b.Split, SplitTimed: b.SplitTimed, Unmatched: b.Unmatched,
			}
			for _, p := range list {
				if at, ok := b.ByLat.SplitAt(p); ok {
					if dir.Block.SplitAtLat == nil {
						dir.Block.SplitAtLat = map[string]LatSplitReport{}
					}
					dir.Block.SplitAtLat[strconv.FormatFloat(p, 'f', 6, 64)] = LatSplitReport{Lat: at.Lat, IOs: at.IOs,
						Submit: at.Parts[0], Queue: at.Parts[1], Device: at.Parts[2], Completion: at.Parts[3]}
				}
			}
		}
		if dir.IntendedLat != nil || dir.Block != nil {
			*dst = &dir
		}
	}
	if out.Read == nil && out.Write == nil {
		return nil
	}
	return &out
}
