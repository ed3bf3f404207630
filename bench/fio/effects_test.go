package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// No option iolab accepts may be a no-op: for every option in the tables
// (AllOptions, engines' included), an effect probe shows that it changes
// what a job does — its system calls, the bytes on the device, the
// offsets, the timing, the results — or that it is refused where iolab
// cannot do what fio would. A family's probes live beside its options
// (effects_*_test.go) and register in effects from an init func.

// effect is one option's probe.
type effect func(t *testing.T)

var effects = map[string]effect{}

// TestEveryOptionHasAnEffect walks the option tables. Under
// IOLAB_EFFECTS_SHARD=k/n it runs the probes of every n-th option from
// the k-th (0-based) and names the shards that run the rest: .ci/test
// runs two shards side by side, in two processes, as the probes mostly
// wait (on fio, devices and timers) and some change the process (its
// working directory, environment, threads), so they cannot run in
// parallel in one.
func TestEveryOptionHasAnEffect(t *testing.T) {
	shard, shards := effectsShard(t)
	seen := map[string]bool{}
	ran, all := 0, 0
	for _, o := range AllOptions() {
		if seen[o.Name] {
			continue
		}
		seen[o.Name] = true
		probe, ok := effects[o.Name]
		if !ok {
			t.Errorf("option %s has no effect probe (add one to effects, or refuse the option)", o.Name)
			continue
		}
		all++
		if (all-1)%shards != shard {
			continue
		}
		ran++
		t.Run(o.Name, probe)
	}
	if shards > 1 {
		t.Logf("shard %d/%d: %d of the %d probes; the others run with IOLAB_EFFECTS_SHARD=k/%d for every other k below %d", shard, shards, ran, all, shards, shards)
	}
}

// effectsShard reads IOLAB_EFFECTS_SHARD ("k/n", 0 <= k < n <= 16): the
// shard k of n this process runs; 0 of 1 when it is not set.
func effectsShard(t *testing.T) (k, n int) {
	v := os.Getenv("IOLAB_EFFECTS_SHARD")
	if v == "" {
		return 0, 1
	}
	if _, err := fmt.Sscanf(v, "%d/%d", &k, &n); err != nil || n < 1 || n > 16 || k < 0 || k >= n || fmt.Sprintf("%d/%d", k, n) != v {
		t.Fatalf("IOLAB_EFFECTS_SHARD=%q: want k/n, 0 <= k < n <= 16 (e.g. 0/2)", v)
	}
	return k, n
}

