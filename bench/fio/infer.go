package fio

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// Inference is an option an import holds that fio's output did not print
// but its results show. fio before 3.39 leaves value-less options
// (time_based, group_reporting, stonewall, new_group, hipri, …) out of
// "job options"; what can be worked out is put back on the job and said so.
type Inference struct {
	Job    string `json:"job"`    // the job (jobs[] entry) it applies to
	Option string `json:"option"` // fio's name: time_based, stonewall, …
	Reason string `json:"reason"` // what in fio's output shows it
}

func (i Inference) String() string {
	return i.Option + " on " + i.Job + ": " + i.Reason
}

// printsFlags reports whether fio's version prints value-less options
// among "job options" (fio 3.39 and later). An unreadable version is taken
// as an older fio.
func printsFlags(version string) bool {
	v, ok := strings.CutPrefix(version, "fio-")
	if !ok {
		return false
	}
	major, rest, _ := strings.Cut(v, ".")
	minor := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = rest[:i]
	}
	a, errA := strconv.Atoi(major)
	b, errB := strconv.Atoi(minor)
	if errA != nil || errB != nil {
		return false
	}
	return a > 3 || a == 3 && b >= 39
}

// flagsNote is the import's note for an fio that leaves value-less
// options out.
func flagsNote(version string) string {
	return version + " leaves value-less options (time_based, group_reporting, stonewall, new_group, hipri, sqthread_poll, …) out of its output: " +
		"the ones listed as inferred were worked out from the results; any others it ran with cannot be told"
}

// optionsBounding are fio options with values that let a job move more
// than its size without time_based; with one of them set, moving more
// proves nothing.
var optionsBounding = []string{"loops", "io_size", "io_limit", "number_ios"}

// inferOptions puts back the value-less options fio did not print on
// results (one per jobs[] entry, in order) and lists them. elapsed is fio's
// "elapsed" (whole seconds since fio started, rounded up; 0 when absent).
func inferOptions(results []bench.JobResult, elapsed time.Duration) []Inference {
	var out []Inference
	set := func(r *bench.JobResult, option, reason string) {
		if ApplyOption(&r.Job, option, "") != nil {
			return
		}
		// numjobs clones without group_reporting are entries of one job.
		if !slices.ContainsFunc(out, func(in Inference) bool { return in.Job == r.Name && in.Option == option }) {
			out = append(out, Inference{Job: r.Name, Option: option, Reason: reason})
		}
	}
	entries := map[int]int{}
	for i := range results {
		entries[results[i].GroupID]++
	}
	// group_reporting: one entry stands for numjobs clones.
	for i := range results {
		r := &results[i]
		if n := r.Job.NumJobs; n > 1 && entries[r.GroupID] == 1 && !r.Job.GroupReporting {
			set(r, "group_reporting", fmt.Sprintf("fio printed one entry for its numjobs=%d clones", n))
		}
	}
	for i := range results {
		if reason := timeBasedReason(&results[i]); reason != "" {
			set(&results[i], "time_based", reason)
		}
	}
	for _, b := range groupStarts(results, elapsed) {
		set(&results[b.entry], b.option, b.reason)
	}
	return out
}

// timeBasedReason says why a job that fio printed without time_based ran
// with it, or "" when its results do not show it: the job ran for its
// whole runtime, and either moved more than its size (fio starts over only
// with time_based) or less (the runtime, not the size, ended it — which
// is what time_based asks for).
func timeBasedReason(r *bench.JobResult) string {
	j := &r.Job
	if j.TimeBased || j.Runtime <= 0 || r.Error != "" {
		return ""
	}
	for _, o := range j.Options {
		for _, b := range optionsBounding {
			if o.Name == b {
				return ""
			}
		}
	}
	// fio measures a little over the runtime (1001 ms for runtime=1);
	// a job that its size ended stops well before it.
	if r.Runtime < j.Runtime-j.Runtime/50 {
		return ""
	}
	moved := int64(r.Dirs[bench.Read].Bytes + r.Dirs[bench.Write].Bytes)
	size := j.Size
	if j.GroupReporting {
		size *= int64(max(j.NumJobs, 1))
	}
	ran := fmt.Sprintf("it ran its whole runtime=%s", units.FormatDuration(j.Runtime))
	switch {
	case size <= 0:
		return ran + " over the whole file or device (no size)"
	case moved > size:
		return fmt.Sprintf("%s and moved %s, more than its size %s: fio starts over only with time_based", ran, units.Bytes(float64(moved)), units.Bytes(float64(size)))
	default:
		return fmt.Sprintf("%s and moved %s of its size %s: the runtime, not the size, ended it", ran, units.Bytes(float64(moved)), units.Bytes(float64(size)))
	}
}

