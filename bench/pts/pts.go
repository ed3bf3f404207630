// Package pts owns SNIA's Solid State Storage Performance Test
// Specification (PTS) as iolab runs it: the tests (IOPS, throughput,
// latency, write saturation, demand intensity) as a table of their fio
// workloads, matrices and tracking variables; a test's parameters as a
// run is given them (Spec), with what they scale down from the
// specification; and the specification's steady-state rule on a series
// of rounds (Assess). Running a test's rounds is bench/sweep's (pts.go
// there), the report's views of them bench/summary's.
//
// pts is a leaf: it imports nothing of iolab.
package pts

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// The specification's parameters, for a device as it means them.
const (
	// WindowRounds is the steady-state measurement window: 5 rounds.
	WindowRounds = 5
	// MaxRounds is the most rounds the specification runs before it
	// reports steady state not reached.
	MaxRounds = 25
	// RangeLimit bounds the window's data excursion (max − min) as a
	// share of its average; SlopeLimit its best-fit line's excursion
	// over the window (|slope| × 4 rounds).
	RangeLimit = 0.20
	SlopeLimit = 0.10
	// RoundTime is each element's time in a round: one minute.
	RoundTime = time.Minute
	// WIPCLoops is workload-independent preconditioning: the device
	// written twice, 128 KiB sequential.
	WIPCLoops = 2
	// WSATCapacity is how much write saturation writes: 4 × the
	// device's capacity.
	WSATCapacity = 4
)

// Metrics a tracking variable is read as.
const (
	// MetricIOPS is the element's IOPS, reads and writes together.
	MetricIOPS = "iops"
	// MetricWriteBW is its write bandwidth, bytes/s.
	MetricWriteBW = "write_bw"
	// MetricReadBW is its read bandwidth, bytes/s.
	MetricReadBW = "read_bw"
	// MetricMeanLat is its mean response time (fio's lat: submission to
	// completion), ns, over reads and writes.
	MetricMeanLat = "lat_mean"
)

// Axis is one dimension of a test's matrix: a fio option and its values,
// in the order the specification runs them.
type Axis struct {
	Option string
	Values []string
}

// FirstValue in a tracking element stands for the axis's first value (a
// DIRTH matrix's most outstanding I/O, whatever matrix a run gives).
const FirstValue = "<first>"

// Tracking is a test's tracking variable: the element (a value of each
// axis, by option name) and the metric steady state is judged on.
type Tracking struct {
	Element map[string]string
	Metric  string
}

// String names the tracking variable: "bs=4k rwmixread=0 iops".
func (t Tracking) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t.Element)) {
		parts = append(parts, k+"="+t.Element[k])
	}
	return strings.Join(append(parts, t.Metric), " ")
}

// Test is one of the specification's tests.
type Test struct {
	Name  string // as `iolab pts NAME` takes it
	Title string
	// Section is where the specification (PTS-E 1.1 / PTS-C 2.x) defines it.
	Section string
	Help    string
	// Options are the fio options every element runs with; the matrix's
	// axes set the rest.
	Options []string
	Axes    []Axis
	// Tracking are the tracking variables; steady state is reached when
	// every one's window meets the rule. None (WSAT): the test runs until
	// it has written WSAT × the capacity.
	Tracking []Tracking
	// NumJobs and IODepth are the outstanding I/O (threads × queue
	// depth) the test runs at unless the run says otherwise; Fixed when
	// the specification fixes them (latency: one thread, queue depth 1).
	NumJobs, IODepth int
	FixedOIO         bool
	// Saturate is write saturation: rounds until the writes reach
	// Spec.WSAT × capacity, not until steady state.
	Saturate bool
}

