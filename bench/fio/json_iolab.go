package fio

import "iolab/bench"

// IOLabReport is a job's "iolab" object in the JSON output: what iolab
// measures that fio does not. Absent when there is nothing to say.
type IOLabReport struct {
	// Read and Write hold the latency from each I/O's intended start
	// (coordinated omission corrected) of a direction paced by rate or
	// rate_iops, with fio's default percentiles; absent otherwise.
	Read  *IOLabDir `json:"read,omitempty"`
	Write *IOLabDir `json:"write,omitempty"`
}

// IOLabDir is one direction of IOLabReport.
type IOLabDir struct {
	IntendedLat LatReport `json:"intended_lat_ns"`
}

func iolabReport(r *bench.JobResult, plus bool) *IOLabReport {
	var out IOLabReport
	for d, dst := range []**IOLabDir{&out.Read, &out.Write} {
		if r.Paced(d) {
			*dst = &IOLabDir{IntendedLat: LatReportFrom(&r.Dirs[d].Intended, r.Job.PercentileList, plus)}
		}
	}
	if out.Read == nil && out.Write == nil {
		return nil
	}
	return &out
}
