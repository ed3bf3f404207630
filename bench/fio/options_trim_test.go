package fio

import (
	"strings"
	"testing"
)

// TestTrimsRefuseWhatTheyCannot: a trimming job with an option iolab does
// not apply to trims yet is refused naming it, never run with the option
// doing nothing; the same option on a write job is taken.
func TestTrimsRefuseWhatTheyCannot(t *testing.T) {
	for _, tc := range []struct {
		opt, name string
	}{
		{"--verify=crc32c", "verify"},
		{"--rate_iops=100", "rate"},
		{"--write_lat_log=x", "write_lat_log"},
		{"--write_bw_log=x", "write_bw_log"},
		{"--cmdprio_percentage=50", "cmdprio_percentage"},
	} {
		for _, rw := range []string{"trim", "randtrimwrite"} {
			args := []string{"--name=t", "--filename=/dev/loop0", "--ioengine=libaio", "--size=1m", "--rw=" + rw, tc.opt}
			_, err := ParseArgs(args)
			if err == nil || !strings.Contains(err.Error(), "rw="+rw+" with "+tc.name+": iolab does not") {
				t.Errorf("%v: %v; want the option refused by name", args, err)
			}
			args[4] = "--rw=randwrite"
			if _, err := ParseArgs(args); err != nil {
				t.Errorf("%v: %v", args, err)
			}
		}
	}
}

// TestVsyncRefusesTrims: fio 3.33's vsync cannot trim (EFAULT from its
// writev); iolab refuses the job naming the engines that can, and vsync
// still reads and writes.
func TestVsyncRefusesTrims(t *testing.T) {
	_, err := ParseArgs([]string{"--name=t", "--filename=/dev/loop0", "--size=1m", "--ioengine=vsync", "--rw=randtrim"})
	if err == nil || !strings.Contains(err.Error(), "ioengine=vsync does not trim") {
		t.Errorf("vsync trims: %v; want them refused", err)
	}
	if _, err := ParseArgs([]string{"--name=t", "--filename=/dev/loop0", "--size=1m", "--ioengine=vsync", "--rw=randwrite"}); err != nil {
		t.Error(err)
	}
}
