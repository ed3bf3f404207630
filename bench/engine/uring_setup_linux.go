package engine

import (
	"strconv"
	"strings"
)

// uringSetupNames names io_uring_setup's flags the way the kernel's header
// does, for the run's record of how each ring was set up.
var uringSetupNames = []struct {
	flag uint32
	name string
}{
	{ioringSetupIOPoll, "IOPOLL"},
	{ioringSetupSQPoll, "SQPOLL"},
	{ioringSetupSQAff, "SQ_AFF"},
	{ioringSetupCQSize, "CQSIZE"},
	{ioringSetupCoopTaskrun, "COOP_TASKRUN"},
	{ioringSetupTaskrunFlag, "TASKRUN_FLAG"},
	{ioringSetupSingleIssuer, "SINGLE_ISSUER"},
	{ioringSetupDeferTaskrun, "DEFER_TASKRUN"},
	{ioringSetupNoSQArray, "NO_SQARRAY"},
}

// describe is the ring as set up: the flags the kernel took (newURing
// falls back flag by flag when one is refused), the ring's sizes and
// whether its fd is registered — "CQSIZE COOP_TASKRUN …; sq 8, cq 8;
// registered ring fd".
func (r *uring) describe() string {
	var flags []string
	for _, f := range uringSetupNames {
		if r.setup&f.flag != 0 {
			flags = append(flags, f.name)
		}
	}
	s := "io_uring " + strings.Join(flags, " ") + "; sq " + strconv.Itoa(int(r.sqMask)+1) + ", cq " + strconv.Itoa(int(r.cqMask)+1)
	if r.enterFlags&ioringEnterRegisteredRing != 0 {
		s += "; registered ring fd"
	}
	if r.fixedBufs {
		s += "; registered buffers"
	}
	if r.sqeFlags&iosqeFixedFile != 0 {
		s += "; registered files"
	}
	if r.spin.ok {
		s += "; " + spinNote + " (the task-run flag)"
	}
	return s
}
