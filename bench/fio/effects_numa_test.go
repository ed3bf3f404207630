package fio

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
)

// The NUMA family's effect probes: side by side with fio under strace,
// the CPUs a job's thread is bound to and the memory policy its buffers
// get, on this machine's node 0; on a /sys fixture of two one-CPU nodes,
// a job that really moves to node 1's CPU; and the nodes refused.

// numaCalls are, from a trace, the CPU lists the job set its own thread
// to (sched_setaffinity of pid 0: fio's helper threads name theirs) and
// the memory policies set — fio's set_mempolicy for the thread, iolab's
// mbind for the buffers — as mode and first word of the node mask.
// libnuma's probe as it starts (MPOL_PREFERRED_MANY, then MPOL_DEFAULT)
// is left out.
func numaCalls(lines []string) (cpus, policies []string) {
	aff := regexp.MustCompile(`sched_setaffinity\(0, \d+, \[([\d ]*)\]\)\s+= 0`)
	pol := regexp.MustCompile(`(?:set_mempolicy\(|mbind\(0x[0-9a-f]+, \d+, )(MPOL_\w+), (NULL|\[(?:0x)?([0-9a-f]+))`)
	for _, l := range lines {
		if m := aff.FindStringSubmatch(l); m != nil {
			cpus = append(cpus, m[1])
		}
		if m := pol.FindStringSubmatch(l); m != nil && m[1] != "MPOL_DEFAULT" && m[1] != "MPOL_PREFERRED_MANY" && !strings.Contains(l, "= -1") {
			mask, _ := strconv.ParseUint(m[3], 16, 64)
			policies = append(policies, m[1]+" "+strconv.FormatUint(mask, 16))
		}
	}
	return cpus, policies
}

// numaSideBySide runs a libaio job with the NUMA options under strace
// with fio and with iolab.
func numaSideBySide(t *testing.T, opts ...string) (fioCPUs, fioPolicies, cpus, policies []string) {
	t.Helper()
	fioBin := lookFio(t)
	args := append([]string{"--ioengine=libaio", "--iodepth=4", "--size=64k"}, opts...)
	const calls = "sched_setaffinity,set_mempolicy,mbind"
	fio := strace(t, calls, "", nil, fioBin, append([]string{"--thread", "--name=n", "--filename=" + file(t, 1<<20)}, args...)...)
	iolab := strace(t, calls, "", []string{"IOLAB_EFFECT_JOB=1", clockNotChecked}, os.Args[0], append([]string{"--name=n", "--filename=" + file(t, 1<<20)}, args...)...)
	fioCPUs, fioPolicies = numaCalls(fio)
	cpus, policies = numaCalls(iolab)
	return
}

func init() {
	effects["numa_cpu_nodes"] = func(t *testing.T) {
		for _, v := range []string{"0", "all"} {
			want, _, got, _ := numaSideBySide(t, "--numa_cpu_nodes="+v)
			if len(want) != 1 || strings.Join(got, ";") != strings.Join(want, ";") {
				t.Errorf("numa_cpu_nodes=%s: the job's thread set to CPUs %q, fio's to %q", v, got, want)
			}
		}
		// On two nodes of one CPU each, node 1's job runs on CPU 1.
		if cpus := numaJobCPUs(t, filepath.Join("..", "system", "testdata", "sys", "numa-split", "sys"), "1"); cpus != "1" {
			t.Errorf("numa_cpu_nodes=1 on a machine whose node 1 is CPU 1: the job ran on CPUs %q", cpus)
		}
		missing := missingNode(t)
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_cpu_nodes="+missing), "NUMA node "+missing+" does not exist (this machine's nodes: 0")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--cpus_allowed=0", "--numa_cpu_nodes=0"), "replaces cpus_allowed")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_cpu_nodes=0-x"), "not a list of NUMA nodes")
	}
	effects["numa_mem_policy"] = func(t *testing.T) {
		for _, v := range []string{"bind:0", "interleave", "prefer:0", "local", "default"} {
			_, want, _, got := numaSideBySide(t, "--numa_mem_policy="+v)
			if strings.Join(got, ";") != strings.Join(want, ";") || (v != "default") != (len(got) == 1) {
				t.Errorf("numa_mem_policy=%s: iolab's buffers get %q, fio's thread %q", v, got, want)
			}
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_mem_policy=bind:"+missingNode(t)), "does not exist")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_mem_policy=prefer:0,1"), "prefer takes one node")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_mem_policy=local:0"), "local takes no nodes")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--numa_mem_policy=bind"), "bind needs nodes")
	}
}

// missingNode is the number of a node this machine does not have.
func missingNode(t *testing.T) string {
	nodes, err := system.FS{}.NUMANodes()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(nodes[len(nodes)-1].ID + 1)
}

// numaJobCPUs runs a null job with numa_cpu_nodes=nodes on a machine whose
// /sys is sys, and returns the CPUs its thread was allowed while it ran
// (Cpus_allowed_list of the thread not allowed every CPU).
func numaJobCPUs(t *testing.T, sys, nodes string) string {
	t.Helper()
	cfg, err := ParseArgs([]string{"--name=n", "--ioengine=null", "--size=1g", "--time_based", "--runtime=300ms", "--numa_cpu_nodes=" + nodes})
	if err != nil {
		t.Fatal(err)
	}
	bench.ClockSource() // the TSC's in-step check pins threads of its own: done before the watch
	all := threadCPUs(t)
	var seen atomic.Value
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			for _, c := range threadCPUs(t) {
				if c != all[0] {
					seen.Store(c)
				}
			}
		}
	}()
	_, err = (&bench.Runner{Sys: system.FS{Sys: sys}}).Run(context.Background(), cfg)
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := seen.Load().(string)
	return v
}

// threadCPUs are the Cpus_allowed_list of this process's threads, the
// process's own first.
func threadCPUs(t *testing.T) []string {
	t.Helper()
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	out := []string{read("/proc/self/status")}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, p := range tasks {
		if v := read(p); v != "" {
			out = append(out, v)
		}
	}
	return out
}
