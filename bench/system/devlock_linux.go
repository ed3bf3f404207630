package system

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrDeviceBusy is TryLockDevice's error when another process holds the
// device's lock; the error wrapping it says who.
var ErrDeviceBusy = errors.New("in use by another iolab run")

// DeviceLock is an exclusive lock on one device, across processes: a
// flock(2) on a file named after the device in the lock directory. The
// kernel drops it when the holder's last descriptor closes, so a holder
// that is killed (or is a zombie not yet reaped) never keeps a device
// locked.
type DeviceLock struct {
	Key string
	f   *os.File
}

// LockDir is where device locks live: $IOLAB_LOCK_DIR when set (tests keep
// theirs apart with it), else /run/iolab when it can be made, else
// iolab-locks-UID under the temporary directory. Every iolab process on a
// machine must agree on it, and does unless told otherwise.
func LockDir() string {
	if d := os.Getenv("IOLAB_LOCK_DIR"); d != "" {
		return d
	}
	if err := os.MkdirAll("/run/iolab", 0o755); err == nil && unix.Access("/run/iolab", unix.W_OK) == nil {
		return "/run/iolab"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("iolab-locks-%d", os.Getuid()))
}

// TryLockDevice takes key's lock in dir without waiting and records holder
// in it. When another process holds it, the error wraps ErrDeviceBusy and
// says what that process recorded.
func TryLockDevice(dir, key, holder string) (*DeviceLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("device lock directory: %w", err)
	}
	path := filepath.Join(dir, lockName(key))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who, _ := os.ReadFile(path)
			return nil, fmt.Errorf("%s: %w (%s)", key, ErrDeviceBusy, strings.TrimSpace(string(who)))
		}
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(holder+"\n"), 0)
	}
	return &DeviceLock{Key: key, f: f}, nil
}

// Unlock releases the lock.
func (l *DeviceLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}

// lockName turns a device key ("loop3", "dev 0:52", a path) into a file
// name.
func lockName(key string) string {
	r := strings.NewReplacer("/", "_", " ", "_", ":", "-")
	return "dev-" + r.Replace(key) + ".lock"
}
