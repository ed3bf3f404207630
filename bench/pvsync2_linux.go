package bench

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// pvsync2Engine is fio's pvsync2: preadv2(2) and pwritev2(2) of one
// iovec, with RWF_HIPRI (polled completion) on hipri_percentage of the
// I/Os when hipri is set, and RWF_NOWAIT with nowait.
var pvsync2Engine = Engine{
	Name:  "pvsync2",
	Help:  "preadv2/pwritev2 of one iovec (hipri: RWF_HIPRI, nowait: RWF_NOWAIT), one I/O at a time",
	Flags: SyncIO,
	Options: []OptionSpec{
		{Name: "hipri", Flag: true, Unit: "bool", Default: "0",
			Help: "polled I/O: RWF_HIPRI on hipri_percentage of the I/Os (the kernel polls only where the device has poll queues)",
			Set:  BoolField(func(j *Job) *bool { return &j.Hipri }), Get: GetBool(func(j *Job) *bool { return &j.Hipri })},
		{Name: "hipri_percentage", Example: "50", Unit: "%", Default: "100",
			Help: "the share of I/Os hipri flags RWF_HIPRI",
			Set:  IntField(0, 100, func(j *Job) *int { return &j.HipriPercentage }),
			Get:  func(j *Job) string { return strconv.Itoa(j.HipriPercentage) }},
		{Name: "nowait", Example: "1", Unit: "bool", Default: "0",
			Help: "RWF_NOWAIT: an I/O that would block (data not cached, device busy) fails with EAGAIN instead, which ends the job, as in fio",
			Set:  BoolField(func(j *Job) *bool { return &j.NoWait }), Get: GetBool(func(j *Job) *bool { return &j.NoWait })},
	},
	Modes: []EngineMode{{"hipri", "hipri"}},
	open: func(j *Job, fds []int, bufs *buffers, depth int) (engine, engineInfo, error) {
		s, err := newSyncIO(j, fds, bufs, depth, pvsync2ReadWrite)
		if err != nil {
			return nil, engineInfo{}, err
		}
		if j.Hipri {
			s.hipri = uint64(j.HipriPercentage)
		}
		if j.NoWait {
			s.flags |= unix.RWF_NOWAIT
		}
		return s, engineInfo{}, nil
	},
}

// pvsync2ReadWrite is fio_pvsyncio2_queue: whether an I/O is polled is
// drawn for each one (fio's rand_between(1, 100) <= hipri_percentage).
func pvsync2ReadWrite(s *syncIO, r *syncReq) int32 {
	flags := s.flags
	if s.hipri > 0 && s.rnd.Below(100) < s.hipri {
		flags |= unix.RWF_HIPRI
	}
	lo, hi := offsetArgs(r.off)
	return syscallRes(rwCall(r.op, unix.SYS_PREADV2, unix.SYS_PWRITEV2), uintptr(s.fds[r.file]), s.vec(r), 1, lo, hi, flags)
}
