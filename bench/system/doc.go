// Package system reads the running machine for the benchmarks: host and
// CPU information, NUMA nodes, /proc/diskstats and CPU times around a step,
// block devices and their I/O schedulers in /sys (and the switch of a
// scheduler for a step), what a target is and whether it is safe to
// write, and the per-device locks that keep two iolab runs off one device.
//
// Its readers take their roots from an FS, so tests run them on fixtures
// under testdata/; the types are on every platform, the readers on Linux.
package system
