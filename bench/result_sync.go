package bench

import "iolab/bench/hist"

// SyncResult is what a job's fsync=N and fdatasync=N syncs did over the
// measured window: fio's "sync" block (stat.c add_sync_clat_sample). The
// end-of-job fsync (end_fsync, fsync_on_close) is not counted, as in fio.
type SyncResult struct {
	Fsyncs     uint64 `json:"fsyncs"`
	Fdatasyncs uint64 `json:"fdatasyncs"`
	// Lat runs from the sync's issue to its completion, for both kinds
	// (fio's sync_stat: the clat of a sync).
	Lat hist.Lat `json:"lat"`
}

// IOs is how many syncs completed in the window.
func (s *SyncResult) IOs() uint64 { return s.Fsyncs + s.Fdatasyncs }

func (s *SyncResult) merge(o *SyncResult) {
	s.Fsyncs += o.Fsyncs
	s.Fdatasyncs += o.Fdatasyncs
	s.Lat.Merge(&o.Lat)
}
