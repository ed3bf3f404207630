package bench

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
	"iolab/bench/system"
)

// The kernel's memory policy modes (include/uapi/linux/mempolicy.h), in
// the order of memPolicyModes.
const (
	mpolDefault = iota
	mpolPreferred
	mpolBind
	mpolInterleave
	mpolLocal
)

// memPolicy is a memory policy as mbind(2) takes one: a mode, and a bit
// per node of its nodes. The zero value is the default policy.
type memPolicy struct {
	mode  int
	nodes []uint64
}

// numaPlacement resolves j's NUMA options on the machine sys reads, as
// fio's thread_main applies them with libnuma: the CPUs of the
// numa_cpu_nodes (numa_run_on_node_mask; nil without the option) and the
// numa_mem_policy of the job's buffers (numa_set_membind and kin). A node
// the machine does not have, CPU nodes without a CPU among them, and
// memory nodes without memory are refused.
func numaPlacement(sys system.FS, j *Job) (cpus []int, mem memPolicy, err error) {
	if j.NUMACPUNodes == "" && j.NUMAMemPolicy == "" {
		return nil, mem, nil
	}
	fail := func(option, value, format string, args ...any) error {
		return &OptionError{Option: option, Value: value, Msg: fmt.Sprintf("job %s: %s=%s: ", j.Name, option, value) + fmt.Sprintf(format, args...)}
	}
	machine, err := sys.NUMANodes()
	if err != nil {
		option, value := "numa_cpu_nodes", j.NUMACPUNodes
		if value == "" {
			option, value = "numa_mem_policy", j.NUMAMemPolicy
		}
		return nil, mem, fail(option, value, "%v", err)
	}
	if v := j.NUMACPUNodes; v != "" {
		l, err := ParseNodeList(v)
		var nodes []system.NUMANode
		if err == nil {
			nodes, err = l.Resolve(machine)
		}
		if err != nil {
			return nil, mem, fail("numa_cpu_nodes", v, "%v", err)
		}
		for _, n := range nodes {
			cpus = append(cpus, n.CPUs...)
		}
		if len(cpus) == 0 {
			return nil, mem, fail("numa_cpu_nodes", v, "node %s has no CPUs (a node of memory alone)", nodeIDs(nodes))
		}
		slices.Sort(cpus)
	}
	if v := j.NUMAMemPolicy; v != "" {
		mode, l, err := ParseMemPolicy(v)
		if err != nil {
			return nil, mem, fail("numa_mem_policy", v, "%v", err)
		}
		mem.mode = mode
		if mode == mpolDefault || mode == mpolLocal {
			return cpus, mem, nil
		}
		nodes, err := l.Resolve(machine)
		if err != nil {
			return nil, mem, fail("numa_mem_policy", v, "%v", err)
		}
		for _, n := range nodes {
			if !n.Memory {
				if l.all || l.invert {
					continue // libnuma's lists of all nodes hold those with memory
				}
				return nil, mem, fail("numa_mem_policy", v, "node %d has no memory to allocate from (a node of CPUs alone)", n.ID)
			}
			for len(mem.nodes) <= n.ID/64 {
				mem.nodes = append(mem.nodes, 0)
			}
			mem.nodes[n.ID/64] |= 1 << (n.ID % 64)
		}
		if len(mem.nodes) == 0 {
			return nil, mem, fail("numa_mem_policy", v, "none of its nodes has memory")
		}
	}
	return cpus, mem, nil
}

// newArenaFor maps size bytes placed as p says: mapped without its pages,
// bound with mbind(2), then faulted in (MADV_POPULATE_WRITE, or a write to
// each page before Linux 5.14), so that every page is allocated under the
// policy. The default policy maps as engine.NewArena does.
func newArenaFor(size int, p memPolicy) (*engine.Arena, error) {
	if p.mode == mpolDefault {
		return engine.NewArena(size)
	}
	size = (size + engine.PageSize - 1) &^ (engine.PageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes for I/O buffers: %w", size, err)
	}
	if err := p.bind(mem); err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("numa_mem_policy: mbind %d bytes of I/O buffers: %w", size, err)
	}
	if unix.Madvise(mem, unix.MADV_POPULATE_WRITE) != nil {
		for i := 0; i < len(mem); i += engine.PageSize {
			mem[i] = 0
		}
	}
	return &engine.Arena{Mem: mem}, nil
}

// bind is mbind(2) of mem to p. maxnode counts one bit more than the mask
// holds: the kernel's get_nodes reads maxnode-1 bits (libnuma passes its
// mask's size + 1).
func (p memPolicy) bind(mem []byte) error {
	var mask unsafe.Pointer
	maxnode := 0
	if len(p.nodes) > 0 {
		mask, maxnode = unsafe.Pointer(&p.nodes[0]), 64*len(p.nodes)+1
	}
	_, _, e := unix.Syscall6(unix.SYS_MBIND, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(p.mode), uintptr(mask), uintptr(maxnode), 0)
	if e != 0 {
		return e
	}
	return nil
}
