package blocktrace

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// member is where a struct keeps a field, from the kernel's BTF.
type member struct{ off, size int }

// kernelLayout is where the kernel's structs keep what the programs read
// (a raw tracepoint hands them the struct pointers, not a record): read
// from the running kernel's type information, never assumed.
type kernelLayout struct {
	rqQ, rqCmdFlags, rqDataLen, rqSector, rqBio  member // struct request
	qDisk                                        member // struct request_queue
	diskMajor, diskFirstMinor                    member // struct gendisk
	bioNext, bioBdev, bioOpf, bioSector, bioSize member // struct bio (bi_iter's)
	bdevDev                                      member // struct block_device
}

// errNoBTF: the kernel does not describe its types.
var errNoBTF = errors.New("this kernel has no BTF type information (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF), which iolab needs to read the block layer's requests: it cannot trace the block layer here")

// kernelLayoutOnce reads the layout once per process: parsing the
// kernel's BTF costs a few hundred milliseconds of CPU.
var kernelLayoutOnce = sync.OnceValues(loadKernelLayout)

func readKernelLayout() (kernelLayout, error) { return kernelLayoutOnce() }

func loadKernelLayout() (kernelLayout, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return kernelLayout{}, errNoBTF
		}
		return kernelLayout{}, fmt.Errorf("reading the kernel's BTF: %w", err)
	}
	var l kernelLayout
	var errs []error
	find := func(structName string, path ...string) member {
		var s *btf.Struct
		if err := spec.TypeByName(structName, &s); err != nil {
			errs = append(errs, fmt.Errorf("struct %s: %w", structName, err))
			return member{}
		}
		off := 0
		var typ btf.Type = s
		for _, name := range path {
			st, ok := btf.UnderlyingType(typ).(*btf.Struct)
			if !ok {
				errs = append(errs, fmt.Errorf("struct %s: %s is not a struct", structName, name))
				return member{}
			}
			found := false
			for _, m := range st.Members {
				if m.Name == name {
					off += int(m.Offset.Bytes())
					typ, found = m.Type, true
					break
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("struct %s has no member %s", structName, name))
				return member{}
			}
		}
		size, err := btf.Sizeof(typ)
		if err != nil {
			errs = append(errs, err)
		}
		return member{off, size}
	}
	l.rqQ = find("request", "q")
	l.rqCmdFlags = find("request", "cmd_flags")
	l.rqDataLen = find("request", "__data_len")
	l.rqSector = find("request", "__sector")
	l.rqBio = find("request", "bio")
	l.qDisk = find("request_queue", "disk")
	l.diskMajor = find("gendisk", "major")
	l.diskFirstMinor = find("gendisk", "first_minor")
	l.bioNext = find("bio", "bi_next")
	l.bioBdev = find("bio", "bi_bdev")
	l.bioOpf = find("bio", "bi_opf")
	l.bioSector = find("bio", "bi_iter", "bi_sector")
	l.bioSize = find("bio", "bi_iter", "bi_size")
	l.bdevDev = find("block_device", "bd_dev")
	if err := errors.Join(errs...); err != nil {
		return l, fmt.Errorf("this kernel's block structs differ from those iolab reads: %w", err)
	}
	return l, nil
}
