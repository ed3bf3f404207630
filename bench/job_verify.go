package bench

import (
	"fmt"
	"slices"
	"time"

	"iolab/bench/verify"
)

// VerifyOptions are fio's data verification options (options.c, the
// "verify" group): what a write puts in each block so that a read can
// tell it is intact, and when the reads are done.
type VerifyOptions struct {
	// Verify is the verify= method (verify.Kind.Name); "" is verify=0.
	Verify string `json:"verify,omitempty"`
	// VerifySet: verify was given (fio's fio_option_is_set), so that
	// verify_pattern does not turn it into verify=pattern.
	VerifySet      bool   `json:"-"`
	VerifyPattern  []byte `json:"verify_pattern,omitempty"`
	VerifyInterval int64  `json:"verify_interval,omitempty"` // bytes; 0: the smallest write
	VerifyOffset   int64  `json:"verify_offset,omitempty"`   // where in each interval the header is swapped to
	DoVerify       bool   `json:"do_verify"`                 // default true: read back after the writes
	VerifyOnly     bool   `json:"verify_only,omitempty"`     // do not write: only read back what the job would have written
	VerifyFatal    bool   `json:"verify_fatal,omitempty"`    // stop at a block's first bad interval
	VerifyBacklog  int64  `json:"verify_backlog,omitempty"`  // read back every N writes, as the job goes
	VerifyDump     bool   `json:"verify_dump,omitempty"`     // write the received and expected data of a bad block to files
	// VerifyStateSave writes the write phase's state (fio's
	// local-NAME-N-verify.state) when the job ends or is stopped;
	// VerifyStateLoad reads it, so verify_only checks only what was
	// written before the stop.
	VerifyStateSave bool `json:"verify_state_save"` // default true
	VerifyStateLoad bool `json:"verify_state_load,omitempty"`
	// VerifyAsync hands the checking of completed verify reads to this
	// many threads of their own, so that the job's thread goes on
	// submitting (fio's verify_async); VerifyAsyncCPUs pins them
	// (verify_async_cpus).
	VerifyAsync     int   `json:"verify_async,omitempty"`
	VerifyAsyncCPUs []int `json:"verify_async_cpus,omitempty"`
	// ExperimentalVerify logs no written block: the verify phase starts
	// the job's offsets over and replays its writes as reads (fio's
	// experimental_verify).
	ExperimentalVerify bool `json:"experimental_verify,omitempty"`
	// TrimPercentage of the logged writes go on a list of blocks to trim;
	// every TrimBacklog logged writes the job trims TrimBacklogBatch of
	// them in a row (0: TrimBacklog), and the verify phase reads a
	// trimmed block back as zeros, or skips it with TrimSkipZero (fio's
	// trim.c, trim_verify_zero=0). verifytrim_linux.go.
	TrimPercentage   int   `json:"trim_percentage,omitempty"`
	TrimBacklog      int64 `json:"trim_backlog,omitempty"`
	TrimBacklogBatch int   `json:"trim_backlog_batch,omitempty"`
	TrimSkipZero     bool  `json:"trim_skip_zero,omitempty"`
}

// defaultVerify are fio's defaults.
func defaultVerify() VerifyOptions { return VerifyOptions{DoVerify: true, VerifyStateSave: true} }

// VerifyResult is the verification a job did: its reads, reported apart
// from the measured I/O (fio reports them as the job's reads, with their
// own runtime, after the write phase's).
type VerifyResult struct {
	Method string `json:"method"`
	// Reads are the blocks read back and checked, with their latencies.
	Reads   DirResult     `json:"reads"`
	Runtime time.Duration `json:"runtime_ns"`
	// Failed is the first block that did not verify, nil when all did.
	Failed *verify.Error `json:"failed,omitempty"`
	// Stopped is set when a loaded verify state ended the checks before
	// the job's last write: the writes after it never happened.
	Stopped bool `json:"stopped_at_state,omitempty"`
	// Trimmed are the blocks trimmed after their write (trim_percentage
	// with trim_backlog); TrimmedRead: the verify phase read them back
	// as zeros (trim_verify_zero=1), else it left them out.
	Trimmed     uint64 `json:"trimmed,omitempty"`
	TrimmedRead bool   `json:"trimmed_read,omitempty"`
	// StateFile is the verify state written (verify_state_save).
	StateFile string `json:"state_file,omitempty"`
	// Threads are verify_async's checkers: the blocks each checked and
	// the CPU time it took, on threads other than the job's.
	Threads []VerifyThread `json:"threads,omitempty"`
}

