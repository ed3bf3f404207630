package fio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/units"
	"iolab/bench/verify"
)

// verifyOptions are fio's data verification options (options.c, group
// FIO_OPT_G_VERIFY), with fio 3.33's limits: verify_interval at least
// twice the header, verify_offset at least one header.
var verifyOptions = []bench.OptionSpec{
	{Name: "verify", Example: "crc32c", Unit: "method", Default: "0",
		Help: "write a checksummed header into every block and read it back to check: 0, " + strings.Join(verify.Names(), ", "),
		Set: func(j *bench.Job, v string) error {
			if v == "0" {
				j.Verify, j.VerifySet = "", true
				return nil
			}
			if _, ok := verify.Lookup(v); ok {
				j.Verify, j.VerifySet = v, true
				return nil
			}
			if slices.Contains(verify.Refused, v) {
				return fmt.Errorf("%q: iolab does not do fio's verify=%s (use one of %s)", v, v, strings.Join(verify.Names(), ", "))
			}
			return fmt.Errorf("%q is not one of 0, %s", v, strings.Join(verify.Names(), ", "))
		},
		Get: func(j *bench.Job) string {
			if j.Verify == "" {
				return "0"
			}
			return j.Verify
		}},
	{Name: "do_verify", Example: "0", Unit: "bool", Default: "1", Help: "read back and check a write job's blocks once its writes are done",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.DoVerify }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.DoVerify })},
	{Name: "verify_only", Flag: true, Unit: "bool", Default: "0", Help: "do not write: read back and check what the write job would have written",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.VerifyOnly }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.VerifyOnly })},
	{Name: "verify_pattern", Example: "0xdeadbeef", Unit: "pattern",
		Help: `fill blocks with this pattern and check it (0x hex, decimal, "text", 'file'); alone, it means a header and the pattern`,
		Set: func(j *bench.Job, v string) error {
			if strings.Contains(v, "%o") {
				return fmt.Errorf("%q: iolab does not paste formats (%%o) into verify_pattern; give the bytes", v)
			}
			p, err := parseBufferPattern(v)
			if err != nil {
				return err
			}
			j.VerifyPattern = p
			if !j.VerifySet {
				j.Verify = "pattern_hdr" // fio's str_verify_pattern_cb: VERIFY_PATTERN
			}
			return nil
		}},
	{Name: "verify_interval", Example: "512", Unit: "size", Help: "a header every this many bytes of a block (default: the smallest write; at least 80)",
		Set: sizeBetween(80, 1<<30, "fio takes 80 bytes (twice the header) to 1g", func(j *bench.Job) *int64 { return &j.VerifyInterval }),
		Get: func(j *bench.Job) string { return units.FormatSize(j.VerifyInterval) }},
	{Name: "verify_offset", Example: "64", Unit: "size", Help: "put each header this many bytes into its interval (swapped with the data there; at least 40)",
		Set: sizeBetween(40, 1<<30, "fio takes at least 40 bytes (one header)", func(j *bench.Job) *int64 { return &j.VerifyOffset }),
		Get: func(j *bench.Job) string { return units.FormatSize(j.VerifyOffset) }},
	boolOption("verify_fatal", nil, "0", "stop checking a block at its first bad interval (the first bad block always fails the job)",
		func(j *bench.Job) *bool { return &j.VerifyFatal }),
	{Name: "verify_backlog", Example: "1024", Unit: "int", Help: "read back and check the blocks every this many writes, as the job goes",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseSize(v)
			if err == nil && n > 1<<40 {
				err = fmt.Errorf("%s is beyond any job's writes", v)
			}
			if err == nil {
				j.VerifyBacklog = n
			}
			return err
		},
		Get: func(j *bench.Job) string { return fmt.Sprint(j.VerifyBacklog) }},
	boolOption("verify_dump", nil, "0", "write a bad block's received and expected data to FILE.OFFSET.received/.expected",
		func(j *bench.Job) *bool { return &j.VerifyDump }),
	{Name: "verify_state_save", Example: "0", Unit: "bool", Default: "1", Help: "when a verifying write job ends or is stopped, write local-NAME-N-verify.state (fio's format)",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.VerifyStateSave }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.VerifyStateSave })},
	boolOption("verify_state_load", nil, "0", "with verify_only, read local-NAME-N-verify.state and check only what was written before it",
		func(j *bench.Job) *bool { return &j.VerifyStateLoad }),
	{Name: "verify_async", Example: "2", Unit: "int", Default: "0", Help: "check the blocks read back on this many threads of their own, so that the job's thread goes on reading",
		Set: func(j *bench.Job, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > 1024 {
				return fmt.Errorf("%q: a number of threads, 0 to 1024", v)
			}
			j.VerifyAsync = n
			return nil
		},
		Get: func(j *bench.Job) string { return strconv.Itoa(j.VerifyAsync) }},
	{Name: "verify_async_cpus", Example: "0-1", Unit: "cpus", Help: "the CPUs verify_async's threads may run on",
		Set: func(j *bench.Job, v string) error {
			cpus, err := parseCPUList(v)
			if err == nil {
				j.VerifyAsyncCPUs = cpus
			}
			return err
		}},
	boolOption("experimental_verify", nil, "0", "log no written block: read the writes back by replaying the job's offsets from its seeds, each write in its order",
		func(j *bench.Job) *bool { return &j.ExperimentalVerify }),
	// The verify trims (fio's FIO_OPT_G_TRIM; bench/verifytrim_linux.go).
	{Name: "trim_percentage", Example: "50", Unit: "int", Default: "0", Help: "share of a verifying trimwrite job's logged writes (0-100%) put on a list to trim, with trim_backlog",
		Set: intBetween(0, 100, "fio takes 0 to 100", func(j *bench.Job) *int { return &j.TrimPercentage }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.TrimPercentage) }},
	{Name: "trim_backlog", Example: "16", Unit: "int", Default: "0", Help: "every this many logged writes, trim listed blocks (trim_backlog_batch of them, and one more, as fio 3.33 does)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseSize(v)
			if err == nil && (n < 0 || n > 1<<40) {
				err = fmt.Errorf("%s is beyond any job's writes", v)
			}
			if err == nil {
				j.TrimBacklog = n
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.FormatInt(j.TrimBacklog, 10) }},
	{Name: "trim_backlog_batch", Example: "4", Unit: "int", Default: "0", Help: "blocks trimmed in a row after the first of each trim_backlog (0: trim_backlog)",
		Set: intBetween(0, 1<<31-1, "a number of blocks", func(j *bench.Job) *int { return &j.TrimBacklogBatch }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.TrimBacklogBatch) }},
	{Name: "trim_verify_zero", Example: "0", Unit: "bool", Default: "1", Help: "the verify phase reads trimmed blocks back and fails unless they are zeros (0: it skips them)",
		Set: func(j *bench.Job, v string) error {
			var zero bool
			if err := bench.BoolField(func(*bench.Job) *bool { return &zero })(j, v); err != nil {
				return err
			}
			j.TrimSkipZero = !zero
			return nil
		},
		Get: func(j *bench.Job) string {
			if j.TrimSkipZero {
				return "0"
			}
			return "1"
		}},
}

// intBetween sets an int option that must lie in [lo, hi], saying why
// when it does not.
func intBetween(lo, hi int, why string, field func(*bench.Job) *int) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q: %s", v, why)
		}
		*field(j) = n
		return nil
	}
}

// sizeBetween sets a size option that must lie in [lo, hi], saying why
// when it does not.
func sizeBetween(lo, hi int64, why string, field func(*bench.Job) *int64) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		n, err := units.ParseSize(v)
		if err == nil && (n < lo || n > hi) {
			err = fmt.Errorf("%s: %s", v, why)
		}
		if err == nil {
			*field(j) = n
		}
		return err
	}
}
