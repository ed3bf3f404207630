package fio

import "time"

func init() {
	// Which percentiles fio prints (slat and lat as well as clat) and
	// in how many figures: the options of the pacing family that shape
	// the output.
	goldenCases = append(goldenCases, goldenCase{
		name: "percentiles",
		jobFile: `[global]
ioengine=libaio
direct=1
bs=4k
iodepth=16
runtime=2
time_based

[reader]
filename=/dev/nvme0n1
rw=randread
lat_percentiles=1
slat_percentiles=1
percentile_list=50:99:99.9
significant_figures=6
`,
		jobs: []synthJob{{runtime: 2 * time.Second, read: load{ios: 123_457, clat: 250 * time.Microsecond, slat: 3 * time.Microsecond}}},
	})
}
