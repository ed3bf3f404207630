// Package bench runs fio-style block-I/O benchmarks with iolab's own
// in-process engines (io_uring, libaio, psync and null) and measures them the
// way fio does: per-I/O latencies go into fio's log-linear histogram, so
// percentiles agree with fio's and histograms merge across jobs.
//
// bench is a leaf: it imports only the standard library and
// golang.org/x/sys/unix, and knows nothing of HTTP or SQL.
package bench
