// Package blocktrace records how the block layer handled a run's I/Os: for
// each bio on the traced devices, when it was queued (btt's Q), given a
// request (G), inserted into the I/O scheduler (I), issued to the driver
// (D) and completed (C), with the merges and splits between bios and
// requests, from the kernel's block tracepoints through BPF programs
// (tracer_linux.go) and matched into one timing per bio as btt matches
// blktrace's events (match.go). It imports nothing of iolab: bench joins
// the timings with its own I/Os.
package blocktrace
