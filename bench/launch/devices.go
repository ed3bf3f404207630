package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// Hooks are what Execute tells its caller: the plan's own hooks, and
// Waiting while another process holds a device the plan needs (the message
// names the device and the holder).
type Hooks struct {
	sweep.PlanHooks
	Waiting func(msg string)
	// Quota, when set, is checked again once the plan holds its devices,
	// before anything runs: the run may have waited while the data
	// directory filled.
	Quota *Quota
}

// lockPoll is how often a run waiting for a device tries its lock again.
const lockPoll = 200 * time.Millisecond

// LockDevices takes the cross-process lock of every device key, in sorted
// order so two runs never wait on each other, recording holder in each.
// While a key is held elsewhere it calls waiting (when set) with who holds
// it, and tries again until it gets it or ctx ends. release gives every
// lock back.
func LockDevices(ctx context.Context, keys []string, holder string, waiting func(msg string)) (release func(), err error) {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	dir := system.LockDir()
	var held []*system.DeviceLock
	release = func() {
		for _, l := range held {
			l.Unlock()
		}
	}
	for _, k := range keys {
		last := ""
		for {
			l, err := system.TryLockDevice(dir, k, holder)
			if err == nil {
				held = append(held, l)
				break
			}
			if !errors.Is(err, system.ErrDeviceBusy) {
				release()
				return nil, err
			}
			if msg := "waiting for " + err.Error(); msg != last && waiting != nil {
				waiting(msg)
				last = msg
			}
			select {
			case <-ctx.Done():
				release()
				return nil, context.Cause(ctx)
			case <-time.After(lockPoll):
			}
		}
	}
	return release, nil
}

// deviceKey is the key of the device path is on, for the
// one-run-per-device rule: the whole disk when there is one, else the
// filesystem's device number (tmpfs), else the path. t and terr are
// path's resolution; byFS holds the key of each filesystem a regular file
// was found on, so that the others on it are not resolved for their key.
func deviceKey(runner *bench.Runner, path string, t system.Target, terr error, byFS map[uint64]string) string {
	key := path
	fsDev, isFile := fileSystemOf(path)
	if k, ok := byFS[fsDev]; ok && isFile {
		key = k
	} else if terr == nil {
		switch {
		case t.Disk != "":
			key = t.Disk
		case t.Dev != "":
			key = "dev " + t.Dev
		}
	} else if dir := parentDir(path); dir != "" {
		// A file to be created: the device of its directory.
		if t, err := runner.Sys.ResolveTarget(dir); err == nil && t.Disk != "" {
			key = t.Disk
		} else if err == nil && t.Dev != "" {
			key = "dev " + t.Dev
		}
	}
	if isFile && key != path {
		byFS[fsDev] = key
	}
	return key
}

// fileSystemOf is the device number of the filesystem holding path, a
// regular file (symlinks followed) or one to be made in an existing
// directory; isFile is false for anything else (a device has a key of
// its own).
func fileSystemOf(path string) (dev uint64, isFile bool) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		fi, err = os.Stat(filepath.Dir(path))
		if err != nil || !fi.IsDir() {
			return 0, false
		}
	} else if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return ""
	}
	return p[:i]
}
