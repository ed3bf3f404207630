package system

import (
	"fmt"
	"strconv"
	"strings"
)

// Unknown is how a host fact that was not recorded reads: a run imported
// from fio's output knows nothing of the machine's CPUs, memory or IOMMU,
// and zeros would read as facts ("0 CPUs", "IOMMU off").
const Unknown = "unknown"

// Known is s, or Unknown when it is empty.
func Known(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}

// CPUs is the number of CPUs, or Unknown.
func (h HostInfo) CPUs() string {
	if h.CPUCount <= 0 {
		return Unknown
	}
	return strconv.Itoa(h.CPUCount)
}

// CPU describes the processors: "2 × AMD EPYC 7B13, governor performance",
// saying which half is unknown when one is, or Unknown alone.
func (h HostInfo) CPU() string {
	var s string
	switch {
	case h.CPUCount <= 0 && h.CPUModel == "":
		return Unknown
	case h.CPUCount <= 0:
		s = h.CPUModel + ", count " + Unknown
	case h.CPUModel == "":
		s = h.CPUs() + " CPUs, model " + Unknown
	default:
		s = h.CPUs() + " × " + h.CPUModel
	}
	if h.Governor != "" {
		s += ", governor " + h.Governor
	}
	return s
}

// Memory is the memory size in GiB ("7.8 GiB"), or Unknown.
func (h HostInfo) Memory() string {
	if h.MemTotal <= 0 {
		return Unknown
	}
	return fmt.Sprintf("%.1f GiB", float64(h.MemTotal)/(1<<30))
}

// IOMMUMode is the IOMMU's mode (IOMMUInfo.Mode), or Unknown.
func (h HostInfo) IOMMUMode() string { return Known(h.IOMMU.Mode) }

// IOMMUDesc is the mode with the kernel command line's IOMMU flags:
// "translated (intel_iommu=on)", or Unknown.
func (h HostInfo) IOMMUDesc() string {
	if len(h.IOMMU.CmdlineFlags) == 0 {
		return h.IOMMUMode()
	}
	return h.IOMMUMode() + " (" + strings.Join(h.IOMMU.CmdlineFlags, " ") + ")"
}

// Summary is the host on one line, for the command line: "host box7,
// kernel 6.1.0, CPU 2 × AMD EPYC, memory 7.8 GiB, IOMMU off", each fact
// Unknown where it was not recorded.
func (h HostInfo) Summary() string {
	return fmt.Sprintf("host %s, kernel %s, CPU %s, memory %s, IOMMU %s",
		Known(h.Hostname), Known(h.KernelRelease), h.CPU(), h.Memory(), h.IOMMUMode())
}
