package summary

import (
	"fmt"
	"slices"

	"iolab/bench"
	"iolab/bench/sweep"
)

// LatKind is which of fio's latencies a table or chart shows: lat from
// submission to completion, slat the submission alone, clat from
// submission's end to completion. An engine that submits synchronously
// (libaio's io_submit, psync) spends the I/O's time in slat, so clat
// alone compares engines unfairly: engines and hosts are compared on lat
// (LatKindOf).
type LatKind string

// The latency kinds; "" is a table's default (LatKindOf).
const (
	LatTotal LatKind = "total" // fio's lat: from submission to completion
	LatClat  LatKind = "clat"  // fio's clat: completion latency
	LatSlat  LatKind = "slat"  // fio's slat: submission latency
	// LatIntended is the latency from each I/O's intended start, which a
	// paced (rate) job keeps (bench.LatIntended): what the QoS curve and
	// the statistical diff compare paced steps on. No picker offers it:
	// it is the default where steps kept it, not a kind to pick.
	LatIntended LatKind = "intended"

	// The block layer's parts of a traced I/O's lat (bench.BlockTime,
	// --trace-block): kinds only traced steps have, of the I/Os that
	// mapped one-to-one onto a request.
	LatSubmit     LatKind = "submit"     // the engine's submission to the bio's queueing
	LatQueue      LatKind = "queue"      // queueing to the request's issue: tags, the I/O scheduler
	LatDevice     LatKind = "device"     // issue to the device's completion
	LatCompletion LatKind = "completion" // the device's completion to iolab's reaping
)

// LatKinds are the kinds, in the order pickers and help list them.
var LatKinds = []LatKind{LatTotal, LatClat, LatSlat}

// BlockKinds are the block layer's parts in the order of an I/O's life,
// the order a time split stacks them in: they add up to lat.
var BlockKinds = []LatKind{LatSubmit, LatQueue, LatDevice, LatCompletion}

// Block reports whether k is one of the block layer's parts.
func (k LatKind) Block() bool { return slices.Contains(BlockKinds, k) }

// ParseLatKind reads a kind as ?lat= and --lat give it; "" is "".
func ParseLatKind(s string) (LatKind, error) {
	k := LatKind(s)
	if s == "lat" {
		k = LatTotal
	}
	if s != "" && !slices.Contains(LatKinds, k) && !k.Block() {
		return "", fmt.Errorf("%.40q is not a latency; use total (fio's lat, from submission), clat or slat, or a traced run's block-layer part: submit, queue, device or completion", s)
	}
	return k, nil
}

// Name is the kind as fio's output and the tables' headers name it:
// lat, clat, slat.
func (k LatKind) Name() string {
	switch k {
	case LatTotal:
		return "lat"
	case LatIntended:
		return "from intended start"
	}
	return string(k)
}

// Title is how a chart's subtitle and axis or a table's note names the
// kind: "lat (from submission)", "clat", "slat".
func (k LatKind) Title() string {
	switch k {
	case LatTotal:
		return "lat (from submission)"
	case LatIntended:
		return bench.LatIntended
	case LatSubmit:
		return "submit (to the block layer)"
	case LatQueue:
		return "queue (in the block layer)"
	case LatDevice:
		return "device (issue to completion)"
	case LatCompletion:
		return "completion (to the reap)"
	}
	return k.Name()
}

// index is the kind's place in JobFigures.kinds.
func (k LatKind) index() int {
	switch k {
	case LatTotal:
		return 0
	case LatSlat:
		return 2
	case LatIntended:
		return 3
	}
	if i := slices.Index(BlockKinds, k); i >= 0 {
		return 4 + i
	}
	return 1
}

// Of is the kind's latency among a direction's.
func (k LatKind) Of(d *DirView) *LatView {
	switch k {
	case LatTotal:
		return &d.Lat
	case LatSlat:
		return &d.Slat
	case LatIntended:
		return &d.Intended
	}
	if k.Block() {
		if d.Block == nil {
			return new(LatView) // an untraced direction has none of the parts
		}
		return d.Block.Part(k)
	}
	return &d.Clat
}

// LatKindOf is the kind tables show of the steps of plans (one run, or
// the runs compared) run on hosts: k when given, else lat when they
// compare engines — a plan sweeps ioengine, or the steps' jobs ran more
// than one — or hosts (more than one named), else clat, as fio's
// percentiles are. Steps that kept no lat histogram (fio's JSON has clat
// percentiles alone, and runs stored before iolab kept lat's) are shown
// in clat, which they have, not as empty lat: see DefaultLat.
func LatKindOf(k LatKind, plans []*sweep.Plan, steps [][]StepView, hosts ...string) LatKind {
	if k != "" {
		return k
	}
	return DefaultLat(latKindOf(plans, steps, hosts), steps...)
}

// DefaultLat is k, the kind that compares what is compared, unless k is
// lat and no step of steps kept a lat histogram: clat then, which every
// stored step has. A kind the reader picks is never swapped.
func DefaultLat(k LatKind, steps ...[]StepView) LatKind {
	if k != LatTotal {
		return k
	}
	for _, run := range steps {
		for i := range run {
			if r := run[i].Result; r != nil {
				for _, g := range r.Groups {
					for j := range g.Jobs {
						if len(g.Jobs[j].Dirs[0].Lat.Hist)+len(g.Jobs[j].Dirs[1].Lat.Hist) > 0 {
							return k
						}
					}
				}
			}
		}
	}
	return LatClat
}

func latKindOf(plans []*sweep.Plan, steps [][]StepView, hosts []string) LatKind {
	engines := map[string]bool{}
	for i, p := range plans {
		if p != nil && p.SweepsAxis(sweep.AxisEngine) {
			return LatTotal
		}
		if i < len(steps) {
			for s := range steps[i] {
				for _, sj := range stepJobs(p, &steps[i][s]) {
					if sj.job != nil {
						engines[cmpEngine(sj.job)] = true
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if h != "" {
			seen[h] = true
		}
	}
	if len(engines) > 1 || len(seen) > 1 {
		return LatTotal
	}
	return LatClat
}

// cmpEngine is a job's engine as the comparison sees it: fio's default
// when the job names none.
func cmpEngine(j *bench.Job) string {
	if j.IOEngine == "" {
		return "psync"
	}
	return j.IOEngine
}
