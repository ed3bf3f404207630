package tsc

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// allowedCPUs are the CPUs the process may run on, at most max of them.
func allowedCPUs(max int) []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < max; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// pinCPU locks the calling goroutine to its thread and the thread to cpu;
// unpin gives the thread its CPUs back and unlocks it, so that the runtime
// gets back the thread as it was (a thread left pinned would run other
// goroutines on one CPU, and the threads it starts would inherit that).
func pinCPU(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		if unix.SchedSetaffinity(0, &was) == nil {
			runtime.UnlockOSThread()
		}
		// Else the thread stays locked and ends with the goroutine.
	}, nil
}
