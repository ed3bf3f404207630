package system

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The FIEMAP ioctl's request, flag and structures' sizes, from
// include/uapi/linux/fiemap.h and fs.h.
const (
	fsIocFiemap         = 0xc020660b // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync      = 0x1        // FIEMAP_FLAG_SYNC: write dirty pages back first
	fiemapHeaderSize    = 32         // struct fiemap without its extents
	fiemapExtentSize    = 56         // struct fiemap_extent
	fiemapExtentsAtOnce = 512
)

// fiemapExtent mirrors struct fiemap_extent.
type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

// fiemapHead mirrors struct fiemap's fixed part.
type fiemapHead struct {
	Start, Length                  uint64
	Flags, Mapped, Count, Reserved uint32
}

// FileExtents is the extents of the regular file open as fd (path names
// it in errors), after its dirty pages are written back
// (FIEMAP_FLAG_SYNC), in file order. The caller opens it, as a job opens
// its files (the guard: the file checked, not whatever its name leads to
// now). A filesystem whose extents are not its device's addresses
// (btrfs: its own logical addresses, over one or several devices) is
// refused, as is one without FIEMAP.
func FileExtents(fd int, path string) ([]Extent, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("extents of %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("extents of %s: not a regular file", path)
	}
	var sf unix.Statfs_t
	if err := unix.Fstatfs(fd, &sf); err != nil {
		return nil, fmt.Errorf("extents of %s: %w", path, err)
	}
	if sf.Type == unix.BTRFS_SUPER_MAGIC {
		return nil, fmt.Errorf("extents of %s: it is on btrfs, whose extents are at btrfs's own addresses, not its devices'", path)
	}
	buf := make([]byte, fiemapHeaderSize+fiemapExtentSize*fiemapExtentsAtOnce)
	var out []Extent
	for start := uint64(0); ; {
		clear(buf)
		h := (*fiemapHead)(unsafe.Pointer(&buf[0]))
		h.Start, h.Length, h.Flags, h.Count = start, ^uint64(0)-start, fiemapFlagSync, fiemapExtentsAtOnce
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
			if errors.Is(e, unix.EOPNOTSUPP) || errors.Is(e, unix.ENOTTY) {
				return nil, fmt.Errorf("extents of %s: the filesystem does not map its files' extents (FIEMAP: %w)", path, e)
			}
			return nil, fmt.Errorf("extents of %s: FIEMAP: %w", path, e)
		}
		if h.Mapped == 0 {
			return out, nil
		}
		for i := range h.Mapped {
			e := (*fiemapExtent)(unsafe.Pointer(&buf[fiemapHeaderSize+fiemapExtentSize*int(i)]))
			out = append(out, Extent{Logical: e.Logical, Physical: e.Physical, Length: e.Length, Flags: e.Flags})
			if e.Flags&ExtentLast != 0 {
				return out, nil
			}
			start = e.Logical + e.Length
		}
	}
}
