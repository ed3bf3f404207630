package fio

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"iolab/bench"
	"iolab/bench/hist"
)

// The types below are fio's JSON output (--output-format=json and json+),
// with fio's own key names and in fio's key order (fio stat.c:
// show_thread_status_json, add_ddir_status_json, add_ddir_lat_json,
// json_array_add_disk_util). iolab writes its report with them and reads
// fio's output back with the same code, so the two always compare.

// Report is one fio JSON document.
type Report struct {
	FioVersion   string `json:"fio version,omitempty"`
	IolabVersion string `json:"iolab version,omitempty"`
	Timestamp    int64  `json:"timestamp"`
	TimestampMS  int64  `json:"timestamp_ms"`
	Time         string `json:"time"`
	// Hostname and Kernel are iolab's: where the run was measured.
	Hostname      string      `json:"hostname,omitempty"`
	Kernel        string      `json:"kernel,omitempty"`
	GlobalOptions Options     `json:"global options,omitempty"`
	Jobs          []JobReport `json:"jobs"`
	DiskUtil      []DiskUtil  `json:"disk_util,omitempty"`

	// fio's client output (fio --client=HOST …) has ClientStats, each
	// entry and disk_util entry naming its server, in place of Jobs;
	// Hosts splits it per server (client.go). fio 3.39 and later print
	// "global options" per server there: HostGlobalOptions.
	ClientStats       []JobReport   `json:"client_stats,omitempty"`
	HostGlobalOptions []HostOptions `json:"-"`
	// Server is set on the reports Hosts returns: the fio server their
	// jobs ran on.
	Server *Server `json:"-"`
}

// JobReport is one entry of "jobs": one job, or one reporting group with
// group_reporting (named after its first job).
type JobReport struct {
	JobName    string  `json:"jobname"`
	GroupID    int     `json:"groupid"`
	JobStart   int64   `json:"job_start,omitempty"` // newer fio than 3.33
	Error      int     `json:"error"`
	ETA        int64   `json:"eta"`
	Elapsed    int64   `json:"elapsed"`
	JobOptions Options `json:"job options,omitempty"`

	Read  DirReport `json:"read"`
	Write DirReport `json:"write"`
	Trim  DirReport `json:"trim"`
	// Sync is the fsync/fdatasync calls: only total_ios and lat_ns.
	Sync SyncReport `json:"sync"`
	// Mixed is present with unified_rw_reporting=both.
	Mixed *DirReport `json:"mixed,omitempty"`

	JobRuntime uint64  `json:"job_runtime"` // ms
	UsrCPU     float64 `json:"usr_cpu"`     // % of job_runtime
	SysCPU     float64 `json:"sys_cpu"`
	Ctx        uint64  `json:"ctx"`
	Majf       uint64  `json:"majf"`
	Minf       uint64  `json:"minf"`

	// Distributions in %, keyed as fio keys them ("1", "2", …, ">=64"),
	// in fio's order.
	IODepthLevel    Dist `json:"iodepth_level,omitempty"`
	IODepthSubmit   Dist `json:"iodepth_submit,omitempty"`
	IODepthComplete Dist `json:"iodepth_complete,omitempty"`
	LatencyNS       Dist `json:"latency_ns,omitempty"`
	LatencyUS       Dist `json:"latency_us,omitempty"`
	LatencyMS       Dist `json:"latency_ms,omitempty"`

	// With continue_on_error, even when nothing failed (fio's
	// show_thread_status_json writes them whenever it is set).
	TotalErr   *uint64 `json:"total_err,omitempty"`
	FirstError *int    `json:"first_error,omitempty"`

	// The latency target's settings: fio 3.33 prints them whenever
	// latency_depth is set, which is always (the job's queue depth).
	LatencyDepth      int     `json:"latency_depth"`
	LatencyTarget     uint64  `json:"latency_target"`
	LatencyPercentile float64 `json:"latency_percentile"`
	LatencyWindow     uint64  `json:"latency_window"`

	Desc string `json:"desc,omitempty"`
	// Steadystate is the steady-state window, with ss_dur (report_steady.go).
	Steadystate *SteadyReport `json:"steadystate,omitempty"`

	// In fio's client output: the server, as the client was given it.
	Hostname string `json:"hostname,omitempty"`
	Port     int    `json:"port,omitempty"`

	// IOLab is what iolab measures beyond fio (json_iolab.go), under a
	// key of its own so fio's fields stay as fio writes them.
	IOLab *IOLabReport `json:"iolab,omitempty"`
}

