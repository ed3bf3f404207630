package fio

import (
	"strconv"

	"iolab/bench"
)

// ioprioOptions are fio's I/O priority options of the job's thread (fio's
// prio and prioclass, options.c FIO_OPT_G_CRED): fio sets them with
// ioprio_set before the engine is set up, and every I/O without a
// priority of its own carries them. Priorities per I/O are the io_uring
// and libaio engines' cmdprio options (bench/cmdprio.go).
var ioprioOptions = []bench.OptionSpec{
	{Name: "prio", Example: "4", Unit: "int",
		Help: "the I/O priority level of the job's thread, 0 (highest) to 7, in prioclass (best-effort when not given); neither given: the thread keeps the one it has",
		Set:  ioprioField(0, bench.MaxIOPrioLevel, func(j *bench.Job) *int { return &j.IOPrio }),
		Get:  getIOPrio(func(j *bench.Job) int { return j.IOPrio })},
	{Name: "prioclass", Example: "3", Unit: "int",
		Help: "the I/O priority class of the job's thread: 1 real-time (needs CAP_SYS_NICE), 2 best-effort, 3 idle (0: best-effort)",
		Set:  ioprioField(bench.IOPrioClassNone, bench.IOPrioClassIdle, func(j *bench.Job) *int { return &j.IOPrioClass }),
		Get:  getIOPrio(func(j *bench.Job) int { return j.IOPrioClass })},
}

// ioprioField sets prio or prioclass: either sets the thread's priority
// (fio's fio_option_is_set).
func ioprioField(lo, hi int, field func(*bench.Job) *int) func(*bench.Job, string) error {
	set := bench.IntField(lo, hi, field)
	return func(j *bench.Job, v string) error {
		if err := set(j, v); err != nil {
			return err
		}
		j.IOPrioSet = true
		return nil
	}
}

func getIOPrio(get func(*bench.Job) int) func(*bench.Job) string {
	return func(j *bench.Job) string {
		if !j.IOPrioSet {
			return ""
		}
		return strconv.Itoa(get(j))
	}
}
