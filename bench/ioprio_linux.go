package bench

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ioprioWhoProcess is IOPRIO_WHO_PROCESS (include/uapi/linux/ioprio.h):
// with who 0, the calling thread.
const ioprioWhoProcess = 1

// setThreadIOPrio gives the calling thread, the job's, the priority of
// prio and prioclass, as fio's thread_main does before it sets up the
// engine: the kernel gives it to every I/O the thread issues that
// carries none of its own (read and write's kiocb, libaio's iocb without
// IOCB_FLAG_IOPRIO; io_uring's SQEs carry it, iolab's as fio's). Nothing
// without either option: the thread keeps the priority it has.
func setThreadIOPrio(j *Job) error {
	if !j.IOPrioSet {
		return nil
	}
	p := j.JobIOPrio()
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, uintptr(p)); errno != 0 {
		return ioprioError("prioclass", IOPrioClassOf(p), errno)
	}
	return nil
}

// ioprioError says why the kernel refused a priority of class (ioprio_set,
// or an I/O's own: ioprio_check_cap).
func ioprioError(option string, class int, err error) error {
	if errors.Is(err, unix.EPERM) && class == IOPrioClassRT {
		return fmt.Errorf("%s=1: the real-time I/O priority class needs CAP_SYS_NICE or CAP_SYS_ADMIN (EPERM); run as root, or use class 2 (best-effort) or 3 (idle)", option)
	}
	return fmt.Errorf("ioprio_set: %w", err)
}
