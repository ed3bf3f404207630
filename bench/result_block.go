package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"iolab/bench/hist"
)

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
//
// A part's percentiles are of its own times: the queue's median is the
// median I/O's wait, whatever that I/O's lat. ByLat keeps the timed
// I/Os' parts by their lat, so that the I/Os at a percentile of lat can
// be split: SplitAt.
type BlockTime struct {
	Submit     hist.Lat   `json:"submit"`
	Queue      hist.Lat   `json:"queue"`
	Device     hist.Lat   `json:"device"`
	Completion hist.Lat   `json:"completion"`
	ByLat      SplitByLat `json:"by_lat,omitempty"`

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

// AddTimed files a timed I/O's four parts (ns), which add up to its lat.
func (b *BlockTime) AddTimed(submit, queue, device, completion int64) {
	b.Submit.Add(uint64(submit))
	b.Queue.Add(uint64(queue))
	b.Device.Add(uint64(device))
	b.Completion.Add(uint64(completion))
	if b.ByLat == nil {
		b.ByLat = SplitByLat{}
	}
	k := hist.BucketIndex(uint64(submit + queue + device + completion))
	s := b.ByLat[k]
	s[0]++
	for i, v := range [4]int64{submit, queue, device, completion} {
		s[i+1] += uint64(v)
	}
	b.ByLat[k] = s
}

// Merge adds o into b.
func (b *BlockTime) Merge(o *BlockTime) {
	b.Submit.Merge(&o.Submit)
	b.Queue.Merge(&o.Queue)
	b.Device.Merge(&o.Device)
	b.Completion.Merge(&o.Completion)
	if len(o.ByLat) > 0 {
		if b.ByLat == nil {
			b.ByLat = SplitByLat{}
		}
		b.ByLat.Merge(o.ByLat)
	}
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

// SplitByLat is timed I/Os' parts by their lat: per bucket of fio's
// latency histogram (by index) that their lat fell in, how many they were
// and the sums of their submit, queue, device and completion times in ns.
// It merges bucket by bucket, exactly, as the histograms do.
type SplitByLat map[int][5]uint64

// Merge adds o into m.
func (m SplitByLat) Merge(o SplitByLat) {
	for k, v := range o {
		s := m[k]
		for i := range s {
			s[i] += v[i]
		}
		m[k] = s
	}
}

// LatSplit is the I/Os at a percentile of lat split into their parts:
// Lat is lat's percentile as fio reports it (its bucket's midpoint), IOs
// the timed I/Os in that bucket and Parts their mean submit, queue,
// device and completion times (ns), which add up to their mean lat: a
// value in that bucket, within fio's bucket width (1/64, 1.6 %) of Lat.
type LatSplit struct {
	Lat   uint64
	IOs   uint64
	Parts [4]float64
}

// Sum is the parts added up: the I/Os' mean lat.
func (s LatSplit) Sum() float64 { return s.Parts[0] + s.Parts[1] + s.Parts[2] + s.Parts[3] }

// SplitAt splits the timed I/Os at lat's percentile p; false when none
// were timed.
func (m SplitByLat) SplitAt(p float64) (LatSplit, bool) {
	var h hist.Histogram
	for k, v := range m {
		h.Counts[k] += v[0]
	}
	if h.N() == 0 {
		return LatSplit{}, false
	}
	lat := h.Percentiles([]float64{p})[0]
	v := m[hist.BucketIndex(lat)]
	out := LatSplit{Lat: lat, IOs: v[0]}
	for i := range out.Parts {
		out.Parts[i] = float64(v[i+1]) / float64(v[0])
	}
	return out, true
}

// MarshalJSON writes the buckets as their midpoints (as fio's json+ bins
// name them) → [I/Os, submit, queue, device, completion sums in ns].
func (m SplitByLat) MarshalJSON() ([]byte, error) {
	out := make(map[string][5]uint64, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[strconv.FormatUint(hist.BucketValue(k), 10)] = m[k]
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes; a key that is not a
// bucket's midpoint is an error.
func (m *SplitByLat) UnmarshalJSON(data []byte) error {
	var in map[string][5]uint64
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*m = make(SplitByLat, len(in))
	for key, v := range in {
		mid, err := strconv.ParseUint(key, 10, 64)
		if err != nil {
			return fmt.Errorf("by_lat: bucket %q: %w", key, err)
		}
		k := hist.BucketIndex(mid)
		if hist.BucketValue(k) != mid {
			return fmt.Errorf("by_lat: %d is not a latency bucket's midpoint", mid)
		}
		(*m)[k] = v
	}
	return nil
}