// TestMain lets a probe run a job in a child process (under strace, or
// to watch its threads): with IOLAB_EFFECT_JOB=1 the test binary parses
// its arguments as `iolab run` would, runs them and prints the JSON
// report.
func TestMain(m *testing.M) {
	if os.Getenv("IOLAB_EFFECT_JOB") == "1" {
		cfg, err := ParseArgs(os.Args[1:])
		if err == nil {
			var res *bench.Result
			res, err = (&bench.Runner{Sys: system.FS{}}).Run(context.Background(), cfg)
			if res != nil {
				json.NewEncoder(os.Stdout).Encode(NewReport(res, cfg, true))
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// run parses args and runs the job in this process.
func run(t *testing.T, args ...string) *bench.Result {
	t.Helper()
	_, res, err := runArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runErr parses and runs args and returns the error that refuses them.
func runErr(t *testing.T, args ...string) error {
	t.Helper()
	cfg, err := ParseArgs(args)
	if err != nil {
		return err
	}
	_, err = (&bench.Runner{Sys: system.FS{}}).Run(context.Background(), cfg)
	return err
}

// traced runs a job in a child process under strace and returns the
// traced calls, one line each, with their arguments.
// clockNotChecked keeps a traced iolab on the monotonic clock: choosing
// the TSC checks that the CPUs' counters are in step (bench/tsc), pinning
// a thread to each CPU in turn, which a trace of the job's affinity would
// count as the job's.
const clockNotChecked = "IOLAB_CLOCK=clock_gettime"

func traced(t *testing.T, calls string, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-e", "trace=" + calls, "-e", "signal=none", "-o", out, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "IOLAB_EFFECT_JOB=1")
	if strings.Contains(calls, "sched_setaffinity") {
		cmd.Env = append(cmd.Env, clockNotChecked)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%.2000s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return namedReopens(strings.Split(strings.TrimSpace(string(b)), "\n"))
}

// oPathOpen is a name the write guard looked up (O_PATH) and the
// descriptor it got; proc is its reopen for I/O through /proc/self/fd.
var (
	oPathOpen  = regexp.MustCompile(`openat\(AT_FDCWD, ("[^"]*"), [A-Z_|]*O_PATH[A-Z_|]*\) = (\d+)`)
	procReopen = regexp.MustCompile(`"/proc/self/fd/(\d+)"`)
)

// namedReopens writes each open through /proc/self/fd/N with the name
// the guard looked N up by: the guard opens for I/O exactly what it
// checked, and the flags a job opens its file with are that open's.
func namedReopens(lines []string) []string {
	names := map[string]string{}
	for i, l := range lines {
		if m := oPathOpen.FindStringSubmatch(l); m != nil {
			names[m[2]] = m[1]
			continue
		}
		lines[i] = procReopen.ReplaceAllStringFunc(l, func(s string) string {
			if name, ok := names[procReopen.FindStringSubmatch(s)[1]]; ok {
				return name
			}
			return s
		})
	}
	return lines
}

// count counts the lines of a trace that match pattern.
func count(lines []string, pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// file makes a scratch file of size bytes for a probe.
func file(t *testing.T, size int64) string {
	t.Helper()
	return testdev.TempFile(t, size)
}

func job(r *bench.Result) *bench.JobResult { return &r.Groups[0].Jobs[0] }

func ios(r *bench.Result) uint64 {
	j := job(r)
	return j.Dirs[bench.Read].IOs + j.Dirs[bench.Write].IOs
}

// offsets are the offsets of a job's I/O system calls of bs bytes, in
// order (pread64 and pwrite64's fourth argument), from a trace; the
// dynamic loader's own reads are of other sizes.
func offsets(lines []string, bs int) []int64 {
	re := regexp.MustCompile(`p(?:read|write)64\(\d+, .*, (\d+), (\d+)\)`)
	var out []int64
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil && m[1] == strconv.Itoa(bs) {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			out = append(out, n)
		}
	}
	return out
}

func refused(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), what) {
		t.Fatalf("err %v; want it refused, saying %q", err, what)
	}
}

func init() {
	// base is a psync job on a scratch file; the file and engine are
	// global, so further --name jobs get them too.
	base := func(t *testing.T, extra ...string) []string {
		return append([]string{"--filename=" + file(t, 1<<20), "--ioengine=psync", "--name=e"}, extra...)
	}
	effects["name"] = func(t *testing.T) {
		if got := job(run(t, "--filename="+file(t, 1<<20), "--name=other")).Name; got != "other" {
			t.Errorf("job name %q", got)
		}
	}
	effects["description"] = func(t *testing.T) {
		r := run(t, base(t, "--description=a note on the job")...)
		var b bytes.Buffer
		if err := WriteNormal(&b, r, nil); err != nil || !strings.Contains(b.String(), "a note on the job") {
			t.Errorf("the normal output does not show the description:\n%s", b.String())
		}
	}
	effects["filename"] = func(t *testing.T) {
		a, b := file(t, 1<<20), file(t, 1<<20)
		run(t, "--name=e", "--filename="+b, "--rw=write", "--ioengine=psync")
		if da, _ := os.ReadFile(a); !bytes.Equal(da, make([]byte, len(da))) {
			t.Error("the other file was written")
		}
		if db, _ := os.ReadFile(b); bytes.Equal(db, make([]byte, len(db))) {
			t.Error("the named file was not written")
		}
	}
	effects["rw"] = func(t *testing.T) {
		r := run(t, base(t, "--rw=write")...)
		if j := job(r); j.Dirs[bench.Write].IOs == 0 || j.Dirs[bench.Read].IOs != 0 {
			t.Errorf("rw=write did %d reads, %d writes", j.Dirs[bench.Read].IOs, j.Dirs[bench.Write].IOs)
		}
	}
	mix := func(name, v string, wantReadShare float64) effect {
		return func(t *testing.T) {
			r := run(t, base(t, "--rw=randrw", "--"+name+"="+v, "--size=1m", "--bs=512", "--io_size=8m")...)
			j := job(r)
			share := float64(j.Dirs[bench.Read].IOs) / float64(j.Dirs[bench.Read].IOs+j.Dirs[bench.Write].IOs)
			if share < wantReadShare-0.05 || share > wantReadShare+0.05 {
				t.Errorf("%s=%s: %.2f of I/Os read, want %.2f", name, v, share, wantReadShare)
			}
		}
	}
	effects["rwmixread"] = mix("rwmixread", "80", 0.8)
	effects["rwmixwrite"] = mix("rwmixwrite", "80", 0.2)
	effects["bs"] = func(t *testing.T) {
		r := run(t, base(t, "--bs=64k")...)
		if j := job(r); j.Dirs[bench.Read].IOs != 16 || j.Dirs[bench.Read].Bytes != 1<<20 {
			t.Errorf("bs=64k over 1 MiB: %d I/Os, %d bytes", j.Dirs[bench.Read].IOs, j.Dirs[bench.Read].Bytes)
		}
	}
	effects["size"] = func(t *testing.T) {
		if b := job(run(t, base(t, "--size=256k")...)).Dirs[bench.Read].Bytes; b != 256<<10 {
			t.Errorf("size=256k moved %d bytes", b)
		}
	}
	effects["io_size"] = func(t *testing.T) {
		if b := job(run(t, base(t, "--io_size=3m")...)).Dirs[bench.Read].Bytes; b != 3<<20 {
			t.Errorf("io_size=3m over a 1 MiB file moved %d bytes", b)
		}
	}
	effects["offset"] = func(t *testing.T) {
		offs := offsets(traced(t, "pread64", base(t, "--offset=512k", "--size=64k", "--bs=64k")...), 64<<10)
		if !slices.Equal(offs, []int64{512 << 10}) {
			t.Errorf("offset=512k: reads at %v", offs)
		}
	}
	effects["iodepth"] = func(t *testing.T) {
		// libaio reaps one completion per io_getevents once the queue is
		// full; at iodepth 1 it waits after every I/O, at 8 it first
		// fills 8: the first io_getevents comes after 8 io_submits.
		lines := traced(t, "io_submit,io_getevents", "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--iodepth=8", "--size=64k")
		first := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "io_getevents") })
		if first != 8 {
			t.Errorf("iodepth=8: first reap after %d calls:\n%s", first, strings.Join(lines, "\n"))
		}
	}
	effects["ioengine"] = func(t *testing.T) {
		lines := traced(t, "io_uring_enter,io_submit,pread64", "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--size=64k")
		if count(lines, "io_submit") != 16 || count(lines, "io_uring_enter") != 0 {
			t.Errorf("ioengine=libaio:\n%s", strings.Join(lines, "\n"))
		}
	}
	effects["direct"] = func(t *testing.T) {
		f := file(t, 1<<20)
		lines := traced(t, "openat", "--name=e", "--filename="+f, "--direct=1", "--size=64k")
		if count(lines, regexp.QuoteMeta(f)+`".*O_DIRECT`) == 0 {
			t.Errorf("direct=1 did not open with O_DIRECT:\n%s", strings.Join(lines, "\n"))
		}
	}
	effects["runtime"] = func(t *testing.T) {
		r := run(t, base(t, "--runtime=300ms", "--time_based")...)
		if d := job(r).Runtime; d < 250*time.Millisecond || d > time.Second {
			t.Errorf("runtime=300ms ran %v", d)
		}
	}
	effects["time_based"] = func(t *testing.T) {
		if b := job(run(t, base(t, "--runtime=200ms", "--time_based")...)).Dirs[bench.Read].Bytes; b <= 1<<20 {
			t.Errorf("time_based moved %d bytes, no more than the file", b)
		}
	}
	effects["ramp_time"] = func(t *testing.T) {
		r := run(t, base(t, "--runtime=200ms", "--time_based", "--ramp_time=300ms")...)
		if j := job(r); j.Moved[bench.Read] <= j.Dirs[bench.Read].Bytes {
			t.Errorf("ramp_time: %d bytes moved, %d measured; the ramp's I/O must not be measured", j.Moved[bench.Read], j.Dirs[bench.Read].Bytes)
		}
	}
	effects["numjobs"] = func(t *testing.T) {
		if n := len(run(t, base(t, "--numjobs=3")...).Groups[0].Jobs); n != 3 {
			t.Errorf("numjobs=3: %d job results", n)
		}
	}
	effects["group_reporting"] = func(t *testing.T) {
		if j := run(t, base(t, "--numjobs=3", "--group_reporting")...).Groups[0].Jobs; len(j) != 1 || j[0].Jobs != 3 {
			t.Errorf("group_reporting: %d results", len(j))
		}
	}
	effects["stonewall"] = func(t *testing.T) {
		r := run(t, append(base(t, "--runtime=200ms", "--time_based"), "--name=f", "--stonewall")...)
		if len(r.Groups) != 2 || !r.Groups[1].Jobs[0].Start.After(r.Groups[0].Jobs[0].Start.Add(150*time.Millisecond)) {
			t.Errorf("stonewall: the second job did not wait for the first")
		}
	}
	effects["new_group"] = func(t *testing.T) {
		r := run(t, append(base(t, "--runtime=200ms", "--time_based"), "--name=f", "--new_group")...)
		if len(r.Groups) != 2 || r.Groups[1].Jobs[0].Start.Sub(r.Groups[0].Jobs[0].Start) > 100*time.Millisecond {
			t.Errorf("new_group: two groups that run together, got %d groups", len(r.Groups))
		}
	}
	randOffsets := func(t *testing.T, extra ...string) []int64 {
		return offsets(traced(t, "pread64", append([]string{"--name=e", "--filename=" + file(t, 1<<20), "--rw=randread", "--size=64k"}, extra...)...), 4096)
	}
	effects["randrepeat"] = func(t *testing.T) {
		if a, b := randOffsets(t), randOffsets(t); !slices.Equal(a, b) {
			t.Error("randrepeat=1 (the default): two runs chose different offsets")
		}
		if a, b := randOffsets(t, "--randrepeat=0"), randOffsets(t, "--randrepeat=0"); slices.Equal(a, b) {
			t.Error("randrepeat=0: two runs chose the same offsets")
		}
	}
	effects["randseed"] = func(t *testing.T) {
		if a, b := randOffsets(t, "--randrepeat=0", "--randseed=1"), randOffsets(t, "--randrepeat=0", "--randseed=2"); slices.Equal(a, b) {
			t.Error("two seeds chose the same offsets")
		}
		if a, b := randOffsets(t, "--randrepeat=0", "--randseed=1"), randOffsets(t, "--randrepeat=0", "--randseed=1"); !slices.Equal(a, b) {
			t.Error("one seed, two runs: different offsets")
		}
		// fio 3.33 seeds before randseed overrides randrepeat: with
		// randrepeat the offsets stay, the other sources move (here
		// randrw's reads and writes).
		ops := func(seed string) string {
			lines := traced(t, "pread64,pwrite64", "--name=e", "--filename="+file(t, 1<<20), "--rw=randrw", "--size=64k", "--randseed="+seed)
			var b strings.Builder
			for _, l := range lines {
				if strings.Contains(l, ", 4096, ") {
					b.WriteString(l[:6])
				}
			}
			return b.String()
		}
		if ops("1") == ops("2") {
			t.Error("two seeds chose the same reads and writes")
		}
	}
	effects["norandommap"] = func(t *testing.T) {
		dup := func(offs []int64) bool {
			s := slices.Clone(offs)
			slices.Sort(s)
			return len(slices.Compact(s)) < len(offs)
		}
		if dup(randOffsets(t, "--size=1m")) {
			t.Error("with the random map a block was read twice in one pass")
		}
		if !dup(randOffsets(t, "--size=1m", "--norandommap")) {
			t.Error("norandommap: 256 random blocks of 256 and none twice")
		}
	}
	effects["cpus_allowed"] = func(t *testing.T) {
		lines := traced(t, "sched_setaffinity", base(t, "--cpus_allowed=1", "--size=64k")...)
		if count(lines, `sched_setaffinity\(0, \d+, \[1\]\)`) == 0 {
			t.Errorf("cpus_allowed=1 set no affinity:\n%s", strings.Join(lines, "\n"))
		}
	}
	batch := func(extra []string, check func(t *testing.T, submits, reaps int)) effect {
		return func(t *testing.T) {
			lines := traced(t, "io_submit,io_getevents", append([]string{"--name=e", "--filename=" + file(t, 1<<20),
				"--ioengine=libaio", "--iodepth=8", "--size=1m", "--bs=4k"}, extra...)...)
			check(t, count(lines, "io_submit"), count(lines, "io_getevents"))
		}
	}
	effects["iodepth_batch"] = batch([]string{"--iodepth_batch=4", "--iodepth_batch_complete_min=4"}, func(t *testing.T, s, r int) {
		if s > 256/4+2 {
			t.Errorf("iodepth_batch=4: %d io_submit for 256 I/Os", s)
		}
	})
	effects["iodepth_batch_complete_min"] = batch([]string{"--iodepth_batch_complete_min=4"}, func(t *testing.T, s, r int) {
		if r > 256/4+2 {
			t.Errorf("iodepth_batch_complete_min=4: %d io_getevents for 256 I/Os", r)
		}
	})
	effects["iodepth_batch_complete_max"] = func(t *testing.T) {
		// A reap takes at most complete_max: at most 1 by default, so
		// io_getevents returns 1; with 8 it may return several.
		lines := traced(t, "io_getevents", "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--iodepth=8", "--size=1m",
			"--iodepth_batch_complete_max=8")
		if count(lines, `io_getevents\(\S+, 1, 8,`) == 0 {
			t.Errorf("iodepth_batch_complete_max=8: no io_getevents asked for up to 8:\n%.2000s", strings.Join(lines, "\n"))
		}
	}
	effects["iodepth_low"] = func(t *testing.T) {
		// Once full, reap down to iodepth_low before queueing again: two
		// io_getevents in a row.
		lines := traced(t, "io_submit,io_getevents", "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--iodepth=8",
			"--size=256k", "--iodepth_low=4")
		run := 0
		for i := 1; i < len(lines); i++ {
			if strings.Contains(lines[i], "io_getevents") && strings.Contains(lines[i-1], "io_getevents") {
				run++
			}
		}
		if run == 0 {
			t.Errorf("iodepth_low=4: never reaped twice in a row:\n%s", strings.Join(lines, "\n"))
		}
	}
	effects["percentile_list"] = func(t *testing.T) {
		r := run(t, base(t, "--percentile_list=12.5:99.25")...)
		cfg, _ := ParseArgs(base(t, "--percentile_list=12.5:99.25"))
		b, _ := json.Marshal(NewReport(r, cfg, false))
		if !strings.Contains(string(b), `"12.500000"`) || !strings.Contains(string(b), `"99.250000"`) {
			t.Errorf("percentile_list: the report lacks the percentiles: %.500s", b)
		}
	}
	effects["allow_mounted_write"] = func(t *testing.T) {
		testdev.NeedLoopTools(t, "mkfs.ext4", "mount")
		dev := testdev.Loop(t, 32<<20)
		testdev.Run(t, "mkfs.ext4", "-q", dev)
		testdev.MountTemp(t, dev)
		args := []string{"--name=e", "--filename=" + dev, "--rw=write", "--size=64k", "--offset=16m", "--ioengine=psync"}
		refused(t, runErr(t, args...), "mounted")
		if err := runErr(t, append(args, "--allow_mounted_write=1")...); err != nil {
			t.Errorf("allow_mounted_write=1: %v", err)
		}
	}
	effects["io_submit_mode"] = func(t *testing.T) {
		// inline is how iolab submits by default: the job's own thread,
		// each I/O as it is queued (fio's iodepth_batch=1), as without it.
		args := []string{"--name=e", "--filename=" + file(t, 1<<20), "--ioengine=libaio", "--iodepth=4", "--size=256k"}
		submitters := func(trace []string) map[string]int {
			by := map[string]int{}
			for _, l := range trace {
				if pid, _, ok := strings.Cut(l, " "); ok && strings.Contains(l, "io_submit(") {
					by[pid]++
				}
			}
			return by
		}
		with, without := traced(t, "io_submit", append(args, "--io_submit_mode=inline")...), traced(t, "io_submit", args...)
		if n, m := count(with, `io_submit\(`), count(without, `io_submit\(`); n != m || n < 64 || len(submitters(with)) != 1 {
			t.Errorf("io_submit_mode=inline: %d io_submit calls from %d threads; without it %d; want 64 from the job's thread", n, len(submitters(with)), m)
		}
		// offload: iodepth submit workers, each with an aio context of its
		// own set up for one I/O, each submitting one I/O per call.
		off := traced(t, "io_setup,io_submit", append(args, "--io_submit_mode=offload")...)
		if n, setups := count(off, `io_submit\(`), count(off, `io_setup\(1,`); n != 64 || setups != 4 {
			t.Errorf("io_submit_mode=offload: %d io_submit calls and %d io_setup(1, …); want 64 and one per worker, 4", n, setups)
		}
		if by := submitters(off); len(by) < 2 || len(by) > 4 {
			t.Errorf("io_submit_mode=offload: io_submit from %d threads %v, want from the workers, at most iodepth=4 of them", len(by), by)
		}
		refused(t, runErr(t, append(args, "--io_submit_mode=offload", "--ioengine=io_uring")...), "io_submit_mode=offload")
		refused(t, runErr(t, append(args, "--io_submit_mode=threads")...), "not one of inline, offload")
	}
	effects["thread"] = func(t *testing.T) {
		run(t, base(t, "--thread")...)
		refused(t, runErr(t, base(t, "--thread=0")...), "thread")
	}
	effects["kb_base"] = func(t *testing.T) {
		run(t, base(t, "--kb_base=1024")...)
		refused(t, runErr(t, base(t, "--kb_base=1000")...), "1024")
	}
	uring := func(extra ...string) []string {
		return append([]string{"--name=e", "--ioengine=io_uring", "--size=64k"}, extra...)
	}
	effects["hipri"] = func(t *testing.T) {
		// The machine's devices have no poll queues: the job is refused,
		// saying so; without hipri it runs.
		f := file(t, 1<<20)
		run(t, uring("--filename="+f, "--direct=1")...)
		refused(t, runErr(t, uring("--filename="+f, "--direct=1", "--hipri")...), "poll")
	}
	effects["sqthread_poll"] = func(t *testing.T) {
		lines := traced(t, "io_uring_setup", uring("--filename="+file(t, 1<<20), "--sqthread_poll")...)
		if count(lines, "IORING_SETUP_SQPOLL") == 0 {
			t.Errorf("sqthread_poll: no SQPOLL ring:\n%s", strings.Join(lines, "\n"))
		}
	}
	effects["sqthread_poll_cpu"] = func(t *testing.T) {
		lines := traced(t, "io_uring_setup", uring("--filename="+file(t, 1<<20), "--sqthread_poll", "--sqthread_poll_cpu=1")...)
		if count(lines, "IORING_SETUP_SQ_AFF") == 0 || count(lines, "sq_thread_cpu=0x1,") == 0 {
			t.Errorf("sqthread_poll_cpu=1: no SQ_AFF on CPU 1:\n%s", strings.Join(lines, "\n"))
		}
	}
	register := func(option, what string) effect {
		return func(t *testing.T) {
			lines := traced(t, "io_uring_register", uring("--filename="+file(t, 1<<20), "--"+option)...)
			if count(lines, what) == 0 {
				t.Errorf("%s: no %s registration:\n%s", option, what, strings.Join(lines, "\n"))
			}
		}
	}
	effects["fixedbufs"] = register("fixedbufs", "IORING_REGISTER_BUFFERS")
	effects["registerfiles"] = register("registerfiles", "IORING_REGISTER_FILES")
	effects["userspace_reap"] = func(t *testing.T) {
		args := []string{"--name=e", "--filename=" + file(t, 1<<20), "--ioengine=libaio", "--iodepth=4", "--size=256k",
			"--iodepth_batch_complete_min=0", "--iodepth_batch_complete_max=4"}
		if n := count(traced(t, "io_getevents", append(args, "--userspace_reap")...), "io_getevents"); n != 0 {
			t.Errorf("userspace_reap with complete_min=0: %d io_getevents, want none", n)
		}
		if n := count(traced(t, "io_getevents", args...), "io_getevents"); n == 0 {
			t.Error("without userspace_reap: no io_getevents")
		}
	}
}