// DirReport is one direction ("read", "write", "trim", "sync" or "mixed") of
// a job. bw is in KiB/s, runtime in ms, bw_* in KiB/s over fio's 500 ms
// samples.
type DirReport struct {
	IOBytes  uint64  `json:"io_bytes"`
	IOKBytes uint64  `json:"io_kbytes"`
	BWBytes  uint64  `json:"bw_bytes"`
	BW       uint64  `json:"bw"`
	IOPS     float64 `json:"iops"`
	Runtime  uint64  `json:"runtime"`
	TotalIOs uint64  `json:"total_ios"`
	ShortIOs uint64  `json:"short_ios"`
	DropIOs  uint64  `json:"drop_ios"`

	Slat LatReport `json:"slat_ns"`
	Clat LatReport `json:"clat_ns"`
	Lat  LatReport `json:"lat_ns"`
	// Prios is the latency per priority (report_prio.go), where fio
	// 3.33 prints it: once two priorities of the direction have samples.
	Prios []PrioReport `json:"prios,omitempty"`

	BWMin     uint64  `json:"bw_min"`
	BWMax     uint64  `json:"bw_max"`
	BWAgg     float64 `json:"bw_agg"` // % of the group's aggregate bandwidth
	BWMean    float64 `json:"bw_mean"`
	BWDev     float64 `json:"bw_dev"`
	BWSamples uint64  `json:"bw_samples"`

	IOPSMin     uint64  `json:"iops_min"`
	IOPSMax     uint64  `json:"iops_max"`
	IOPSMean    float64 `json:"iops_mean"`
	IOPSStddev  float64 `json:"iops_stddev"`
	IOPSSamples uint64  `json:"iops_samples"`

	CacheHit float64 `json:"cachehit,omitempty"` // %, cached reads only
}

// SyncReport is fio's "sync" block: the fsync/fdatasync calls.
type SyncReport struct {
	TotalIOs uint64    `json:"total_ios"`
	Lat      LatReport `json:"lat_ns"`
}

