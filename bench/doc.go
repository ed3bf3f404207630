// Package bench runs fio-style block-I/O benchmarks with iolab's own
// in-process engines (io_uring, libaio, psync and null) and measures them the
// way fio does: per-I/O latencies go into fio's log-linear histogram, so
// percentiles agree with fio's and histograms merge across jobs.
//
// bench owns what reads or writes a Job while it runs: the job model, the
// runner, the job loop, the engines as jobs see them (each row's options as
// OptionSpecs, the Setup a job hands its engine, what its buffers hold),
// pacing, fio's log files and the results. What stands apart from jobs
// lives below it and imports nothing of it: engine (the ioengines, one file
// each, and their table), tsc (the CPU's time-stamp counter), randgen
// (fio's random generators and distributions), verify (fio's verify
// format), hist (fio's histogram), system (the running machine), guard
// (every open of a target) and units.
// docs/architecture.md says why each part lives where it does.
//
// bench is a leaf: it imports only the standard library,
// golang.org/x/sys/unix and its own sub-packages, and knows nothing of HTTP
// or SQL.
package bench
