package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/system"
)

// NUMAOptions are fio's NUMA options (options.c str_numa_cpunodes_cb and
// str_numa_mpol_cb, backend.c thread_main): the nodes whose CPUs run the
// job, and the memory policy of its I/O buffers. Both keep the value as
// written; the nodes are looked up on the machine the job runs on.
type NUMAOptions struct {
	// NUMACPUNodes is a node list (ParseNodeList): the job runs on those
	// nodes' CPUs, in place of cpus_allowed (fio sets it after).
	NUMACPUNodes string `json:"numa_cpu_nodes,omitempty"`
	// NUMAMemPolicy is mode[:nodes] (ParseMemPolicy): default, prefer:N,
	// bind:nodes, interleave[:nodes] (all of them without) or local.
	NUMAMemPolicy string `json:"numa_mem_policy,omitempty"`
}

// NodeList is a list of NUMA nodes as fio takes one (libnuma's
// numa_parse_nodestring): "all", node numbers and ranges ("0,2-3"), or
// "!" before them for every node but those.
type NodeList struct {
	all, invert bool
	nodes       []int
}

// maxNUMANodes is Linux's largest CONFIG_NODES_SHIFT (10): nodes are
// numbered below 1024.
const maxNUMANodes = 1 << 10

// ParseNodeList parses a node list; which nodes there are is the
// machine's (NodeList.Resolve).
func ParseNodeList(v string) (NodeList, error) {
	var l NodeList
	s := strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		l.invert, s = true, rest
	}
	if strings.HasPrefix(s, "+") {
		return l, fmt.Errorf("%q: iolab does not take libnuma's +N (nodes counted within the cpuset); name the nodes", v)
	}
	if s == "all" {
		l.all = true
		return l, nil
	}
	nodes, err := system.ParseList(s)
	if err != nil || len(nodes) == 0 {
		return l, fmt.Errorf("%q is not a list of NUMA nodes (e.g. 0, 0-1,3, all, or !0 for all but node 0)", v)
	}
	if n := nodes[len(nodes)-1]; n >= maxNUMANodes {
		return l, fmt.Errorf("%q: node %d is beyond Linux's %d nodes", v, n, maxNUMANodes)
	}
	l.nodes = nodes
	return l, nil
}

// Resolve picks the list's nodes from the machine's; a node the machine
// does not have is an error that says which it has.
func (l NodeList) Resolve(machine []system.NUMANode) ([]system.NUMANode, error) {
	for _, n := range l.nodes {
		if !slices.ContainsFunc(machine, func(m system.NUMANode) bool { return m.ID == n }) {
			return nil, fmt.Errorf("NUMA node %d does not exist (this machine's nodes: %s; numactl --hardware lists them)", n, nodeIDs(machine))
		}
	}
	var out []system.NUMANode
	for _, m := range machine {
		if l.all || slices.Contains(l.nodes, m.ID) != l.invert {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the list leaves none of this machine's nodes (%s)", nodeIDs(machine))
	}
	return out, nil
}

func nodeIDs(nodes []system.NUMANode) string {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = strconv.Itoa(n.ID)
	}
	return strings.Join(ids, ", ")
}

// The memory policies fio names, in the order of the kernel's MPOL_*
// modes (include/uapi/linux/mempolicy.h), as fio's str_numa_mpol_cb
// indexes them.
var memPolicyModes = []string{"default", "prefer", "bind", "interleave", "local"}

// ParseMemPolicy parses numa_mem_policy as fio's str_numa_mpol_cb does:
// mode[:nodes], where prefer takes one node, bind a list, interleave a
// list or none (then all nodes), and default and local none. It returns
// the mode's index in memPolicyModes and the node list.
func ParseMemPolicy(v string) (mode int, nodes NodeList, err error) {
	name, list, hasList := strings.Cut(v, ":")
	mode = slices.Index(memPolicyModes, name)
	switch {
	case mode < 0:
		return 0, nodes, fmt.Errorf("%q: the memory policy is one of %s (with :nodes for prefer, bind and interleave)", v, strings.Join(memPolicyModes, ", "))
	case hasList && (name == "default" || name == "local"):
		return 0, nodes, fmt.Errorf("%q: %s takes no nodes", v, name)
	case !hasList && (name == "prefer" || name == "bind"):
		return 0, nodes, fmt.Errorf("%q: %s needs nodes (e.g. %s:0)", v, name, name)
	case name == "prefer" && strings.Trim(list, "0123456789") != "":
		return 0, nodes, fmt.Errorf("%q: prefer takes one node, a number (e.g. prefer:1)", v)
	case name == "interleave" && !hasList:
		list = "all"
	}
	if name == "default" || name == "local" {
		return mode, nodes, nil
	}
	nodes, err = ParseNodeList(list)
	return mode, nodes, err
}
