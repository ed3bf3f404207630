package testdev

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Zram adds a zram device of size bytes (hot_add) and removes it when the
// test ends, trying again while it is busy (udev may still hold a device
// it just saw): a device left behind fails the test. It skips where the
// machine has no zram or the test no rights to add one.
func Zram(tb testing.TB, size int64) string {
	tb.Helper()
	b, err := os.ReadFile("/sys/class/zram-control/hot_add")
	if err != nil {
		tb.Skipf("no zram here (modprobe zram; root): %v", err)
	}
	id := strings.TrimSpace(string(b))
	tb.Cleanup(func() {
		for range 100 {
			os.WriteFile("/sys/block/zram"+id+"/reset", []byte("1"), 0o200)
			if err = os.WriteFile("/sys/class/zram-control/hot_remove", []byte(id), 0o200); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		tb.Errorf("zram%s left behind: %v", id, err)
	})
	if err := os.WriteFile("/sys/block/zram"+id+"/disksize", []byte(strconv.FormatInt(size, 10)), 0o644); err != nil {
		tb.Fatal(err)
	}
	return "/dev/zram" + id
}
