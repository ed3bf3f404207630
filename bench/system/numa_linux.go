package system

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
)

// NUMANodes reads the machine's online NUMA nodes from
// /sys/devices/system/node: online, has_memory and each node's cpulist. A
// kernel without NUMA support (CONFIG_NUMA off) has no such directory: the
// error then wraps fs.ErrNotExist. A kernel too old for has_memory (before
// 2.6.36) counts every node as having memory.
func (s FS) NUMANodes() ([]NUMANode, error) {
	dir := s.sysPath("devices", "system", "node")
	online, err := readTrimmed(s.sysPath("devices", "system", "node", "online"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("system: %s is missing: the kernel has no NUMA support: %w", dir, fs.ErrNotExist)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("system: NUMA nodes: %w", err)
	}
	ids, err := ParseList(online)
	if err != nil {
		return nil, fmt.Errorf("system: %s/online: %w", dir, err)
	}
	withMemory := ids
	if v, err := readTrimmed(s.sysPath("devices", "system", "node", "has_memory")); err == nil {
		if withMemory, err = ParseList(v); err != nil {
			return nil, fmt.Errorf("system: %s/has_memory: %w", dir, err)
		}
	}
	nodes := make([]NUMANode, 0, len(ids))
	for _, id := range ids {
		name := "node" + strconv.Itoa(id)
		v, err := readTrimmed(s.sysPath("devices", "system", "node", name, "cpulist"))
		if err != nil {
			return nil, fmt.Errorf("system: NUMA node %d: %w", id, err)
		}
		cpus, err := ParseList(v)
		if err != nil {
			return nil, fmt.Errorf("system: %s/%s/cpulist: %w", dir, name, err)
		}
		nodes = append(nodes, NUMANode{ID: id, CPUs: cpus, Memory: slices.Contains(withMemory, id)})
	}
	return nodes, nil
}