// Tests is the table of the tests iolab runs, in the specification's
// order.
var Tests = []Test{
	{
		Name: "iops", Title: "IOPS", Section: "PTS-E 1.1 §7, PTS-C 2.0 §7",
		Help:    "random I/O at 7 read/write mixes × 8 block sizes each round, until the 4 KiB 100 % write IOPS is steady",
		Options: []string{"--rw=randrw", "--norandommap", "--randrepeat=0"},
		Axes: []Axis{
			{"rwmixread", []string{"100", "95", "65", "50", "35", "5", "0"}},
			{"bs", []string{"1024k", "128k", "64k", "32k", "16k", "8k", "4k", "512"}},
		},
		Tracking: []Tracking{{Element: map[string]string{"rwmixread": "0", "bs": "4k"}, Metric: MetricIOPS}},
		NumJobs:  1, IODepth: 32,
	},
	{
		Name: "throughput", Title: "Throughput", Section: "PTS-E 1.1 §8, PTS-C 2.0 §8",
		Help:    "sequential 128 KiB and 1024 KiB, 100 % write and 100 % read each round, until each block size's write bandwidth is steady",
		Options: []string{},
		Axes: []Axis{
			{"bs", []string{"1024k", "128k"}},
			{"rw", []string{"write", "read"}},
		},
		Tracking: []Tracking{
			{Element: map[string]string{"bs": "1024k", "rw": "write"}, Metric: MetricWriteBW},
			{Element: map[string]string{"bs": "128k", "rw": "write"}, Metric: MetricWriteBW},
		},
		NumJobs: 1, IODepth: 32,
	},
	{
		Name: "latency", Title: "Latency", Section: "PTS-E 1.1 §9, PTS-C 2.0 §9",
		Help:    "random I/O at 100/0, 65/35, 0/100 × 8, 4, 0.5 KiB, one job at iodepth 1, until the 4 KiB 100 % write mean response time is steady",
		Options: []string{"--rw=randrw", "--norandommap", "--randrepeat=0", "--percentile_list=50:99:99.9:99.99:99.999"},
		Axes: []Axis{
			{"rwmixread", []string{"100", "65", "0"}},
			{"bs", []string{"8k", "4k", "512"}},
		},
		Tracking: []Tracking{{Element: map[string]string{"rwmixread": "0", "bs": "4k"}, Metric: MetricMeanLat}},
		NumJobs:  1, IODepth: 1, FixedOIO: true,
	},
	{
		Name: "wsat", Title: "Write saturation (WSAT)", Section: "PTS-E 1.1 §6, PTS-C 2.0 §6",
		Help:    "4 KiB random writes, a round at a time, until WSAT × the capacity is written: IOPS against time and against the total written",
		Options: []string{"--rw=randwrite", "--bs=4k", "--norandommap", "--randrepeat=0"},
		NumJobs: 1, IODepth: 32,
		Saturate: true,
	},
	{
		Name: "dirth", Title: "Demand intensity / response time histogram (DIRTH)", Section: "PTS-E 1.1 §11",
		Help:    "8 KiB random 65/35 over jobs × iodepth from the most outstanding I/O to the least each round, until the most outstanding's IOPS is steady; response-time histograms per point",
		Options: []string{"--rw=randrw", "--rwmixread=65", "--bs=8k", "--norandommap", "--randrepeat=0", "--percentile_list=50:99:99.9:99.99:99.999"},
		Axes: []Axis{
			{"numjobs", []string{"32", "16", "8", "4", "2", "1"}},
			{"iodepth", []string{"32", "16", "8", "4", "2", "1"}},
		},
		Tracking: []Tracking{{Element: map[string]string{"numjobs": FirstValue, "iodepth": FirstValue}, Metric: MetricIOPS}},
		NumJobs:  1, IODepth: 1, FixedOIO: true,
	},
}

// TestNames lists the tests' names, in order.
func TestNames() []string {
	names := make([]string, len(Tests))
	for i, t := range Tests {
		names[i] = t.Name
	}
	return names
}

// Lookup returns the test called name.
func Lookup(name string) (*Test, error) {
	for i := range Tests {
		if Tests[i].Name == name {
			return &Tests[i], nil
		}
	}
	return nil, fmt.Errorf("unknown PTS test %q: the tests are %s", name, strings.Join(TestNames(), ", "))
}

// Purge methods (Spec.Purge).
const (
	// PurgeAuto is BLKSECDISCARD where the device offers it, else
	// BLKDISCARD, else BLKZEROOUT (the device written with zeroes):
	// the specification's purge asks for the device's own secure erase
	// or sanitize, which the block layer reaches through these.
	PurgeAuto    = "auto"
	PurgeSecure  = "secure"
	PurgeDiscard = "discard"
	PurgeZero    = "zero"
	// PurgeNone skips the purge: the report says so.
	PurgeNone = "none"
)

