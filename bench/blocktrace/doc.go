// Package blocktrace records how the block layer handled a run's I/Os: for
// each bio on the traced devices, when it was queued (btt's Q), given a
// request (G), inserted into the I/O scheduler (I), issued to the driver
// (D) and completed (C), with the merges, splits and requeues between
// bios and requests, from BPF programs on the kernel's raw block
// tracepoints (tracer_linux.go; the structs' layouts from the kernel's
// BTF, layout_linux.go) and paired into one timing per bio by the
// kernel's addresses of bios and requests (match.go); WriteBlktrace
// writes events in blktrace's format for btt and blkparse (blktrace's own
// relay files cannot be opened under kernel lockdown). It imports
// nothing of iolab: bench joins the timings with its own I/Os.
package blocktrace
