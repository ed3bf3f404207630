package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
	"iolab/bench/system"
)

// numaFixture is one of system's /sys fixtures: "numa" has four nodes —
// 0 and 1 with CPUs 0-3,8-11 and 4-7,12-15 and memory, 2 of memory
// alone, 3 of CPUs 16-17 alone; "numa-split" two, of CPU 0 and CPU 1.
func numaFixture(name string) system.FS {
	return system.FS{Sys: filepath.Join("system", "testdata", "sys", name, "sys")}
}

// TestNUMAPlacementFixture resolves the NUMA options on a machine of four
// nodes.
func TestNUMAPlacementFixture(t *testing.T) {
	for _, tc := range []struct {
		cpuNodes, policy string
		cpus             []int
		mode             int
		nodes            []uint64
		err              string
	}{
		{cpuNodes: "1", cpus: []int{4, 5, 6, 7, 12, 13, 14, 15}},
		{cpuNodes: "0,3", cpus: []int{0, 1, 2, 3, 8, 9, 10, 11, 16, 17}},
		{cpuNodes: "!0-1", cpus: []int{16, 17}},
		{cpuNodes: "all", cpus: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}},
		{cpuNodes: "2", err: "numa_cpu_nodes=2: node 2 has no CPUs"},
		{cpuNodes: "5", err: "NUMA node 5 does not exist (this machine's nodes: 0, 1, 2, 3;"},
		{policy: "bind:0-1", mode: mpolBind, nodes: []uint64{0b11}},
		{policy: "interleave", mode: mpolInterleave, nodes: []uint64{0b111}},
		{policy: "interleave:!0", mode: mpolInterleave, nodes: []uint64{0b110}},
		{policy: "prefer:2", mode: mpolPreferred, nodes: []uint64{0b100}},
		{policy: "local", mode: mpolLocal},
		{policy: "default", mode: mpolDefault},
		{policy: "bind:3", err: "numa_mem_policy=bind:3: node 3 has no memory"},
		{policy: "bind:4", err: "NUMA node 4 does not exist"},
		{cpuNodes: "0", policy: "bind:1", cpus: []int{0, 1, 2, 3, 8, 9, 10, 11}, mode: mpolBind, nodes: []uint64{0b10}},
	} {
		t.Run(tc.cpuNodes+"/"+tc.policy, func(t *testing.T) {
			j := NewJob()
			j.Name, j.NUMACPUNodes, j.NUMAMemPolicy = "n", tc.cpuNodes, tc.policy
			cpus, mem, err := numaPlacement(numaFixture("numa"), &j)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cpus, tc.cpus) || mem.mode != tc.mode || !reflect.DeepEqual(mem.nodes, tc.nodes) {
				t.Errorf("CPUs %v, mode %d, nodes %b; want %v, %d, %b", cpus, mem.mode, mem.nodes, tc.cpus, tc.mode, tc.nodes)
			}
		})
	}
	// A kernel without NUMA: the error says so.
	j := NewJob()
	j.Name, j.NUMAMemPolicy = "n", "bind:0"
	if _, _, err := numaPlacement(system.FS{Sys: t.TempDir()}, &j); err == nil || !strings.Contains(err.Error(), "no NUMA support") {
		t.Errorf("no /sys/devices/system/node: %v", err)
	}
}

// onLockedThread runs f on a thread of its own, which exits with it: the
// job's affinity dies with it.
func onLockedThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f()
	}()
	<-done
}

// TestNUMACPUNodes: the job's thread runs on the CPUs of its nodes — on a
// fixture of two nodes of one CPU each, node 1's CPU 1; on this machine,
// node 0's.
func TestNUMACPUNodes(t *testing.T) {
	for _, tc := range []struct {
		sys   system.FS
		nodes string
	}{{numaFixture("numa-split"), "1"}, {numaFixture("numa-split"), "0"}, {system.FS{}, "0"}} {
		machine, err := tc.sys.NUMANodes()
		if err != nil {
			t.Fatal(err)
		}
		want := machine[tc.nodes[0]-'0'].CPUs
		j := nullJob(16)
		j.NUMACPUNodes = tc.nodes
		var got []int
		onLockedThread(func() {
			r, err := openJob(tc.sys, &j, 0, JobFiles{}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer r.close()
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &set); err != nil {
				t.Error(err)
			}
			for c := range 1024 {
				if set.IsSet(c) {
					got = append(got, c)
				}
			}
		})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s, numa_cpu_nodes=%s: the job runs on CPUs %v, want %v", tc.sys.Sys, tc.nodes, got, want)
		}
	}
}

// TestNUMAMemPolicy opens a job with each memory policy on node 0 and
// reads its buffers' mapping in /proc/self/numa_maps: the policy the
// kernel holds for it, and every page on node 0.
func TestNUMAMemPolicy(t *testing.T) {
	for _, tc := range []struct{ policy, maps string }{
		{"bind:0", "bind:0"}, {"interleave", "interleave:0"}, {"interleave:0", "interleave:0"},
		{"prefer:0", "prefer:0"}, {"local", "local"}, {"default", "default"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			j := nullJob(16)
			j.BS, j.RW = 64<<10, "randwrite"
			j.NUMAMemPolicy = tc.policy
			var line string
			pages := 0
			onLockedThread(func() {
				r, err := openJob(system.FS{}, &j, 0, JobFiles{}, nil)
				if err != nil {
					t.Error(err)
					return
				}
				defer r.close()
				line, pages = numaMapsLine(t, r.bufs.Addr(0)), len(r.bufs.arena.Mem)/engine.PageSize
			})
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[1] != tc.maps {
				t.Fatalf("numa_maps for the buffers: %q, want policy %s", line, tc.maps)
			}
			// A mapping of the default policy may be merged with its
			// neighbours; one with its own policy stands alone.
			if want := fmt.Sprintf(" anon=%d dirty=%d active=0 N0=%d ", pages, pages, pages); tc.policy != "default" && !strings.Contains(line, want) {
				t.Errorf("numa_maps for the buffers: %q, want%s(every page there, on node 0)", line, want)
			}
		})
	}
}

// numaMapsLine is the line of /proc/self/numa_maps for the mapping that
// starts at addr.
func numaMapsLine(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/numa_maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), fmt.Sprintf("%x ", addr)) {
			return sc.Text()
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/numa_maps", addr)
	return ""
}
