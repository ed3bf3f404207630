package bench

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/units"
)

// PrioOptions are fio's I/O priority options: prio and prioclass, the
// priority of the job's thread, which fio sets with ioprio_set before it
// sets up the engine (backend.c thread_main), and the cmdprio options of
// the io_uring and libaio engines, which give a share of the I/Os a
// priority of their own, carried by each I/O (engines/cmdprio.c).
//
// A priority is Linux's ioprio value, class << 13 | level
// (include/uapi/linux/ioprio.h): class 1 real-time, 2 best-effort, 3
// idle; level 0 (highest) to 7.
type PrioOptions struct {
	// IOPrio and IOPrioClass are prio and prioclass; IOPrioSet says that
	// either was given: only then does fio call ioprio_set (its
	// fio_option_is_set), and the job's I/Os carry that priority.
	IOPrio      int  `json:"prio,omitzero"`
	IOPrioClass int  `json:"prioclass,omitzero"`
	IOPrioSet   bool `json:"prio_set,omitzero"`

	// Per direction (Read, Write): cmdprio_percentage, the share of I/Os
	// given cmdprio_class (0 until set: real-time, as fio defaults it)
	// and cmdprio, the level.
	CmdprioPercentage [2]int `json:"cmdprio_percentage,omitzero"`
	CmdprioClass      [2]int `json:"cmdprio_class,omitzero"`
	CmdprioLevel      [2]int `json:"cmdprio,omitzero"`
	// CmdprioBSSplit is cmdprio_bssplit per direction: for block sizes,
	// the shares of their I/Os given a priority, sorted by block size as
	// fio sorts them; CmdprioBSSplitText is the option as written.
	CmdprioBSSplit     [2][]PrioSplit `json:"cmdprio_bssplit,omitzero"`
	CmdprioBSSplitText string         `json:"cmdprio_bssplit_text,omitzero"`
}

// PrioSplit is one entry of cmdprio_bssplit: the share of the I/Os of
// block size BS given priority Prio — the entry's own (bs/percent/class/
// level), or, when Prio is -1, cmdprio_class's and cmdprio's.
type PrioSplit struct {
	BS      int64 `json:"bs"`
	Percent int   `json:"percent"`
	Prio    int   `json:"prio"`
}

// The I/O priority classes (include/uapi/linux/ioprio.h).
const (
	IOPrioClassNone = 0
	IOPrioClassRT   = 1
	IOPrioClassBE   = 2
	IOPrioClassIdle = 3

	ioprioClassShift = 13
	// MaxIOPrioLevel is the lowest priority level, 0 the highest (fio's
	// IOPRIO_MAX_PRIO).
	MaxIOPrioLevel = 7
)

// IOPrioValue is fio's ioprio_value (os/os-linux.h): class and level as
// one priority, where class 0 is taken as best-effort.
func IOPrioValue(class, level int) uint16 {
	if class == IOPrioClassNone {
		class = IOPrioClassBE
	}
	return uint16(class<<ioprioClassShift | level)
}

// IOPrioClassOf and IOPrioLevelOf take a priority apart as fio's
// reports do (ioprio >> 13, ioprio & 7).
func IOPrioClassOf(p uint16) int { return int(p >> ioprioClassShift) }
func IOPrioLevelOf(p uint16) int { return int(p & 7) }

// JobIOPrio is the priority the job's I/Os carry unless cmdprio gives
// them another: prio and prioclass's, or 0 (none) when neither is set
// (fio's td->ioprio).
func (j *Job) JobIOPrio() uint16 {
	if !j.IOPrioSet {
		return 0
	}
	return IOPrioValue(j.IOPrioClass, j.IOPrio)
}

// cmdprioDefault is the priority of a cmdprio I/O of direction d that
// names none of its own: cmdprio_class (real-time when not set, as fio's
// fio_cmdprio_parse_and_gen defaults it) and cmdprio.
func (j *Job) cmdprioDefault(d int) uint16 {
	class := j.CmdprioClass[d]
	if class == IOPrioClassNone {
		class = IOPrioClassRT
	}
	return IOPrioValue(class, j.CmdprioLevel[d])
}

// UsesCmdprio reports whether some I/Os of the job get a priority of
// their own (cmdprio_percentage or cmdprio_bssplit).
func (j *Job) UsesCmdprio() bool {
	return j.CmdprioPercentage != [2]int{} || j.CmdprioBSSplitText != ""
}