// VerifyThread is one of verify_async's checking threads.
type VerifyThread struct {
	TID    int           `json:"tid"`
	Blocks uint64        `json:"blocks"`
	CPU    time.Duration `json:"cpu_ns"`         // user and system time of the thread
	CPUs   []int         `json:"cpus,omitempty"` // the CPUs it was allowed (verify_async_cpus)
}

// ReportedDir is direction d as fio reports it, with its runtime: a write
// job's verify reads are its reads, timed by the verify phase alone
// (backend.c: update_runtime(td, elapsed_us, DDIR_READ) after do_verify).
func (r *JobResult) ReportedDir(d int) (*DirResult, time.Duration) {
	if d == Read && r.Verify != nil && r.Verify.Reads.IOs > 0 && r.Dirs[Read].IOs == 0 {
		return &r.Verify.Reads, r.Verify.Runtime
	}
	return &r.Dirs[d], r.Runtime
}

// Verifies reports whether the job verifies data at all.
func (j *Job) Verifies() bool { return j.Verify != "" }

// verifySpec resolves the job's verify options as fio's fixup_options
// does; nil when the job does not verify.
func (j *Job) verifySpec() *verify.Spec {
	k, ok := verify.Lookup(j.Verify)
	if j.Verify == verify.PatternHeader.Name {
		k, ok = verify.PatternHeader, true
	}
	if !ok {
		return nil
	}
	v := &verify.Spec{Kind: k, Offset: int(j.VerifyOffset), Pattern: j.VerifyPattern, Fatal: j.VerifyFatal, Dump: j.VerifyDump}
	v.Interval = int(j.VerifyInterval)
	minW, maxW := j.BlockSizes(Write)
	minR, _ := j.BlockSizes(Read)
	if v.Interval > int(minW) || v.Interval == 0 {
		v.Interval = int(minW)
	} else if j.Reads() && v.Interval > int(minR) {
		v.Interval = int(minR)
	}
	if int64(v.Interval) <= 0 || minW%int64(v.Interval) != 0 || maxW%int64(v.Interval) != 0 {
		v.Interval = int(gcd64(minW, maxW))
	}
	return v
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// CheckVerify refuses verify options that cannot work together, the way
// fio's populate_hdr fails a block too small for its header.
func (j *Job) CheckVerify() error {
	v := j.verifySpec()
	if v == nil {
		if j.VerifyOnly || j.VerifyBacklog > 0 || j.VerifyStateLoad || j.VerifyAsync > 0 || j.ExperimentalVerify {
			return fmt.Errorf("verify_only, verify_backlog, verify_state_load, verify_async and experimental_verify need a verify method (e.g. verify=crc32c)")
		}
		return nil
	}
	if e := j.Engine(); e != nil && e.Has(Diskless) {
		return fmt.Errorf("ioengine=%s moves no data: there is nothing to verify (fio pretends to; iolab refuses)", e.Name)
	}
	hs := v.Kind.HdrSize()
	if v.Interval <= hs {
		return fmt.Errorf("verify=%s needs intervals longer than its %d-byte header; verify_interval (or the block size) is %d", v.Kind.Name, hs, v.Interval)
	}
	if v.Kind.Name == "sha512" && v.Interval-hs < 128 {
		return fmt.Errorf("verify=sha512 needs at least 128 bytes of data after its %d-byte header; verify_interval is %d", hs, v.Interval)
	}
	if v.Offset > 0 && v.Offset+hs > v.Interval {
		return fmt.Errorf("verify_offset=%d: the %d-byte header does not fit in the %d-byte interval after it", v.Offset, hs, v.Interval)
	}
	if v.Kind.Name == "pattern" && len(v.Pattern) == 0 {
		return fmt.Errorf("verify=pattern needs a verify_pattern (e.g. verify_pattern=0xdeadbeef)")
	}
	if (j.VerifyAsync > 0 || j.ExperimentalVerify) && j.Writes() && !j.DoVerify {
		return fmt.Errorf("verify_async and experimental_verify are about reading a write job's blocks back: with do_verify=0 it reads none")
	}
	if len(j.VerifyAsyncCPUs) > 0 && j.VerifyAsync == 0 {
		return fmt.Errorf("verify_async_cpus pins verify_async's threads: give verify_async=N too")
	}
	if j.ExperimentalVerify {
		if err := j.checkExperimentalVerify(); err != nil {
			return err
		}
	}
	if err := j.checkVerifyTrims(); err != nil {
		return err
	}
	if j.Writes() && j.Reads() && (j.RW == "rw" || j.RW == "randrw") {
		return fmt.Errorf("rw=%s with verify: iolab verifies write jobs (read back after the writes, or every verify_backlog writes) and read jobs, not mixed ones", j.RW)
	}
	if j.DoVerify && j.Writes() && j.TimeBased && j.VerifyBacklog == 0 {
		return fmt.Errorf("verify with time_based: the verify phase would never start, the writes use all of runtime (as fio warns); add verify_backlog or drop time_based")
	}
	return nil
}

// checkExperimentalVerify refuses what experimental_verify cannot replay
// as fio 3.33 does: a random job whose offsets are drawn anew (fio does
// not reseed without randrepeat, and its replay reads other blocks and
// fails), and verify_backlog (fio's backlog reads the log of written
// blocks, which experimental_verify does not keep: it reads nothing).
func (j *Job) checkExperimentalVerify() error {
	minW, maxW := j.BlockSizes(Write)
	switch {
	case !j.Writes():
		return fmt.Errorf("experimental_verify replays a write job's writes as reads; a read job with verify checks every read as it is (rw=%s)", j.RW)
	case !j.RandRepeat && (j.Random() || minW != maxW):
		return fmt.Errorf("experimental_verify replays the job's random offsets and block sizes from their seeds: with randrepeat=0 fio 3.33 does not reseed them and reads other blocks than it wrote (and fails); drop randrepeat=0")
	case j.Loops > 1 || (j.IOSize > 0 && j.Size > 0 && j.IOSize > j.Size):
		return fmt.Errorf("experimental_verify over more than one pass (loops, io_size beyond size): iolab verifies once, after all of them, so its replay would read each block as often as it was written and fail; fio 3.33 verifies after each pass and counts the verify reads against io_size; drop loops or io_size")
	case j.VerifyBacklog > 0:
		return fmt.Errorf("experimental_verify keeps no log of written blocks, which verify_backlog reads back (fio 3.33 then verifies nothing as it goes); drop one of them")
	}
	return nil
}

// mergeVerify adds o's verification into a's for group_reporting, as the
// reads they are: counts and histograms add, the runtime is the longest,
// the first failure stays. a is not changed.
func mergeVerify(a, o *VerifyResult) *VerifyResult {
	switch {
	case o == nil:
		return a
	case a == nil:
		c := *o
		return &c
	}
	m := *a
	m.Reads.merge(&o.Reads)
	m.Runtime = max(m.Runtime, o.Runtime)
	m.Stopped = m.Stopped || o.Stopped
	m.Trimmed += o.Trimmed
	m.TrimmedRead = m.TrimmedRead || o.TrimmedRead
	m.Threads = append(slices.Clip(m.Threads), o.Threads...)
	if m.Failed == nil {
		m.Failed = o.Failed
	}
	return &m
}
