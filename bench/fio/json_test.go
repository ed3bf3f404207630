package fio

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"iolab/bench/hist"
)

// fioTestdata is a real fio 3.33 json+ output: randrw on io_uring at
// iodepth 8.
const fioTestdata = "testdata/randrw-io_uring-qd8.json"

func readFioTestdata(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(fioTestdata)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseOne(t *testing.T, data []byte) Report {
	t.Helper()
	reports, err := ParseReports(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 {
		t.Fatalf("got %d reports, want 1", len(reports))
	}
	return reports[0]
}

func TestParseReportsFio(t *testing.T) {
	rep := parseOne(t, readFioTestdata(t))

	if rep.FioVersion != "fio-3.33" || rep.Timestamp != 1795977200 || rep.TimestampMS != 1795977200111 || rep.Time != "Sun Nov 29 18:33:20 2026" {
		t.Errorf("header = %q %d %d %q", rep.FioVersion, rep.Timestamp, rep.TimestampMS, rep.Time)
	}
	if rep.GlobalOptions != nil {
		t.Errorf("global options = %v, want none", rep.GlobalOptions)
	}
	if len(rep.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(rep.Jobs))
	}
	job := rep.Jobs[0]
	if job.JobName != "qd8" || job.GroupID != 0 || job.Error != 0 || job.Elapsed != 3 {
		t.Errorf("job = %q group %d error %d elapsed %d", job.JobName, job.GroupID, job.Error, job.Elapsed)
	}
	wantOpts := Options{
		{Name: "name", Value: "qd8"}, {Name: "filename", Value: "/dev/loop0"}, {Name: "rw", Value: "randrw"}, {Name: "rwmixread", Value: "70"},
		{Name: "bs", Value: "4k"}, {Name: "iodepth", Value: "8"}, {Name: "ioengine", Value: "io_uring"}, {Name: "direct", Value: "1"}, {Name: "runtime", Value: "2"},
	}
	if !slices.Equal(job.JobOptions, wantOpts) {
		t.Errorf("job options = %v\nwant %v", job.JobOptions, wantOpts)
	}

	r := job.Read
	if r.IOPS != 57213.893053 || r.IOBytes != 468930560 || r.BW != 228855 || r.Runtime != 2001 || r.TotalIOs != 114485 {
		t.Errorf("read: iops %v bytes %d bw %d runtime %d ios %d", r.IOPS, r.IOBytes, r.BW, r.Runtime, r.TotalIOs)
	}
	if r.Slat.Min != 1893 || r.Slat.Mean != 4269.411495 || r.Slat.N != 114485 || r.Slat.Percentile != nil {
		t.Errorf("read slat = %+v", r.Slat)
	}
	if v, ok := r.Clat.Percentile.Get(99); !ok || v != 183296 {
		t.Errorf("read clat p99 = %d, %v; want 183296", v, ok)
	}
	if v, ok := r.Clat.Percentile.Get(99.99); !ok || v != 1204224 {
		t.Errorf("read clat p99.99 = %d, %v; want 1204224", v, ok)
	}
	if len(r.Clat.Bins) != 439 || r.Clat.Bins[652] != 1 || r.Clat.Bins[5536] != 9 {
		t.Errorf("read clat: %d bins, bins[652] = %d, bins[5536] = %d", len(r.Clat.Bins), r.Clat.Bins[652], r.Clat.Bins[5536])
	}
	if r.BWAgg != 100 || r.BWSamples != 3 || r.IOPSStddev != 3940.998012 {
		t.Errorf("read bw_agg %v bw_samples %d iops_stddev %v", r.BWAgg, r.BWSamples, r.IOPSStddev)
	}
	if job.Write.Clat.N != 48954 || job.Write.IOPS != 24464.767616 {
		t.Errorf("write clat N %d iops %v", job.Write.Clat.N, job.Write.IOPS)
	}
	if job.Trim.TotalIOs != 0 || job.Trim.Clat.Percentile != nil || job.Sync.Lat.N != 0 {
		t.Errorf("trim/sync not empty: %+v %+v", job.Trim, job.Sync)
	}
	if job.JobRuntime != 2000 || job.UsrCPU != 5.4 || job.SysCPU != 38.55 || job.Ctx != 43321 || job.Minf != 12 {
		t.Errorf("cpu: runtime %d usr %v sys %v ctx %d minf %d", job.JobRuntime, job.UsrCPU, job.SysCPU, job.Ctx, job.Minf)
	}
	get := func(d Dist, key string) float64 {
		v, ok := d.Get(key)
		if !ok {
			t.Errorf("no %q in %v", key, d)
		}
		return v
	}
	if get(job.IODepthLevel, "8") != 99.995717 || get(job.IODepthLevel, ">=64") != 0 || len(job.IODepthLevel) != 7 || job.IODepthLevel[6].Key != ">=64" {
		t.Errorf("iodepth_level = %v", job.IODepthLevel)
	}
	if get(job.LatencyUS, "250") != 38.93318 || get(job.LatencyMS, "2") != 0.017132 || get(job.LatencyNS, "750") != 0.01 {
		t.Errorf("latency_us %v latency_ms %v latency_ns %v", job.LatencyUS, job.LatencyMS, job.LatencyNS)
	}
	if job.LatencyDepth != 8 || job.LatencyPercentile != 100 {
		t.Errorf("latency_depth %d latency_percentile %v", job.LatencyDepth, job.LatencyPercentile)
	}

	if len(rep.DiskUtil) != 1 {
		t.Fatalf("%d disk_util entries, want 1", len(rep.DiskUtil))
	}
	du := rep.DiskUtil[0]
	if du.Name != "loop0" || du.ReadIOs != 108110 || du.WriteIOs != 46281 || du.InQueue != 11366 || du.Util != 94.837093 {
		t.Errorf("disk_util = %+v", du)
	}
}

func TestReportRoundTrip(t *testing.T) {
	rep := parseOne(t, readFioTestdata(t))
	rep.IolabVersion = "test"
	rep.GlobalOptions = Options{{Name: "ioengine", Value: "io_uring"}, {Name: "time_based", Value: ""}, {Name: "name", Value: `a "quoted" <name>`}}
	rep.DiskUtil[0].AvgQueueSize = 7.5
	rep.DiskUtil[0].ReadAwait = 0.25

	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	back := parseOne(t, out)
	if !reflect.DeepEqual(back, rep) {
		t.Errorf("marshal and parse again changed the report")
	}

	s := string(out)
	// Options and percentiles keep fio's order; key names are fio's.
	inOrder(t, s, `"ioengine": "io_uring"`, `"time_based": ""`, `"name": "a \"quoted\" \u003cname\u003e"`)
	inOrder(t, s, `"name": "qd8"`, `"filename": "/dev/loop0"`, `"rw": "randrw"`, `"rwmixread": "70"`, `"runtime": "2"`)
	inOrder(t, s, `"1.000000": 11200`, `"5.000000": 19072`, `"10.000000": 24960`, `"50.000000": 63744`, `"99.000000": 183296`, `"99.990000": 1204224`)
	inOrder(t, s, `"fio version"`, `"iolab version"`, `"timestamp"`, `"global options"`, `"jobs"`, `"disk_util"`)
	inOrder(t, s, `"jobname"`, `"job options"`, `"read"`, `"write"`, `"trim"`, `"sync"`, `"job_runtime"`, `"iodepth_level"`)
	for _, key := range []string{`"aqu-sz": 7.5`, `"r_await": 0.25`, `"clat_ns"`, `"bins"`, `"652": 1`} {
		if !strings.Contains(s, key) {
			t.Errorf("output lacks %s", key)
		}
	}
	if strings.Contains(s, `"w_await"`) || strings.Contains(s, `"mixed"`) {
		t.Error("output has empty optional fields")
	}
}

func inOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Errorf("%s missing or out of order in output", p)
			return
		}
		at += i + len(p)
	}
}

