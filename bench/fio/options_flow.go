package fio

import (
	"slices"
	"strconv"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// flowOptions are fio's flow control options (options.c, flow.c): jobs
// that share a flow_id issue I/Os in proportion to their flow weights.
var flowOptions = []bench.OptionSpec{
	{Name: "flow_id", Example: "1", Unit: "int", Default: "0", Help: "the flow the job's I/Os count in: jobs with the same id share one",
		Set: bench.IntField(-1<<31, 1<<31-1, func(j *bench.Job) *int { return &j.FlowID }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.FlowID) }},
	{Name: "flow", Example: "8", Unit: "int", Default: "0",
		Help: "the job's weight in its flow: the flow's jobs keep the I/Os they issue in proportion to their weights (0: in no flow)",
		Set:  bench.IntField(0, bench.MaxFlowWeight, func(j *bench.Job) *int { return &j.Flow }),
		Get:  func(j *bench.Job) string { return strconv.Itoa(j.Flow) }},
	{Name: "flow_sleep", Example: "1000", Unit: "µs", Default: "0",
		Help: "a job ahead of its share reaps what it has in flight and sleeps this long, in µs, before it tries again (0: at once)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseInt(v, 0, 1<<31-1)
			if err == nil {
				j.FlowSleep = time.Duration(n) * time.Microsecond
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.FormatInt(j.FlowSleep.Microseconds(), 10) }},
}

// finishFlow is FinishJob's part for these options: flow_id and
// flow_sleep given in a job that is in no flow would change nothing.
// (From [global], they are for the jobs of the file that are; the run
// refuses them when none is, bench.Runner.Prepare.)
func finishFlow(j *bench.Job, fail func(option, format string, args ...any) error) error {
	if j.Flow > 0 {
		return nil
	}
	for _, name := range []string{"flow_id", "flow_sleep"} {
		if slices.ContainsFunc(j.Options, func(o bench.Option) bool { return o.Name == name }) {
			return fail(name, "%s has no effect without flow: the job is in no flow (give it a weight, e.g. flow=1, or remove %s)", name, name)
		}
	}
	return nil
}