// groupStart is an inferred stonewall or new_group on the first entry of
// a reporting group.
type groupStart struct {
	entry          int
	option, reason string
}

// maxUnknownStarts bounds the group starts whose kind is searched for;
// past it every unknown one is taken as a stonewall.
const maxUnknownStarts = 12

// groupStarts infers how each reporting group after the first started when
// fio did not say: a new groupid comes from stonewall (wait for the jobs
// before) or new_group (start beside them). Groups that waited run one
// after another, so fio's elapsed time must hold the sum of their
// runtimes: the choice with the most stonewalls (the usual way to separate
// groups) whose runtimes fit in elapsed is taken.
func groupStarts(results []bench.JobResult, elapsed time.Duration) []groupStart {
	type group struct {
		first  int // entry
		known  bool
		wait   bool
		length time.Duration
	}
	var groups []group
	for i := range results {
		r := &results[i]
		if i == 0 || r.GroupID != results[i-1].GroupID {
			groups = append(groups, group{first: i, known: i == 0 || r.Job.Stonewall || r.Job.NewGroup, wait: r.Job.Stonewall})
		}
		g := &groups[len(groups)-1]
		g.length = max(g.length, r.Runtime+r.Job.RampTime)
	}
	var unknown []int // indexes into groups
	for gi := range groups {
		if !groups[gi].known {
			unknown = append(unknown, gi)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	// span is how long the groups take with the unknown starts chosen by
	// mask (bit set: stonewall).
	span := func(mask int) time.Duration {
		var total, segment time.Duration
		u := 0
		for gi, g := range groups {
			wait := g.wait
			if !g.known {
				wait = mask&(1<<u) != 0
				u++
			}
			if gi > 0 && wait {
				total += segment
				segment = 0
			}
			segment = max(segment, g.length)
		}
		return total + segment
	}
	all := 1<<len(unknown) - 1
	best, fits, ties := all, true, 0
	if elapsed > 0 && len(unknown) <= maxUnknownStarts {
		best, fits = all, false
		for mask := 0; mask <= all; mask++ {
			if span(mask) > elapsed {
				continue
			}
			switch n, b := bits.OnesCount(uint(mask)), bits.OnesCount(uint(best)); {
			case !fits || n > b:
				best, fits, ties = mask, true, 0
			case n == b:
				ties++
			}
		}
	}
	several := ""
	if ties > 0 {
		several = " (one of several ways the groups fit; fio's output cannot tell which)"
	}
	out := make([]groupStart, len(unknown))
	for u, gi := range unknown {
		g := groups[gi]
		s := groupStart{entry: g.first, option: "stonewall"}
		id := results[g.first].GroupID
		switch {
		case elapsed <= 0 || len(unknown) > maxUnknownStarts || !fits:
			s.reason = fmt.Sprintf("a new reporting group (groupid %d); fio's elapsed time cannot tell stonewall from new_group, and stonewall is the usual one", id)
		case best&(1<<u) != 0:
			s.reason = fmt.Sprintf("a new reporting group (groupid %d), and the groups' runtimes fit one after another in fio's elapsed %s%s", id, elapsed, several)
		default:
			s.option = "new_group"
			s.reason = fmt.Sprintf("a new reporting group (groupid %d) that cannot have waited for the one before: one after another, the groups' runtimes take longer than fio's elapsed %s%s", id, elapsed, several)
		}
		out[u] = s
	}
	return out
}
