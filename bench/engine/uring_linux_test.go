package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestURingDisabledNamesTheSysctl: io_uring_setup's EPERM with
// kernel.io_uring_disabled set reads as the sysctl and what to do, not a
// bare EPERM. The knob is a file of the test's own: the machine's setting
// is shared with every test running at the same time.
func TestURingDisabledNamesTheSysctl(t *testing.T) {
	defer func(k string) { uringDisabledKnob = k }(uringDisabledKnob)
	uringDisabledKnob = filepath.Join(t.TempDir(), "io_uring_disabled")
	st := &Setup{Params: Params{SQThreadPollCPU: -1}, IODepth: 4}
	for knob, want := range map[string]string{
		"2\n": "kernel.io_uring_disabled=2); run `sysctl kernel.io_uring_disabled=0` or use --ioengine=libaio",
		"1\n": "kernel.io_uring_disabled=1)",
		"0\n": "io_uring is disabled for this process (EPERM)",
	} {
		if err := os.WriteFile(uringDisabledKnob, []byte(knob), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := uringSetupError(unix.EPERM, st); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("knob %q: %v, want %q", knob, err, want)
		}
	}
	if err := uringSetupError(unix.ENOSYS, st); err == nil || !strings.Contains(err.Error(), "libaio") {
		t.Errorf("ENOSYS: %v", err)
	}
}