// LatReport is one of slat_ns, clat_ns or lat_ns (all in ns).
type LatReport struct {
	Min    uint64  `json:"min"`
	Max    uint64  `json:"max"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	N      uint64  `json:"N"`
	// Percentile is present where fio computed percentiles (clat by
	// default, lat with lat_percentiles=1) and N > 0.
	Percentile PercentileValues `json:"percentile,omitempty"`
	// Bins (json+ only) is the histogram: bucket midpoint → count.
	Bins Bins `json:"bins,omitempty"`
}

// Bins is json+'s "bins": a latency histogram's non-empty buckets, bucket
// midpoint (ns) → count. fio prints them in ascending order of the
// midpoint, which is not the order of the keys as strings.
type Bins map[uint64]uint64

// MarshalJSON writes b in ascending order of the bucket.
func (b Bins) MarshalJSON() ([]byte, error) {
	keys := slices.Sorted(maps.Keys(b))
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = strconv.AppendUint(out, k, 10)
		out = append(out, '"', ':')
		out = strconv.AppendUint(out, b[k], 10)
	}
	return append(out, '}'), nil
}

// Dist is one of fio's distributions (iodepth_level, latency_us, …): a
// share in % per bucket, in fio's order of the buckets.
type Dist []DistValue

// DistValue is one bucket of a Dist.
type DistValue struct {
	Key     string  // as fio names the bucket: "4", ">=64"
	Percent float64 // of the job's I/Os (or submit or reap calls)
}

// Get returns the share of the bucket called key.
func (d Dist) Get(key string) (float64, bool) {
	for _, v := range d {
		if v.Key == key {
			return v.Percent, true
		}
	}
	return 0, false
}

// MarshalJSON writes d as an object in d's order, values as fio prints
// doubles.
func (d Dist) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range d {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, v.Key); err != nil {
			return nil, err
		}
		b = append(b, ':')
		b = appendFioFloat(b, v.Percent)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a distribution, keeping the order of its keys.
func (d *Dist) UnmarshalJSON(data []byte) error {
	out := Dist{}
	err := decodeObject(data, func(key string, raw json.RawMessage) error {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		out = append(out, DistValue{Key: key, Percent: v})
		return nil
	})
	if err != nil {
		return fmt.Errorf("bench: distribution: %w", err)
	}
	if string(bytes.TrimSpace(data)) == "null" {
		out = nil
	}
	*d = out
	return nil
}

// DiskUtil is one entry of "disk_util". fio 3.33 prints no sectors (newer
// fio does); the iostat -x style fields after Util are iolab's own.
type DiskUtil struct {
	Name         string  `json:"name"`
	ReadIOs      uint64  `json:"read_ios"`
	WriteIOs     uint64  `json:"write_ios"`
	ReadSectors  uint64  `json:"read_sectors,omitempty"` // newer fio than 3.33
	WriteSectors uint64  `json:"write_sectors,omitempty"`
	ReadMerges   uint64  `json:"read_merges"`
	WriteMerges  uint64  `json:"write_merges"`
	ReadTicks    uint64  `json:"read_ticks"` // ms
	WriteTicks   uint64  `json:"write_ticks"`
	InQueue      uint64  `json:"in_queue"`
	Util         float64 `json:"util"` // %

	// Averages over the device's slaves (e.g. an md or dm device).
	AggrReadIOs      uint64  `json:"aggr_read_ios,omitempty"`
	AggrWriteIOs     uint64  `json:"aggr_write_ios,omitempty"`
	AggrReadSectors  uint64  `json:"aggr_read_sectors,omitempty"`
	AggrWriteSectors uint64  `json:"aggr_write_sectors,omitempty"`
	AggrReadMerges   uint64  `json:"aggr_read_merges,omitempty"`
	AggrWriteMerges  uint64  `json:"aggr_write_merge,omitempty"` // sic: fio's key
	AggrReadTicks    uint64  `json:"aggr_read_ticks,omitempty"`
	AggrWriteTicks   uint64  `json:"aggr_write_ticks,omitempty"`
	AggrInQueue      uint64  `json:"aggr_in_queue,omitempty"`
	AggrUtil         float64 `json:"aggr_util,omitempty"`

	ReadsPerSec       float64 `json:"r/s,omitempty"`
	WritesPerSec      float64 `json:"w/s,omitempty"`
	ReadKBPerSec      float64 `json:"rkB/s,omitempty"`
	WriteKBPerSec     float64 `json:"wkB/s,omitempty"`
	ReadMergesPerSec  float64 `json:"rrqm/s,omitempty"`
	WriteMergesPerSec float64 `json:"wrqm/s,omitempty"`
	ReadAwait         float64 `json:"r_await,omitempty"`  // ms
	WriteAwait        float64 `json:"w_await,omitempty"`  // ms
	AvgQueueSize      float64 `json:"aqu-sz,omitempty"`   // requests
	ReadAvgRequestKB  float64 `json:"rareq-sz,omitempty"` // KiB
	WriteAvgRequestKB float64 `json:"wareq-sz,omitempty"` // KiB

	// In fio's client output: the server the disk belongs to.
	Hostname string `json:"hostname,omitempty"`
	Port     int    `json:"port,omitempty"`
}

// Options is fio's "job options" or "global options" object. fio prints the
// options in the order they were given, so they are a slice, marshalled as
// an object in order.
type Options []bench.Option

// MarshalJSON writes o as one JSON object, keys in o's order.
func (o Options) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, opt := range o {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, opt.Name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendJSONString(b, opt.Value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a JSON object into o, keeping the order of its keys.
// fio's values are strings; any other value is kept as its JSON text.
func (o *Options) UnmarshalJSON(data []byte) error {
	opts := Options{}
	err := decodeObject(data, func(key string, raw json.RawMessage) error {
		var value string
		if len(raw) > 0 && raw[0] == '"' {
			if err := json.Unmarshal(raw, &value); err != nil {
				return err
			}
		} else if string(raw) != "null" {
			value = string(raw)
		}
		opts = append(opts, bench.Option{Name: key, Value: value})
		return nil
	})
	if err != nil {
		return fmt.Errorf("bench: options: %w", err)
	}
	if string(bytes.TrimSpace(data)) == "null" {
		opts = nil
	}
	*o = opts
	return nil
}

// PercentileValue is one entry of fio's "percentile" object.
type PercentileValue struct {
	Percentile float64 // e.g. 99.9
	Value      uint64  // ns
}

// PercentileValues is fio's "percentile" object: keys are the percentiles
// printed with C's "%f" ("99.000000"), in ascending order as fio sorts them.
type PercentileValues []PercentileValue

// Get returns the value for percentile p.
func (pv PercentileValues) Get(p float64) (uint64, bool) {
	for _, v := range pv {
		if v.Percentile == p {
			return v.Value, true
		}
	}
	return 0, false
}

// MarshalJSON writes pv in ascending order of percentile, keys as fio's
// "%f".
func (pv PercentileValues) MarshalJSON() ([]byte, error) {
	sorted := slices.Clone(pv)
	slices.SortStableFunc(sorted, func(a, b PercentileValue) int { return cmp.Compare(a.Percentile, b.Percentile) })
	b := []byte{'{'}
	for i, v := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendFloat(b, v.Percentile, 'f', 6, 64)
		b = append(b, '"', ':')
		b = strconv.AppendUint(b, v.Value, 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads fio's "percentile" object, sorted by percentile.
func (pv *PercentileValues) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*pv = nil
		return nil
	}
	var out PercentileValues
	err := decodeObject(data, func(key string, raw json.RawMessage) error {
		p, err := strconv.ParseFloat(key, 64)
		if err != nil {
			return fmt.Errorf("key %q is not a percentile", key)
		}
		var v uint64
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("percentile %q: %w", key, err)
		}
		out = append(out, PercentileValue{Percentile: p, Value: v})
		return nil
	})
	if err != nil {
		return fmt.Errorf("bench: percentile: %w", err)
	}
	slices.SortStableFunc(out, func(a, b PercentileValue) int { return cmp.Compare(a.Percentile, b.Percentile) })
	*pv = out
	return nil
}

// decodeObject calls fn for each member of the JSON object in data, in
// order.
func decodeObject(data []byte, fn func(key string, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("want a JSON object, got %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := fn(key, raw); err != nil {
			return err
		}
	}
	_, err = dec.Token() // '}'
	return err
}

// appendJSONString appends s quoted, without the HTML escaping of
// json.Marshal: the encoder that embeds the result decides about that.
func appendJSONString(b []byte, s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// LatReportFrom summarises l as fio's add_ddir_lat_json does: min, max,
// mean, stddev and N; the percentiles in list when l has samples and list is
// not empty; and with withBins (json+) the histogram's non-empty buckets.
func LatReportFrom(l *hist.Lat, percentiles []float64, withBins bool) LatReport {
	s := &l.Stat
	if s.N == 0 {
		return LatReport{}
	}
	r := LatReport{Min: s.Min, Max: s.Max, Mean: s.Mean, Stddev: s.Stddev(), N: s.N}
	if len(percentiles) > 0 {
		values := l.Percentiles(percentiles)
		r.Percentile = make(PercentileValues, len(percentiles))
		for i, p := range percentiles {
			r.Percentile[i] = PercentileValue{Percentile: p, Value: values[i]}
		}
		slices.SortStableFunc(r.Percentile, func(a, b PercentileValue) int { return cmp.Compare(a.Percentile, b.Percentile) })
	}
	if withBins {
		r.Bins = l.Hist.Bins()
	}
	return r
}

// Histogram rebuilds the histogram from the json+ bins. It fails when l has
// samples but no bins (plain json output).
func (l LatReport) Histogram() (hist.Histogram, error) {
	if len(l.Bins) == 0 {
		if l.N == 0 {
			return hist.Histogram{}, nil
		}
		return hist.Histogram{}, errors.New("bench: latency has samples but no bins (not json+ output)")
	}
	return hist.HistogramFromBins(l.Bins)
}

// ParseReports reads fio's JSON output: one document, or several back to
// back as --status-interval prints them. Lines before a document that do not
// start with '{' (fio's "fio: ..." warnings, a fio client's "<host> ..."
// server messages, or stderr mixed in) are skipped, as is trailing text
// after the last document. fio's client output is read too: its
// ClientStats in place of Jobs (see Report.Hosts).
func ParseReports(r io.Reader) ([]Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("bench: read fio json: %w", err)
	}
	var reports []Report
	pos := 0
	for {
		start := nextDocument(data, pos)
		if start < 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		var rep Report
		if err := dec.Decode(&rep); err != nil {
			off := start + int(dec.InputOffset())
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			switch {
			case errors.Is(err, io.ErrUnexpectedEOF):
				off = len(data) // truncated, e.g. fio was killed while printing
			case errors.As(err, &syn):
				off = start + int(syn.Offset)
			case errors.As(err, &typ):
				off = start + int(typ.Offset)
			}
			return nil, fmt.Errorf("bench: fio json document %d (from byte %d): error at byte %d: %w", len(reports)+1, start, off, err)
		}
		if rep.Jobs == nil && rep.ClientStats == nil {
			return nil, fmt.Errorf("bench: fio json document %d (from byte %d): no \"jobs\" (nor fio client's \"client_stats\"): not fio output", len(reports)+1, start)
		}
		reports = append(reports, rep)
		pos = start + int(dec.InputOffset())
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("bench: fio json: no JSON document in %d bytes of input (no line starts with '{')", len(data))
	}
	return reports, nil
}

// nextDocument returns the offset of the first '{' at or after pos that
// starts a line (pos counts as a line start), ignoring leading blanks; -1
// if there is none.
func nextDocument(data []byte, pos int) int {
	for pos < len(data) {
		i := pos
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
			i++
		}
		if i < len(data) && data[i] == '{' {
			return i
		}
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			return -1
		}
		pos = i + nl + 1
	}
	return -1
}
