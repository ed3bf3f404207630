package system

import "testing"

func TestHostInfoUnknown(t *testing.T) {
	full := HostInfo{Hostname: "box7", KernelRelease: "6.1.0", CPUModel: "AMD EPYC 7B13", CPUCount: 2, MemTotal: 8 << 30,
		Governor: "performance", IOMMU: IOMMUInfo{Mode: "translated", CmdlineFlags: []string{"iommu=on"}}}
	for _, tt := range []struct {
		name                                string
		h                                   HostInfo
		cpus, cpu, memory, iommu, iommuDesc string
		summary                             string
	}{
		{"recorded", full, "2", "2 × AMD EPYC 7B13, governor performance", "8.0 GiB", "translated", "translated (iommu=on)",
			"host box7, kernel 6.1.0, CPU 2 × AMD EPYC 7B13, governor performance, memory 8.0 GiB, IOMMU translated"},
		// A fio import: nothing but what --host and --kernel said.
		{"imported", HostInfo{Hostname: "box7"}, "unknown", "unknown", "unknown", "unknown", "unknown",
			"host box7, kernel unknown, CPU unknown, memory unknown, IOMMU unknown"},
		{"count only", HostInfo{CPUCount: 4}, "4", "4 CPUs, model unknown", "unknown", "unknown", "unknown",
			"host unknown, kernel unknown, CPU 4 CPUs, model unknown, memory unknown, IOMMU unknown"},
		{"model only", HostInfo{CPUModel: "Xeon"}, "unknown", "Xeon, count unknown", "unknown", "unknown", "unknown",
			"host unknown, kernel unknown, CPU Xeon, count unknown, memory unknown, IOMMU unknown"},
		// An IOMMU that is off is a fact, not an unknown.
		{"iommu off", HostInfo{IOMMU: IOMMUInfo{Mode: "off"}}, "unknown", "unknown", "unknown", "off", "off",
			"host unknown, kernel unknown, CPU unknown, memory unknown, IOMMU off"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			for _, c := range []struct{ what, got, want string }{
				{"CPUs", h.CPUs(), tt.cpus}, {"CPU", h.CPU(), tt.cpu}, {"Memory", h.Memory(), tt.memory},
				{"IOMMUMode", h.IOMMUMode(), tt.iommu}, {"IOMMUDesc", h.IOMMUDesc(), tt.iommuDesc}, {"Summary", h.Summary(), tt.summary},
			} {
				if c.got != c.want {
					t.Errorf("%s() = %q, want %q", c.what, c.got, c.want)
				}
			}
		})
	}
}
