package engine

import (
	"iolab/bench/units"

	"golang.org/x/sys/unix"
)

// pvsync2Engine is fio's pvsync2: preadv2(2) and pwritev2(2) of one
// iovec, with RWF_HIPRI (polled completion) on hipri_percentage of the
// I/Os when hipri is set, and RWF_NOWAIT with nowait.
var pvsync2Engine = Engine{
	Name:  "pvsync2",
	Help:  "preadv2/pwritev2 of one iovec (hipri: RWF_HIPRI, nowait: RWF_NOWAIT), one I/O at a time",
	Flags: SyncIO,
	Options: []Option{
		{Name: "hipri", Flag: true, Unit: "bool", Default: "0",
			Help: "polled I/O: RWF_HIPRI on hipri_percentage of the I/Os (the kernel polls only where the device has poll queues)",
			Set:  units.SetBool(func(p *Params) *bool { return &p.Hipri }), Get: units.GetBool(func(p *Params) *bool { return &p.Hipri })},
		{Name: "hipri_percentage", Example: "50", Unit: "%", Default: "100",
			Help: "the share of I/Os hipri flags RWF_HIPRI",
			Set:  units.SetInt(0, 100, func(p *Params) *int { return &p.HipriPercentage }),
			Get:  units.GetInt(func(p *Params) *int { return &p.HipriPercentage })},
		{Name: "nowait", Example: "1", Unit: "bool", Default: "0",
			Help: "RWF_NOWAIT: an I/O that would block (data not cached, device busy) fails with EAGAIN instead, which ends the job, as in fio",
			Set:  units.SetBool(func(p *Params) *bool { return &p.NoWait }), Get: units.GetBool(func(p *Params) *bool { return &p.NoWait })},
	},
	Modes: []Mode{{"hipri", "hipri"}},
	open: func(st *Setup) (IO, Info, error) {
		s, err := newSyncIO(st, pvsync2ReadWrite)
		if err != nil {
			return nil, Info{}, err
		}
		if st.Hipri {
			s.hipri = uint64(st.HipriPercentage)
		}
		if st.NoWait {
			s.flags |= unix.RWF_NOWAIT
		}
		return s, Info{}, nil
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