func TestParseReportsStream(t *testing.T) {
	doc := readFioTestdata(t)
	second := bytes.Replace(doc, []byte(`"timestamp" : 1795977200,`), []byte(`"timestamp" : 1795977201,`), 1)
	var in bytes.Buffer
	in.WriteString("fio: this platform does not support process shared mutexes, forcing use of threads\n")
	in.WriteString("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n")
	in.Write(doc)
	in.Write(second)                                       // back to back, as --status-interval prints them
	in.WriteString("\nfio: file hash not empty on exit\n") // trailing stderr

	reports, err := ParseReports(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 {
		t.Fatalf("got %d reports, want 2", len(reports))
	}
	if reports[0].Timestamp != 1795977200 || reports[1].Timestamp != 1795977201 {
		t.Errorf("timestamps %d, %d", reports[0].Timestamp, reports[1].Timestamp)
	}
	if reports[1].Jobs[0].Read.Clat.N != 114485 {
		t.Errorf("second report read clat N = %d", reports[1].Jobs[0].Read.Clat.N)
	}
}

func TestParseReportsErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "no JSON document"},
		{"text", "fio: no such file\nfoo: bar\n", "no JSON document"},
		{"terse", "3;fio-3.33;qd8;0;0;457940;228855\n", "no JSON document"},
		{"bad json", "warning\n{ \"jobs\": [ }", "at byte 21"},
		{"truncated", "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n", "at byte 45: unexpected EOF"},
		{"not fio", `{"name": "x"}`, `no "jobs"`},
		{"wrong type", `{"jobs": [{"jobname": 5}]}`, "jobname"},
		{"bad percentile", `{"jobs": [{"read": {"clat_ns": {"percentile": {"p99": 1}}}}]}`, `"p99"`},
		{"second document broken", `{"jobs": []}` + "\n{\"jobs\": x}", "document 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reports, err := ParseReports(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error, got %d reports", len(reports))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestFioOptionsJSON(t *testing.T) {
	var o Options
	if err := json.Unmarshal([]byte(`{"z": "1", "a": 2, "m": null, "b": true, "z": "again"}`), &o); err != nil {
		t.Fatal(err)
	}
	want := Options{{Name: "z", Value: "1"}, {Name: "a", Value: "2"}, {Name: "m", Value: ""}, {Name: "b", Value: "true"}, {Name: "z", Value: "again"}}
	if !slices.Equal(o, want) {
		t.Errorf("got %v, want %v", o, want)
	}
	out, err := json.Marshal(Options{{Name: "z", Value: "1"}, {Name: "a", Value: "x<y"}})
	if err != nil {
		t.Fatal(err)
	}
	// json.Marshal escapes HTML in the embedding encoder, as for any string.
	if got := string(out); got != `{"z":"1","a":"x\u003cy"}` {
		t.Errorf("Marshal = %s", got)
	}
	if err := json.Unmarshal([]byte(`["a"]`), &o); err == nil {
		t.Error("no error for an array")
	}
}

