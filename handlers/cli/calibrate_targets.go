package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"iolab/bench/fio"
	"iolab/bench/system/zram"
)

// matrixTarget is a device calibrate --matrix set up for itself, with
// what undoes it.
type matrixTarget struct {
	fio.MatrixTarget
	cleanup func() error
}

// setUpTarget makes one of the matrix's named targets: "zram" (/dev/zram0
// sized and filled with size bytes of random data, when it is not in use:
// disksize 0), "zram-empty" (a zram device of its own, of size bytes never
// written) or "loop" (a direct-I/O loop device over a file of size random
// bytes in dir). NAME=PATH names a device of the user's, which the
// matrix only reads.
func setUpTarget(spec, dir string, size int64) (matrixTarget, error) {
	if name, path, ok := strings.Cut(spec, "="); ok {
		if name == "" || path == "" {
			return matrixTarget{}, fmt.Errorf("--targets %q: use NAME=PATH, e.g. nvme=/dev/nvme0n1", spec)
		}
		if _, err := os.Stat(path); err != nil {
			return matrixTarget{}, fmt.Errorf("--targets %s: %w", spec, err)
		}
		return matrixTarget{MatrixTarget: fio.MatrixTarget{Name: name, Path: path}, cleanup: func() error { return nil }}, nil
	}
	switch spec {
	case "zram":
		return setUpZram(size)
	case "zram-empty":
		return setUpEmptyZram(size)
	case "loop":
		return setUpLoop(dir, size)
	}
	return matrixTarget{}, fmt.Errorf("--targets: no target %q: use zram, zram-empty, loop or NAME=PATH", spec)
}

func setUpZram(size int64) (matrixTarget, error) {
	const sys = "/sys/block/zram0"
	if _, err := os.Stat(sys); err != nil {
		if out, err := exec.Command("modprobe", "zram").CombinedOutput(); err != nil {
			return matrixTarget{}, fmt.Errorf("zram: no /dev/zram0 and modprobe zram failed: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	b, err := os.ReadFile(filepath.Join(sys, "disksize"))
	if err != nil {
		return matrixTarget{}, fmt.Errorf("zram: %w", err)
	}
	if strings.TrimSpace(string(b)) != "0" {
		return matrixTarget{}, errors.New("zram: /dev/zram0 is already set up (disksize is not 0), so something may be using it; reset it (echo 1 > /sys/block/zram0/reset) or name a target NAME=PATH")
	}
	if err := os.WriteFile(filepath.Join(sys, "disksize"), []byte(strconv.FormatInt(size, 10)), 0o644); err != nil {
		return matrixTarget{}, fmt.Errorf("zram: setting disksize: %w", err)
	}
	reset := func() error { return os.WriteFile(filepath.Join(sys, "reset"), []byte("1"), 0o644) }
	if err := fillRandom("/dev/zram0", size); err != nil {
		return matrixTarget{}, errors.Join(err, reset())
	}
	return matrixTarget{MatrixTarget: fio.MatrixTarget{Name: "zram", Path: "/dev/zram0",
		Desc: "/dev/zram0, " + sizeName(size) + " of random data"}, cleanup: reset}, nil
}

// setUpEmptyZram adds a zram device (zram-control's hot_add), sizes it
// and writes nothing: a read of a page never written returns zeros without
// decompressing, so what a read costs is the engine's and the kernel's
// path alone. It is reset and removed after.
func setUpEmptyZram(size int64) (matrixTarget, error) {
	if _, err := os.Stat("/sys/class/zram-control"); err != nil {
		if out, err := exec.Command("modprobe", "zram").CombinedOutput(); err != nil {
			return matrixTarget{}, fmt.Errorf("zram-empty: no zram-control and modprobe zram failed: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	dev, remove, err := zram.Add(size)
	if err != nil {
		return matrixTarget{}, fmt.Errorf("zram-empty: %w", err)
	}
	return matrixTarget{MatrixTarget: fio.MatrixTarget{Name: "zram-empty", Path: dev,
		Desc: dev + ", " + sizeName(size) + " never written (reads return zeros without decompressing)"}, cleanup: remove}, nil
}

func setUpLoop(dir string, size int64) (matrixTarget, error) {
	f, err := os.CreateTemp(dir, "iolab-calibrate-*.img")
	if err != nil {
		return matrixTarget{}, fmt.Errorf("loop: backing file: %w", err)
	}
	path := f.Name()
	f.Close()
	if err := fillRandom(path, size); err != nil {
		os.Remove(path)
		return matrixTarget{}, err
	}
	out, err := exec.Command("losetup", "-f", "--show", "--direct-io=on", path).Output()
	if err != nil {
		os.Remove(path)
		return matrixTarget{}, fmt.Errorf("loop: losetup: %w", err)
	}
	dev := strings.TrimSpace(string(out))
	desc := "a direct-I/O loop device over a file of " + sizeName(size) + " of random data in " + dir
	if onTmpfs(dir) {
		desc += " (tmpfs)"
	}
	return matrixTarget{MatrixTarget: fio.MatrixTarget{Name: "loop", Path: dev, Desc: desc}, cleanup: func() error {
		var errs []error
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", dev, err, out))
		}
		return errors.Join(append(errs, os.Remove(path))...)
	}}, nil
}

// sizeName is a target's size as the heading says it: 512 MiB, 1 GiB.
func sizeName(size int64) string {
	switch {
	case size >= 1<<30 && size%(1<<30) == 0:
		return strconv.FormatInt(size>>30, 10) + " GiB"
	case size >= 1<<20 && size%(1<<20) == 0:
		return strconv.FormatInt(size>>20, 10) + " MiB"
	}
	return strconv.FormatInt(size, 10) + " bytes"
}

// fillRandom writes size bytes of random data to path: incompressible,
// so that zram stores every page and reads decompress real data.
func fillRandom(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		rand.Read(buf)
		n := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return fmt.Errorf("filling %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
