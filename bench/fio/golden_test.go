package fio

import (
	"bytes"
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/golden"
	"iolab/bench/system"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden with the output the tests produce")

// The golden files pin what other programs read from iolab: fio's normal
// output and its JSON and json+ documents. Their inputs are synthetic
// results (fixed times, fixed latencies, fixed counters) of real job files,
// so the files are byte-stable and a change to them is a change of output.

// goldenStart is when every golden run began; UTC, so the files do not
// depend on the machine's time zone.
var goldenStart = time.Date(2026, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

// load is what a synthetic job did in one direction.
type load struct {
	ios  uint64
	clat time.Duration // the typical completion latency
	slat time.Duration // the typical submission latency; 0 for sync engines, which have none
}

// synthJob is what one job of a golden case did over its window.
type synthJob struct {
	runtime     time.Duration
	read, write load
	err         string
	errno       int
	// totalErr errors, the first firstError, that the job went on after
	// (continue_on_error).
	totalErr   uint64
	firstError int
	// steady is the job's steady-state window; depth the depth its
	// latency target's search ended at.
	steady *bench.SteadyResult
	depth  int
}

// synthDisk is a disk's counters over a golden run, as /proc/diskstats
// deltas.
type synthDisk struct {
	name  string
	delta system.DiskStat
}

type goldenCase struct {
	name    string
	jobFile string
	// jobs are, in the config's order over all groups (numjobs clones
	// included), what each job did.
	jobs  []synthJob
	disks []synthDisk // shown with every group, as Runner.Run does
}

var goldenCases = []goldenCase{{
	// One job that only reads, on an async engine (slat shown).
	name: "read",
	jobFile: `[global]
ioengine=io_uring
direct=1
runtime=2
time_based

[seqread]
filename=/dev/nvme0n1
rw=read
bs=128k
iodepth=16
`,
	jobs: []synthJob{{runtime: 2 * time.Second, read: load{ios: 25_000, clat: 1200 * time.Microsecond, slat: 3 * time.Microsecond}}},
}, {
	// Both directions in one job.
	name: "randrw",
	jobFile: `[randrw]
filename=/dev/loop0
rw=randrw
rwmixread=70
bs=4k
ioengine=libaio
iodepth=8
direct=1
runtime=2
`,
	jobs: []synthJob{{
		runtime: 2001 * time.Millisecond,
		read:    load{ios: 114_485, clat: 70 * time.Microsecond, slat: 4 * time.Microsecond},
		write:   load{ios: 48_954, clat: 95 * time.Microsecond, slat: 5 * time.Microsecond},
	}},
}, {
	// Four clones under group_reporting: one merged result, jobs=4.
	name: "group_reporting",
	jobFile: `[global]
ioengine=psync
rw=randread
bs=4k
direct=1
size=1g
runtime=1
time_based
group_reporting

[clients]
filename=/srv/iolab/testfile
numjobs=4
`,
	jobs: []synthJob{
		{runtime: time.Second, read: load{ios: 8_000, clat: 120 * time.Microsecond}},
		{runtime: time.Second, read: load{ios: 8_250, clat: 118 * time.Microsecond}},
		{runtime: 1002 * time.Millisecond, read: load{ios: 7_900, clat: 122 * time.Microsecond}},
		{runtime: time.Second, read: load{ios: 8_100, clat: 119 * time.Microsecond}},
	},
}, {
	// A job that failed part-way: what it did before the error is kept.
	name: "error",
	jobFile: `[writer]
filename=/dev/sdb
rw=write
bs=1m
ioengine=psync
direct=1
runtime=5
`,
	jobs: []synthJob{{runtime: 1250 * time.Millisecond, write: load{ios: 312, clat: 4 * time.Millisecond},
		err: "job writer: write of 1048576 bytes at offset 327155712 on /dev/sdb: input/output error", errno: 5}},
}, {
	// A job that went on after its read errors (continue_on_error), and
	// one that met none: fio's total_err and first_error, and the first
	// error as the job's.
	name: "continue_on_error",
	jobFile: `[global]
filename=/dev/sdb
ioengine=libaio
direct=1
size=2m
continue_on_error=read

[scan]
rw=read

[clean]
rw=write
offset=2m
`,
	jobs: []synthJob{{runtime: 80 * time.Millisecond, read: load{ios: 512, clat: 150 * time.Microsecond, slat: 2 * time.Microsecond}, totalErr: 16, firstError: 5},
		{runtime: 90 * time.Millisecond, write: load{ios: 512, clat: 170 * time.Microsecond, slat: 2 * time.Microsecond}}},
}, {
	// Two jobs on two disks, the second disk named first by the jobs:
	// the disks stay in the jobs' order.
	name: "disk_util",
	jobFile: `[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=32
runtime=2
time_based

[writer]
filename=/dev/nvme1n1
rw=randwrite

[reader]
filename=/dev/nvme0n1
rw=randread
`,
	jobs: []synthJob{
		{runtime: 2 * time.Second, write: load{ios: 180_000, clat: 350 * time.Microsecond, slat: 2 * time.Microsecond}},
		{runtime: 2 * time.Second, read: load{ios: 420_000, clat: 150 * time.Microsecond, slat: 2 * time.Microsecond}},
	},
	disks: []synthDisk{
		{"nvme1n1", system.DiskStat{WriteIOs: 179_990, WriteMerges: 12, WriteSectors: 1_439_920, WriteTicks: 61_200, IOTicks: 1_996, TimeInQueue: 61_180}},
		{"nvme0n1", system.DiskStat{ReadIOs: 419_980, ReadSectors: 3_359_840, ReadTicks: 60_900, WriteIOs: 3, WriteSectors: 24, WriteTicks: 1, IOTicks: 1_999, TimeInQueue: 60_850}},
	},
}, {
	// Two phases: a writer, then two readers (numjobs clones) after a
	// stonewall. Each group has its run status; the disk's counters add
	// up over both phases.
	name: "stonewall",
	jobFile: `[global]
ioengine=libaio
direct=1
bs=64k
iodepth=4
size=256m
filename=/dev/loop1

[seq-write]
rw=write

[seq-read]
stonewall
rw=read
numjobs=2
`,
	jobs: []synthJob{
		{runtime: 1600 * time.Millisecond, write: load{ios: 4096, clat: 1500 * time.Microsecond, slat: 6 * time.Microsecond}},
		{runtime: 900 * time.Millisecond, read: load{ios: 4096, clat: 850 * time.Microsecond, slat: 5 * time.Microsecond}},
		{runtime: 910 * time.Millisecond, read: load{ios: 4096, clat: 860 * time.Microsecond, slat: 5 * time.Microsecond}},
	},
	disks: []synthDisk{
		{"loop1", system.DiskStat{ReadIOs: 4100, ReadSectors: 524_800, ReadTicks: 3_300, WriteIOs: 2050, WriteSectors: 262_400, WriteTicks: 2_900, IOTicks: 1_550, TimeInQueue: 6_150}},
	},
}, {
	// A job ended on steady state (its window's samples, the criterion
	// as fio prints it) and one ended by its latency target's search.
	name: "steadystate",
	jobFile: `[global]
ioengine=libaio
direct=1
filename=/dev/nvme0n1
time_based
runtime=60

[precondition]
rw=randwrite
bs=4k
iodepth=32
ss=iops_slope:0.5%
ss_dur=4s
ss_ramp=2s

[profile]
new_group
rw=randread
bs=4k
iodepth=64
latency_target=2ms
latency_window=500000
latency_percentile=99.9
`,
	jobs: []synthJob{
		{runtime: 9 * time.Second, write: load{ios: 1_800_000, clat: 160 * time.Microsecond, slat: 2 * time.Microsecond},
			steady: &bench.SteadyResult{Metric: bench.SteadyIOPS, Slope: true, Pct: true, Limit: 0.5, Dur: 4, Attained: true, Full: true,
				Criterion: 0.31, MaxDeviation: 0, SlopeValue: 62, IOPS: []uint64{200_110, 199_870, 200_320, 200_200},
				BW: []uint64{819_650_560, 818_667_520, 820_510_720, 820_019_200}, Last: 9 * time.Second}},
		{runtime: 500 * time.Millisecond, read: load{ios: 60_000, clat: 900 * time.Microsecond, slat: 2 * time.Microsecond}, depth: 24},
	},
}, {
	// cmdprio: a share of each direction's I/Os real-time, the others
	// idle (prioclass), latency shown per priority.
	name: "cmdprio",
	jobFile: `[prio]
filename=/dev/nvme0n1
rw=randrw
bs=4k
ioengine=io_uring
iodepth=16
direct=1
runtime=2
prioclass=3
cmdprio_percentage=20,40
cmdprio_class=1
cmdprio=2
`,
	jobs: []synthJob{{
		runtime: 2 * time.Second,
		read:    load{ios: 90_000, clat: 110 * time.Microsecond, slat: 3 * time.Microsecond},
		write:   load{ios: 60_000, clat: 150 * time.Microsecond, slat: 3 * time.Microsecond},
	}},
}}

// goldenRun turns a golden case into its config and result: the job file
// parsed as `iolab run` parses it, and each job's synthetic outcome, merged
// under group_reporting the way Runner.Run merges it.
func goldenRun(t *testing.T, c goldenCase) (*bench.Config, *bench.Result) {
	t.Helper()
	cfg, err := ParseJobFile(strings.NewReader(c.jobFile), c.name+".fio")
	if err != nil {
		t.Fatal(err)
	}
	res := &bench.Result{Start: goldenStart, Host: system.HostInfo{Hostname: "lab1", KernelRelease: "6.12.48-iolab"}}
	var disks []system.DiskUtilization
	for _, d := range c.disks {
		u := system.DiskDelta(system.DiskStat{}, d.delta, c.jobs[0].runtime)
		u.Name = d.name
		disks = append(disks, u)
	}
	next := 0
	for _, g := range cfg.Groups {
		gr := bench.GroupResult{ID: g.ID, Reporting: g.Reporting, Disks: disks}
		for i := range g.Jobs {
			if next == len(c.jobs) {
				t.Fatalf("%s: the job file has more jobs than the %d the case describes", c.name, len(c.jobs))
			}
			gr.Jobs = append(gr.Jobs, synthResult(g.Jobs[i], g.ID, c.jobs[next]))
			next++
		}
		if g.Reporting && len(gr.Jobs) > 1 {
			gr.Jobs = []bench.JobResult{bench.MergeJobs(gr.Jobs)}
		}
		res.Groups = append(res.Groups, gr)
	}
	if next != len(c.jobs) {
		t.Fatalf("%s: the case describes %d jobs, the job file has %d", c.name, len(c.jobs), next)
	}
	return cfg, res
}

// sampleWeights weigh the intervals of a job's window: uneven, so the
// interval statistics have a spread.
var sampleWeights = []float64{240, 262, 251, 247}

// synthResult is job j's result for what s says it did. Latencies follow
// a fixed pattern: spread over ±50 % of the typical value, with one I/O in
// 500 ten times slower, so percentiles and histograms have a tail.
func synthResult(j bench.Job, group int, s synthJob) bench.JobResult {
	const interval = 500 * time.Millisecond
	r := bench.JobResult{
		Name: j.Name, GroupID: group, Job: j, Error: s.err,
		Start: goldenStart, Runtime: s.runtime, Interval: interval, Jobs: 1, TID: 4242,
		Steady: s.steady, LatencyDepth: s.depth, TotalErr: s.totalErr, FirstError: s.firstError,
	}
	if s.err != "" {
		r.Errno = s.errno
	}
	var ios uint64
	depth := latencyDepth(&j)
	if e := j.Engine(); e != nil && e.Has(bench.SyncIO) {
		depth = 1
	}
	for d, l := range [2]load{s.read, s.write} {
		dr := &r.Dirs[d]
		dr.IOs, dr.Bytes = l.ios, l.ios*uint64(j.BS)
		r.Dist.Issued[d] = l.ios
		// With cmdprio, I/O k carries cmdprio's priority when k % 100 is
		// below its share, the job's own otherwise.
		if share := uint64(j.CmdprioPercentage[d]); share > 0 {
			dr.Prios = []bench.PrioLat{{Prio: j.JobIOPrio()}, {Prio: bench.IOPrioValue(j.CmdprioClass[d], j.CmdprioLevel[d])}}
			for k := range l.ios {
				i := 0
				if k%100 < share {
					i = 1
				}
				dr.Prios[i].Lat.Add(spread(k, l.clat))
			}
		}
		for k := range l.ios {
			clat := spread(k, l.clat)
			dr.Clat.Add(clat)
			// Each I/O submitted on its own at the full depth (the first
			// ones as the queue fills) and reaped on its own, as fio's
			// defaults do.
			r.Dist.MarkDepth(min(int(k)+1, depth), 1)
			r.Dist.MarkSubmit(1)
			r.Dist.MarkComplete(1)
			r.Dist.MarkLatency(clat)
			var slat uint64
			if l.slat > 0 {
				slat = spread(k*31, l.slat)
				dr.Slat.Add(slat)
			}
			dr.Lat.Add(slat + clat)
		}
		ios += l.ios
	}
	// Cumulative samples at the end of each whole interval of the window;
	// the I/Os of a last partial interval are in no sample, as in a real
	// run.
	n := int(s.runtime / interval)
	var total, sum float64
	for i := range n {
		total += sampleWeights[i%len(sampleWeights)]
	}
	covered := float64(time.Duration(n)*interval) / float64(s.runtime)
	for i := range n {
		sum += sampleWeights[i%len(sampleWeights)]
		smp := bench.Sample{At: time.Duration(i+1) * interval}
		for d := range 2 {
			c := uint64(math.Round(float64(r.Dirs[d].IOs) * covered * sum / total))
			smp.IOs[d], smp.Bytes[d] = c, c*uint64(j.BS)
		}
		r.Samples = append(r.Samples, smp)
	}
	r.UsrCPU = time.Duration(ios) * time.Microsecond
	r.SysCPU = time.Duration(ios) * 3 * time.Microsecond
	r.Ctx, r.MinFlt = ios/16+3, 38
	return r
}

// spread is the k-th latency around typical.
func spread(k uint64, typical time.Duration) uint64 {
	t := uint64(typical)
	v := t/2 + (k*7919%1000)*t/1000
	if k%500 == 499 {
		v *= 10
	}
	return v
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name) }

func TestGoldenNormal(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			cfg, res := goldenRun(t, c)
			var out bytes.Buffer
			if err := WriteNormal(&out, res, cfg); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, *update, goldenPath(c.name+".txt"), out.Bytes())
		})
	}
}