// PurgeMethods are the values Spec.Purge takes.
var PurgeMethods = []string{PurgeAuto, PurgeSecure, PurgeDiscard, PurgeZero, PurgeNone}

// Spec is a PTS test as a run is given it: the test and the parameters
// the specification fixes, which a run may scale down to fit a small
// device or a short afternoon. The zero values are the specification's.
type Spec struct {
	Test string `json:"test"`
	// MaxRounds is the most rounds (default 25); a WSAT run's rounds are
	// bounded by its writes instead, and MaxRounds caps them.
	MaxRounds int `json:"max_rounds,omitempty"`
	// RoundTime is each element's runtime in a round (default 1 minute).
	RoundTime time.Duration `json:"round_time,omitempty"`
	// Purge is how the device is purged before preconditioning (default
	// auto).
	Purge string `json:"purge,omitempty"`
	// WIPCLoops is how many times workload-independent preconditioning
	// writes the active range (default 2; -1: none).
	WIPCLoops int `json:"wipc_loops,omitempty"`
	// Size is the active range in bytes, from the device's start; 0 is the
	// whole device.
	Size int64 `json:"size,omitempty"`
	// NumJobs and IODepth are the outstanding I/O; 0 takes the test's.
	NumJobs int `json:"numjobs,omitempty"`
	IODepth int `json:"iodepth,omitempty"`
	// WSAT is how many times the capacity write saturation writes
	// (default 4).
	WSAT float64 `json:"wsat,omitempty"`
	// Args are the run's other fio options, over the test's (--ioengine=io_uring).
	Args []string `json:"args,omitempty"`
	// Axes replace the test's matrix axes by option name (a DIRTH
	// matrix of fewer points); the tracking element must stay in it.
	Axes []Axis `json:"axes,omitempty"`
}

// The Spec's values with the specification's defaults filled in.

func (s *Spec) Rounds() int {
	if s.MaxRounds > 0 {
		return s.MaxRounds
	}
	if t, err := Lookup(s.Test); err == nil && t.Saturate {
		return maxSaturateRounds
	}
	return MaxRounds
}

// maxSaturateRounds bounds a WSAT run whose rounds write little.
const maxSaturateRounds = 10_000

func (s *Spec) Round() time.Duration {
	if s.RoundTime > 0 {
		return s.RoundTime
	}
	return RoundTime
}

func (s *Spec) PurgeMethod() string {
	if s.Purge == "" {
		return PurgeAuto
	}
	return s.Purge
}

func (s *Spec) WIPC() int {
	switch {
	case s.WIPCLoops < 0:
		return 0
	case s.WIPCLoops == 0:
		return WIPCLoops
	}
	return s.WIPCLoops
}

func (s *Spec) WSATTimes() float64 {
	if s.WSAT > 0 {
		return s.WSAT
	}
	return WSATCapacity
}

// OIO is the outstanding I/O the test runs at.
func (s *Spec) OIO(t *Test) (numjobs, iodepth int) {
	numjobs, iodepth = t.NumJobs, t.IODepth
	if t.FixedOIO {
		return numjobs, iodepth
	}
	if s.NumJobs > 0 {
		numjobs = s.NumJobs
	}
	if s.IODepth > 0 {
		iodepth = s.IODepth
	}
	return numjobs, iodepth
}

// Matrix is the test's axes with the spec's replacements.
func (s *Spec) Matrix(t *Test) []Axis {
	out := slices.Clone(t.Axes)
	for _, a := range s.Axes {
		for i := range out {
			if out[i].Option == a.Option {
				out[i].Values = slices.Clone(a.Values)
			}
		}
	}
	return out
}

// Tracking is the test's tracking variables on the spec's matrix:
// FirstValue resolved to the axis's first value.
func (s *Spec) Tracking(t *Test) []Tracking {
	matrix := s.Matrix(t)
	out := make([]Tracking, len(t.Tracking))
	for i, tr := range t.Tracking {
		el := maps.Clone(tr.Element)
		for k, v := range el {
			if v != FirstValue {
				continue
			}
			for _, a := range matrix {
				if a.Option == k && len(a.Values) > 0 {
					el[k] = a.Values[0]
				}
			}
		}
		out[i] = Tracking{Element: el, Metric: tr.Metric}
	}
	return out
}

