// Package zram adds and removes zram devices through zram-control: the
// devices calibrate's zram-empty target and the tests read. It is a leaf,
// below bench/system's tests and testdev alike.
package zram

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// zramControl is zram-control's directory in sysfs.
const zramControl = "/sys/class/zram-control"

// ErrNone is Add's error where the machine has no zram-control (the
// zram module is not loaded, or there is none).
var ErrNone = errors.New("no " + zramControl + " (modprobe zram)")

// Add adds a zram device of size bytes (zram-control's hot_add) and
// writes nothing to it: every page reads as zeros until written. remove
// resets it and takes it away, trying again for a while when it is busy
// (udev may still hold a device it just saw).
func Add(size int64) (dev string, remove func() error, err error) {
	b, err := os.ReadFile(filepath.Join(zramControl, "hot_add"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, ErrNone
	}
	if err != nil {
		return "", nil, fmt.Errorf("adding a zram device: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(id); err != nil {
		return "", nil, fmt.Errorf("zram-control's hot_add answered %q, not a device number", id)
	}
	sys := "/sys/block/zram" + id
	remove = func() error {
		var err error
		for range 100 {
			os.WriteFile(filepath.Join(sys, "reset"), []byte("1"), 0o200)
			if err = os.WriteFile(filepath.Join(zramControl, "hot_remove"), []byte(id), 0o200); err == nil {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("removing zram%s: %w", id, err)
	}
	if err := os.WriteFile(filepath.Join(sys, "disksize"), []byte(strconv.FormatInt(size, 10)), 0o644); err != nil {
		return "", nil, errors.Join(fmt.Errorf("zram%s: setting disksize: %w", id, err), remove())
	}
	return "/dev/zram" + id, remove, nil
}
