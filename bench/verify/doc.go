// Package verify is fio 3.33's data verification format, byte for byte:
// the verify= methods (the table kinds), the header every verify_interval
// of a write starts with, the checksums as fio computes them (sums.go),
// writing a block's verifiable data (Spec.Fill) and checking a block read
// back (Spec.Check, whose failure is an Error), and the data a write
// carries without verify (FillRandom, CopyPattern), which verify rebuilds
// to check it.
//
// It knows nothing of jobs or engines: bench resolves a job's verify
// options into a Spec (job_verify.go) and its loop decides what to verify
// and when (verify_linux.go, verify_state_linux.go: the written pieces,
// the backlog, the verify state files fio's verify_state_save writes).
package verify