// CommandArgs are the `iolab pts` arguments that run the spec again on
// device: the test, the device (twice: --yes-destroy), each parameter
// that differs from the specification's, and the other fio options.
func (s *Spec) CommandArgs(device string) []string {
	args := []string{s.Test, "--filename=" + device, "--yes-destroy", device}
	if s.RoundTime > 0 {
		args = append(args, "--runtime="+s.RoundTime.String())
	}
	if s.Size > 0 {
		args = append(args, fmt.Sprintf("--size=%d", s.Size))
	}
	if s.NumJobs > 0 {
		args = append(args, fmt.Sprintf("--numjobs=%d", s.NumJobs))
	}
	if s.IODepth > 0 {
		args = append(args, fmt.Sprintf("--iodepth=%d", s.IODepth))
	}
	for _, a := range s.Axes {
		args = append(args, "--"+a.Option+"="+strings.Join(a.Values, ","))
	}
	if s.MaxRounds > 0 {
		args = append(args, fmt.Sprintf("--rounds=%d", s.MaxRounds))
	}
	if s.Purge != "" && s.Purge != PurgeAuto {
		args = append(args, "--purge="+s.Purge)
	}
	if s.WIPCLoops != 0 {
		args = append(args, fmt.Sprintf("--wipc=%d", s.WIPC()))
	}
	if s.WSAT > 0 {
		args = append(args, fmt.Sprintf("--wsat=%g", s.WSAT))
	}
	return append(args, s.Args...)
}

// Check refuses what the test cannot run: an unknown test, an unknown
// purge, bounds out of range, a matrix replacement of an axis the test
// lacks or one that leaves out the tracking element.
func (s *Spec) Check() error {
	t, err := Lookup(s.Test)
	if err != nil {
		return err
	}
	if s.Purge != "" && !slices.Contains(PurgeMethods, s.Purge) {
		return fmt.Errorf("purge %q: one of %s", s.Purge, strings.Join(PurgeMethods, ", "))
	}
	switch {
	case s.MaxRounds < 0 || s.MaxRounds > maxSaturateRounds:
		return fmt.Errorf("rounds %d: 1 to %d", s.MaxRounds, maxSaturateRounds)
	case !t.Saturate && s.MaxRounds > 0 && s.MaxRounds < WindowRounds:
		return fmt.Errorf("rounds %d: at least %d, the steady-state window", s.MaxRounds, WindowRounds)
	case s.RoundTime < 0 || (s.RoundTime > 0 && s.RoundTime < 100*time.Millisecond) || s.RoundTime > 24*time.Hour:
		return fmt.Errorf("runtime %s: each element's time in a round, 100ms to 24h", s.RoundTime)
	case s.WIPCLoops < -1 || s.WIPCLoops > 16:
		return fmt.Errorf("wipc %d: 0 to 16 times the active range", s.WIPCLoops)
	case s.Size < 0:
		return fmt.Errorf("size %d: the active range's bytes, 0 for the whole device", s.Size)
	case s.NumJobs < 0 || s.NumJobs > 256:
		return fmt.Errorf("numjobs %d: 1 to 256", s.NumJobs)
	case s.IODepth < 0 || s.IODepth > 4096:
		return fmt.Errorf("iodepth %d: 1 to 4096", s.IODepth)
	case s.WSAT < 0 || s.WSAT > 100 || math.IsNaN(s.WSAT):
		return fmt.Errorf("wsat %g: 0 to 100 times the capacity", s.WSAT)
	case t.FixedOIO && (s.NumJobs > 0 || s.IODepth > 0) && t.Name == "latency":
		return fmt.Errorf("the latency test runs one job at iodepth 1, as the specification fixes it: leave out numjobs and iodepth")
	}
	for _, a := range s.Axes {
		i := slices.IndexFunc(t.Axes, func(x Axis) bool { return x.Option == a.Option })
		if i < 0 {
			return fmt.Errorf("the %s test has no %s axis", t.Name, a.Option)
		}
		if len(a.Values) == 0 || len(a.Values) > 64 {
			return fmt.Errorf("%s: 1 to 64 values", a.Option)
		}
	}
	for _, tr := range s.Tracking(t) {
		for _, a := range s.Matrix(t) {
			if v, ok := tr.Element[a.Option]; ok && !slices.Contains(a.Values, v) {
				return fmt.Errorf("%s: the values must include %s, the tracking variable's (%s)", a.Option, v, tr)
			}
		}
	}
	return nil
}

