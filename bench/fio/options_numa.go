package fio

import (
	"iolab/bench"
)

// numaOptions are fio's NUMA options (options.c str_numa_cpunodes_cb and
// str_numa_mpol_cb): their values are checked as fio parses them; the
// nodes themselves are looked up on the machine the job runs on, before
// any job starts.
var numaOptions = []bench.OptionSpec{
	{Name: "numa_cpu_nodes", Example: "0", Unit: "nodes",
		Help: "run the job on these NUMA nodes' CPUs, in place of cpus_allowed: nodes and ranges (0,2-3), all, or !0 for all but node 0",
		Set: func(j *bench.Job, v string) error {
			if _, err := bench.ParseNodeList(v); err != nil {
				return err
			}
			j.NUMACPUNodes = v
			return nil
		},
		Get: func(j *bench.Job) string { return j.NUMACPUNodes }},
	{Name: "numa_mem_policy", Example: "bind:0", Unit: "policy", Default: "default",
		Help: "the memory policy of the job's I/O buffers: default, prefer:N, bind:nodes, interleave[:nodes] (all nodes without) or local",
		Set: func(j *bench.Job, v string) error {
			if _, _, err := bench.ParseMemPolicy(v); err != nil {
				return err
			}
			j.NUMAMemPolicy = v
			return nil
		},
		Get: func(j *bench.Job) string {
			if j.NUMAMemPolicy == "" {
				return "default"
			}
			return j.NUMAMemPolicy
		}},
}

// finishNUMA is FinishJob's part for these options: fio sets the CPUs of
// numa_cpu_nodes after those of cpus_allowed, which then count for
// nothing.
func finishNUMA(j *bench.Job, fail func(option, format string, args ...any) error) error {
	if j.NUMACPUNodes != "" && len(j.CPUsAllowed) > 0 {
		return fail("numa_cpu_nodes", "numa_cpu_nodes=%s replaces cpus_allowed (fio sets the nodes' CPUs after cpus_allowed's): give one of the two", j.NUMACPUNodes)
	}
	return nil
}
