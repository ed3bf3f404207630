package bench

import "iolab/bench/hist"

// BlockTime is where one direction's I/Os spent their time in the block
// layer, from the kernel's timestamps of their bios and requests
// (--trace-block; bench/blocktrace records them). Each part is fio's
// latency histogram, like clat, so its percentiles are exact and merge
// across jobs, repeats and hosts. For an I/O that maps one-to-one onto a
// bio and a request the four parts add up to its lat:
//
//	submit:     iolab's submission (the engine's syscall) to the bio's
//	            queueing (Q)
//	queue:      Q to the request's issue to the driver (D): the tag wait
//	            and the I/O scheduler (btt's Q2D); 0 for bio-based drivers
//	device:     D to the request's completion (C), btt's D2C; Q to the
//	            bio's completion for bio-based drivers
//	completion: C to iolab's reaping of the I/O
//
// An I/O split into several bios or requests is timed over its pieces
// when every piece was seen: submit to its queueing, queue to its first
// piece's issue, device to its last piece's completion, so that its parts
// too add up to its lat (SplitTimed counts those). I/Os merged with
// others into one request, split I/Os with a piece unseen or merged, and
// those with no bio seen are counted apart and left out of the
// histograms.
type BlockTime struct {
	Submit     hist.Lat `json:"submit"`
	Queue      hist.Lat `json:"queue"`
	Device     hist.Lat `json:"device"`
	Completion hist.Lat `json:"completion"`

	OneToOne   uint64 `json:"one_to_one"`            // one bio, one request: in the histograms
	Merged     uint64 `json:"merged"`                // shared a request with other I/Os
	Split      uint64 `json:"split"`                 // became several bios or requests
	SplitTimed uint64 `json:"split_timed,omitempty"` // of Split, in the histograms
	Unmatched  uint64 `json:"unmatched"`             // no bio of theirs was seen
}

// IOs counts the I/Os the trace accounted for.
func (b *BlockTime) IOs() uint64 { return b.OneToOne + b.Merged + b.Split + b.Unmatched }

// Timed counts the I/Os in the histograms: the one-to-one and the timed
// splits.
func (b *BlockTime) Timed() uint64 { return b.OneToOne + b.SplitTimed }

// Merge adds o into b.
func (b *BlockTime) Merge(o *BlockTime) {
	b.Submit.Merge(&o.Submit)
	b.Queue.Merge(&o.Queue)
	b.Device.Merge(&o.Device)
	b.Completion.Merge(&o.Completion)
	b.OneToOne += o.OneToOne
	b.Merged += o.Merged
	b.Split += o.Split
	b.SplitTimed += o.SplitTimed
	b.Unmatched += o.Unmatched
}

// BlockTrace is what the block-layer trace of a group saw beside its jobs'
// own I/Os, and what it may have missed: a trace that lost events says so
// where its figures are shown.
type BlockTrace struct {
	// Devices are the traced block devices ("major:minor").
	Devices []string `json:"devices"`
	// Foreign counts the bios on the traced devices that were not the
	// jobs' own (other processes' I/O).
	Foreign uint64 `json:"foreign"`
	// Dropped counts records the kernel could not hand over (ring buffer
	// full) and Missed the events whose programs the kernel did not run
	// (nested in another BPF program).
	Dropped uint64 `json:"dropped"`
	Missed  uint64 `json:"missed"`
}
