package fio

import (
	"strings"

	"iolab/bench"
)

// syncReport is a job's "sync" block as fio 3.33 writes it (stat.c
// add_ddir_status_json for DDIR_SYNC): total_ios counts the fsyncs only
// (fio's total_io_u[DDIR_SYNC]), lat_ns every fsync and fdatasync from
// issue to completion, with the clat percentiles.
func syncReport(r *bench.JobResult, plus bool) SyncReport {
	return SyncReport{TotalIOs: r.Sync.Fsyncs, Lat: LatReportFrom(&r.Sync.Lat, r.Job.PercentileList, plus)}
}

// writeSyncNormal prints the syncs the way fio's normal output does
// (stat.c show_ddir_status for DDIR_SYNC), after the latency buckets.
func writeSyncNormal(b *strings.Builder, r *bench.JobResult) {
	l := &r.Sync.Lat
	if l.Stat.N == 0 {
		return
	}
	b.WriteString("  fsync/fdatasync/sync_file_range:\n")
	writeLat(b, "sync", &l.Stat)
	writePercentiles(b, "sync", l, r.Job.PercentileList)
}

// importSync is syncReport's inverse: fio's lat_ns counts both kinds, its
// total_ios the fsyncs.
func importSync(dr *SyncReport) (bench.SyncResult, error) {
	lat, _, err := fioLat(&dr.Lat)
	if err != nil {
		return bench.SyncResult{}, err
	}
	s := bench.SyncResult{Fsyncs: min(dr.TotalIOs, lat.Stat.N), Lat: lat}
	s.Fdatasyncs = lat.Stat.N - s.Fsyncs
	return s, nil
}
