package system

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// NUMANode is one of the machine's NUMA nodes, as
// /sys/devices/system/node shows it (the kernel's
// Documentation/ABI/stable/sysfs-devices-node).
type NUMANode struct {
	ID   int   `json:"id"`
	CPUs []int `json:"cpus"` // nodeN/cpulist; none for a node of memory alone (CXL, PMEM)
	// Memory is whether the node has memory to allocate from (has_memory);
	// a node of CPUs alone has none.
	Memory bool `json:"memory"`
}

// ParseList parses the kernel's list format, which cpulist, online and
// has_memory are written in (lib/bitmap-str.c bitmap_parselist): numbers
// and ranges separated by commas, "0-3,8,10-11"; "" is the empty list.
// The result is sorted, without repeats.
func ParseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	out := []int{}
	if s == "" {
		return out, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(item), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b-a > 1<<20 {
			return nil, fmt.Errorf("%q is not a list of numbers and ranges (e.g. 0-3,8)", s)
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