// Scaled lists what the spec sets below the specification's own
// parameters, as the report says it ("rounds of 10 s per element, not 1
// minute"); none for a run to the specification. capacity is the
// device's size (0: unknown).
func (s *Spec) Scaled(t *Test, capacity int64) []string {
	var out []string
	if s.RoundTime > 0 && s.RoundTime != RoundTime {
		out = append(out, fmt.Sprintf("each element ran %s a round, not %s", s.RoundTime, RoundTime))
	}
	if !t.Saturate && s.MaxRounds > 0 && s.MaxRounds < MaxRounds {
		out = append(out, fmt.Sprintf("at most %d rounds, not %d", s.MaxRounds, MaxRounds))
	}
	if s.PurgeMethod() == PurgeNone {
		out = append(out, "no purge")
	}
	if s.WIPC() != WIPCLoops {
		out = append(out, fmt.Sprintf("workload-independent preconditioning wrote the active range %d×, not %d×", s.WIPC(), WIPCLoops))
	}
	if s.Size > 0 && (capacity == 0 || s.Size < capacity) {
		out = append(out, fmt.Sprintf("active range %d bytes of the device's %d", s.Size, capacity))
	}
	if t.Saturate && s.WSATTimes() != WSATCapacity {
		out = append(out, fmt.Sprintf("wrote %g× the capacity, not %d×", s.WSATTimes(), WSATCapacity))
	}
	for _, a := range s.Axes {
		i := slices.IndexFunc(t.Axes, func(x Axis) bool { return x.Option == a.Option })
		if i >= 0 && !slices.Equal(a.Values, t.Axes[i].Values) {
			out = append(out, fmt.Sprintf("%s over %s, not %s", a.Option, strings.Join(a.Values, ","), strings.Join(t.Axes[i].Values, ",")))
		}
	}
	return out
}

// Figures are what a tracking variable is read from: one element's
// result, its jobs (a numjobs's clones) together. Index 0 is reads, 1
// writes.
type Figures struct {
	IOPS, BW [2]float64
	// LatN and LatMean are each direction's lat (submission to
	// completion) count and mean, ns.
	LatN    [2]uint64
	LatMean [2]float64
}

// Add adds another job's figures (a clone of the same job).
func (f *Figures) Add(o Figures) {
	for d := range 2 {
		f.IOPS[d] += o.IOPS[d]
		f.BW[d] += o.BW[d]
		n := f.LatN[d] + o.LatN[d]
		if n > 0 {
			f.LatMean[d] = (f.LatMean[d]*float64(f.LatN[d]) + o.LatMean[d]*float64(o.LatN[d])) / float64(n)
		}
		f.LatN[d] = n
	}
}

// Metric is the figure a tracking variable's metric names; false when
// the element measured nothing it could be read from.
func (f Figures) Metric(m string) (float64, bool) {
	switch m {
	case MetricIOPS:
		return f.IOPS[0] + f.IOPS[1], f.IOPS[0]+f.IOPS[1] > 0
	case MetricWriteBW:
		return f.BW[1], f.BW[1] > 0
	case MetricReadBW:
		return f.BW[0], f.BW[0] > 0
	case MetricMeanLat:
		n := f.LatN[0] + f.LatN[1]
		if n == 0 {
			return 0, false
		}
		return (f.LatMean[0]*float64(f.LatN[0]) + f.LatMean[1]*float64(f.LatN[1])) / float64(n), true
	}
	return 0, false
}

// MetricLabel is a metric as a table's heading says it.
func MetricLabel(m string) string {
	switch m {
	case MetricIOPS:
		return "IOPS"
	case MetricWriteBW:
		return "write bandwidth (B/s)"
	case MetricReadBW:
		return "read bandwidth (B/s)"
	case MetricMeanLat:
		return "mean response time (ns)"
	}
	return m
}

// Matches reports whether the element whose axis values are given (by
// option name) is the tracking variable's.
func (t Tracking) Matches(values map[string]string) bool {
	for k, v := range t.Element {
		if values[k] != v {
			return false
		}
	}
	return true
}