// rwHas reports whether the job's rw mode does direction d at all (fio's
// td_read and td_write: randrw with rwmixread=100 still "writes").
func (j *Job) rwHas(d int) bool {
	switch j.RW {
	case "rw", "randrw":
		return true
	case "read", "randread":
		return d == Read
	case "trim", "randtrim":
		return false
	}
	return d == Write
}

// CheckPrio is what fio's fio_cmdprio_init checks once the job's engine
// is set up: cmdprio_percentage and cmdprio_bssplit exclude each other,
// and no block size of a direction the job does gives out more than
// 100 % (fio_cmdprio_fill_bsprio). It names the option at fault.
func (j *Job) CheckPrio() (option string, err error) {
	if j.CmdprioPercentage != [2]int{} && j.CmdprioBSSplitText != "" {
		return "cmdprio_percentage", errors.New("cmdprio_percentage and cmdprio_bssplit options are mutually exclusive (fio refuses the job too); keep one")
	}
	// fio takes these and does nothing with them; iolab takes no option
	// that does nothing.
	switch {
	case j.UsesCmdprio():
	case j.CmdprioClass != [2]int{}:
		return "cmdprio_class", errors.New("cmdprio_class has no effect without cmdprio_percentage or cmdprio_bssplit (add one; the job's own class is prioclass)")
	case j.CmdprioLevel != [2]int{}:
		return "cmdprio", errors.New("cmdprio has no effect without cmdprio_percentage or cmdprio_bssplit (add one; the job's own level is prio)")
	}
	for d := range 2 {
		if !j.rwHas(d) {
			continue
		}
		total := map[int64]int{}
		for _, e := range j.CmdprioBSSplit[d] {
			if total[e.BS] += e.Percent; total[e.BS] > 100 {
				return "cmdprio_bssplit", fmt.Errorf("cmdprio_bssplit total percentage for bs: %d exceeds 100", e.BS)
			}
		}
	}
	return "", nil
}

// maxPrioSplit is fio's BSSPLIT_MAX: entries a cmdprio_bssplit list takes.
const maxPrioSplit = 64

// ParseCmdprioBSSplit reads cmdprio_bssplit as fio's str_split_parse and
// split_parse_prio_ddir do: a list per direction ("reads,writes"; one
// list is for both; a third, for trims, is ignored), each of entries
// split by ':' — bs, bs/percent or bs/percent/class/level, the class and
// level clamped to Linux's (3, 7), the percent to 100. Entries of 0 % are
// dropped, as fio drops them; the rest are sorted by block size.
func ParseCmdprioBSSplit(v string) ([2][]PrioSplit, error) {
	var out [2][]PrioSplit
	v = strings.TrimSpace(v)
	r, w, perDir := strings.Cut(v, ",")
	if perDir {
		w, _, _ = strings.Cut(w, ",")
	} else {
		w = r
	}
	for d, list := range []string{r, w} {
		s, err := parsePrioSplits(list)
		if err != nil {
			return out, err
		}
		out[d] = s
	}
	return out, nil
}

func parsePrioSplits(list string) ([]PrioSplit, error) {
	var out []PrioSplit
	n := 0
	for entry := range strings.SplitSeq(list, ":") {
		if entry == "" {
			break // fio stops at an empty entry
		}
		if n++; n > maxPrioSplit {
			return nil, fmt.Errorf("too many cmdprio_bssplit entries (fio takes %d)", maxPrioSplit)
		}
		parts := strings.Split(entry, "/")
		if len(parts) == 2 && parts[1] == "" {
			parts = parts[:1] // "bs/": the block size alone
		}
		if len(parts) == 3 || len(parts) > 4 {
			return nil, fmt.Errorf("%q is not bs, bs/percent or bs/percent/class/level", entry)
		}
		bs, err := units.ParseSize(parts[0])
		if err != nil {
			return nil, fmt.Errorf("%q: %v", entry, err)
		}
		e := PrioSplit{BS: bs, Prio: -1}
		nums := make([]int, len(parts)-1)
		for i, p := range parts[1:] {
			k, err := strconv.ParseUint(p, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%q: %q is not a whole number", entry, p)
			}
			nums[i] = int(min(k, 1<<16))
		}
		if len(nums) > 0 {
			e.Percent = min(nums[0], 100)
		}
		if len(nums) == 3 {
			e.Prio = int(IOPrioValue(min(nums[1], IOPrioClassIdle), min(nums[2], MaxIOPrioLevel)))
		}
		if e.Percent > 0 {
			out = append(out, e)
		}
	}
	// fio's qsort by block size: glibc's merge sort keeps equal ones in
	// order.
	slices.SortStableFunc(out, func(a, b PrioSplit) int { return cmp.Compare(a.BS, b.BS) })
	return out, nil
}