// goldenJSON is the JSON document as `iolab run --output-format=json`
// (or json+) writes it.
func goldenJSON(t *testing.T, c goldenCase, plus bool) []byte {
	t.Helper()
	cfg, res := goldenRun(t, c)
	var out bytes.Buffer
	rep := NewReport(res, cfg, plus)
	if err := WriteJSON(&out, &rep); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func jsonGoldenName(c goldenCase, plus bool) string {
	if plus {
		return c.name + ".jsonplus.json"
	}
	return c.name + ".json"
}

func TestGoldenJSON(t *testing.T) {
	for _, c := range goldenCases {
		for _, plus := range []bool{false, true} {
			name := jsonGoldenName(c, plus)
			t.Run(name, func(t *testing.T) {
				out := goldenJSON(t, c, plus)
				golden.Check(t, *update, goldenPath(name), out)

				// fio's readers, ours among them, take it back.
				_, res := goldenRun(t, c)
				rep := parseOne(t, out)
				if got, want := len(rep.Jobs), jobCount(res); got != want {
					t.Fatalf("%d jobs parsed, want %d", got, want)
				}
				k := 0
				for _, g := range res.Groups {
					for i := range g.Jobs {
						checkParsedJob(t, rep.Jobs[k], &g.Jobs[i], plus)
						k++
					}
				}
			})
		}
	}
}

func jobCount(res *bench.Result) int {
	n := 0
	for _, g := range res.Groups {
		n += len(g.Jobs)
	}
	return n
}

// checkParsedJob compares a job parsed back from the JSON with the result
// it was written from: counts, and with json+ the whole clat histogram.
func checkParsedJob(t *testing.T, jr JobReport, r *bench.JobResult, plus bool) {
	t.Helper()
	if jr.JobName != r.Name || jr.GroupID != r.GroupID || jr.Error != errnoOf(r) {
		t.Errorf("job %q group %d error %d, want %q group %d error %d (%q)", jr.JobName, jr.GroupID, jr.Error, r.Name, r.GroupID, errnoOf(r), r.Error)
	}
	if total, first := errorCounts(r); (total == nil) != (jr.TotalErr == nil) || (total != nil && (*jr.TotalErr != *total || *jr.FirstError != *first)) {
		t.Errorf("job %q: total_err %v first_error %v, want %v %v", jr.JobName, jr.TotalErr, jr.FirstError, total, first)
	}
	for d, dir := range []DirReport{jr.Read, jr.Write} {
		if dir.TotalIOs != r.Dirs[d].IOs || dir.IOBytes != r.Dirs[d].Bytes || dir.Clat.N != r.Dirs[d].Clat.Stat.N {
			t.Errorf("%s dir %d: total_ios %d io_bytes %d clat N %d, want %d %d %d", r.Name, d,
				dir.TotalIOs, dir.IOBytes, dir.Clat.N, r.Dirs[d].IOs, r.Dirs[d].Bytes, r.Dirs[d].Clat.Stat.N)
		}
		if want := len(prioReports(&r.Dirs[d], &r.Job, false)); len(dir.Prios) != want || (want > 0 && dir.Prios[0].Clat.N != r.Dirs[d].Prios[0].Lat.Stat.N) {
			t.Errorf("%s dir %d: %d priorities parsed back, want %d", r.Name, d, len(dir.Prios), want)
		}
		if !plus {
			if dir.Clat.Bins != nil {
				t.Errorf("%s dir %d: bins in plain json", r.Name, d)
			}
			continue
		}
		h, err := dir.Clat.Histogram()
		if err != nil || h != r.Dirs[d].Clat.Hist {
			t.Errorf("%s dir %d: clat histogram from json+ bins differs from the result's (err %v)", r.Name, d, err)
		}
	}
}
