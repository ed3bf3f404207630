package testdev

import (
	"errors"
	"os"
	"testing"

	"iolab/bench/system/zram"
)

// Zram adds a zram device of size bytes (zram.Add) and removes it
// when the test ends: a device left behind fails the test. It skips where
// the machine has no zram or the test no rights to add one.
func Zram(tb testing.TB, size int64) string {
	tb.Helper()
	dev, remove, err := zram.Add(size)
	if errors.Is(err, zram.ErrNone) || errors.Is(err, os.ErrPermission) {
		tb.Skipf("no zram here (modprobe zram; root): %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := remove(); err != nil {
			tb.Errorf("%s left behind: %v", dev, err)
		}
	})
	return dev
}