func TestFioPercentileValuesJSON(t *testing.T) {
	pv := PercentileValues{{99.9, 3}, {1, 1}, {50, 2}, {99.99, 4}}
	out, err := json.Marshal(pv)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"1.000000":1,"50.000000":2,"99.900000":3,"99.990000":4}`; string(out) != want {
		t.Errorf("Marshal = %s, want %s", out, want)
	}
	var back PercentileValues
	if err := json.Unmarshal([]byte(`{"99.000000": 9, "5.000000": 5}`), &back); err != nil {
		t.Fatal(err)
	}
	if want := (PercentileValues{{5, 5}, {99, 9}}); !slices.Equal(back, want) {
		t.Errorf("Unmarshal = %v, want %v", back, want)
	}
}

func TestLatReportFrom(t *testing.T) {
	if r := LatReportFrom(&hist.Lat{}, hist.DefaultPercentiles(), true); !reflect.DeepEqual(r, LatReport{}) {
		t.Errorf("empty: %+v", r)
	}
	var l hist.Lat
	for v := uint64(1); v <= 100; v++ {
		l.Add(v)
	}
	l.Add(1000)
	r := LatReportFrom(&l, []float64{99, 50}, false)
	if r.Min != 1 || r.Max != 1000 || r.N != 101 || r.Mean != l.Stat.Mean || r.Stddev != l.Stat.Stddev() {
		t.Errorf("summary = %+v", r)
	}
	if want := (PercentileValues{{50, 51}, {99, 100}}); !slices.Equal(r.Percentile, want) {
		t.Errorf("percentile = %v, want %v", r.Percentile, want)
	}
	if r.Bins != nil {
		t.Errorf("bins without json+: %v", r.Bins)
	}
	r = LatReportFrom(&l, nil, true)
	if r.Percentile != nil || len(r.Bins) != 101 || r.Bins[1004] != 1 {
		t.Errorf("json+ without percentiles: %d percentiles, %d bins", len(r.Percentile), len(r.Bins))
	}
	h, err := r.Histogram()
	if err != nil || h != l.Hist {
		t.Errorf("Histogram() from bins differs (err %v)", err)
	}
	if _, err := (LatReport{N: 3}).Histogram(); err == nil {
		t.Error("no error for samples without bins")
	}
}

// TestFioPercentiles rebuilds fio's own histograms from its json+ output
// and checks that every percentile fio printed comes out the same.
func TestFioPercentiles(t *testing.T) {
	f, err := os.Open(fioTestdata)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reports, err := ParseReports(f)
	if err != nil {
		t.Fatal(err)
	}
	job := reports[0].Jobs[0]
	for _, dir := range []struct {
		name string
		lat  LatReport
	}{{"read", job.Read.Clat}, {"write", job.Write.Clat}} {
		t.Run(dir.name, func(t *testing.T) {
			clat := dir.lat
			if clat.N == 0 || len(clat.Bins) == 0 || len(clat.Percentile) == 0 {
				t.Fatalf("testdata has no clat histogram: N %d, %d bins, %d percentiles", clat.N, len(clat.Bins), len(clat.Percentile))
			}
			h, err := hist.HistogramFromBins(clat.Bins)
			if err != nil {
				t.Fatal(err)
			}
			if h.N() != clat.N {
				t.Errorf("N = %d, want fio's %d", h.N(), clat.N)
			}
			list := make([]float64, len(clat.Percentile))
			want := make([]uint64, len(clat.Percentile))
			for i, pv := range clat.Percentile {
				list[i], want[i] = pv.Percentile, pv.Value
			}
			if !slices.Equal(list, hist.DefaultPercentiles()) {
				t.Errorf("fio's list %v, want the default %v", list, hist.DefaultPercentiles())
			}
			if got := h.Percentiles(list); !slices.Equal(got, want) {
				t.Errorf("Percentiles = %v\n fio printed  %v", got, want)
			}
			if h2, err := clat.Histogram(); err != nil || h2 != h {
				t.Errorf("LatReport.Histogram() = (…, %v), differs from hist.HistogramFromBins", err)
			}
		})
	}
}
