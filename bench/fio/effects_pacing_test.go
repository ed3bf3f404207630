package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// The pacing family's effect probes: rates and think time shape when
// I/Os go (counts over a runtime, gaps between system calls, sleeps in a
// trace), run control shapes when jobs start and stop, and the statistics
// options what the results and reports hold.

// psyncJob is a psync job on a fresh 1 MiB file, given to the jobs after
// it too.
func psyncJob(t *testing.T, extra ...string) []string {
	return append([]string{"--filename=" + file(t, 1<<20), "--ioengine=psync", "--name=p"}, extra...)
}

// aioJob is a libaio job of depth 4 on a fresh 1 MiB file.
func aioJob(t *testing.T, extra ...string) []string {
	return append([]string{"--filename=" + file(t, 1<<20), "--ioengine=libaio", "--iodepth=4", "--direct=1", "--name=a"}, extra...)
}

// within says how got misses want by more than frac, or nil.
func within(what string, got, want, frac float64) error {
	if math.Abs(got-want) > frac*want {
		return fmt.Errorf("%s: %.1f, want %.1f ± %.0f%%", what, got, want, 100*frac)
	}
	return nil
}

// eventually runs a timing check up to three times: a loaded machine can
// stall a job's thread for longer than the gaps measured, but not every
// time; an option without its effect fails every time.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	eventuallyN(t, 3, check)
}

// eventuallyN is eventually with tries tries.
func eventuallyN(t *testing.T, tries int, check func() error) {
	t.Helper()
	for try := 1; ; try++ {
		err := check()
		if err == nil {
			return
		}
		if try == tries {
			t.Fatal(err)
		}
		t.Logf("%v; again", err)
	}
}

// sleeps are the clock_nanosleep calls of a trace that sleep longer than
// min (the 1 µs ones measure the granularity).
func sleeps(lines []string, min time.Duration) int { return len(sleepRequests(lines, min)) }

// submitsBeforeSleep counts the io_submit calls before the first sleep
// longer than 1 ms.
func submitsBeforeSleep(lines []string) int {
	for i, l := range lines {
		if sleeps([]string{l}, time.Millisecond) > 0 {
			return count(lines[:i], "io_submit")
		}
	}
	return -1
}

// sleepRequests are how long the clock_nanosleep calls of a trace ask
// to sleep, those longer than min.
func sleepRequests(lines []string, min time.Duration) []time.Duration {
	re := regexp.MustCompile(`clock_nanosleep\(CLOCK_REALTIME, 0, \{tv_sec=(\d+), tv_nsec=(\d+)\}`)
	var out []time.Duration
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			s, _ := strconv.ParseInt(m[1], 10, 64)
			ns, _ := strconv.ParseInt(m[2], 10, 64)
			if d := time.Duration(s)*time.Second + time.Duration(ns); d > min {
				out = append(out, d)
			}
		}
	}
	return out
}

// nearMedian is the share of ds within a quarter of their median.
func nearMedian(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	med := s[len(s)/2]
	n := 0
	for _, d := range ds {
		if d > med*3/4 && d < med*5/4 {
			n++
		}
	}
	return float64(n) / float64(len(ds))
}

func reportJSON(t *testing.T, args ...string) string {
	t.Helper()
	cfg, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(NewReport(run(t, args...), cfg, true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirJSON is one direction of the first job of a report.
func dirJSON(t *testing.T, report, dir string) DirReport {
	t.Helper()
	var rep Report
	if err := json.Unmarshal([]byte(report), &rep); err != nil {
		t.Fatal(err)
	}
	if dir == "write" {
		return rep.Jobs[0].Write
	}
	return rep.Jobs[0].Read
}

func init() {
	// A rate over a second: a job stalled near its end by a loaded
	// machine misses it, and is tried again (eventually).
	effects["rate"] = func(t *testing.T) {
		eventually(t, func() error {
			j := job(run(t, psyncJob(t, "--rate=200k", "--runtime=1", "--time_based")...))
			return within("rate=200k: bytes/s", j.BW(bench.Read), 200<<10, 0.1)
		})
		// Per direction: reads at 200 KiB/s, writes at 40 KiB/s.
		eventually(t, func() error {
			j := job(run(t, psyncJob(t, "--rw=randrw", "--rate=200k,40k", "--runtime=1", "--time_based")...))
			return errors.Join(within("rate=200k,40k: read bytes/s", j.BW(bench.Read), 200<<10, 0.12),
				within("rate=200k,40k: write bytes/s", j.BW(bench.Write), 40<<10, 0.25))
		})
	}
	effects["rate_iops"] = func(t *testing.T) {
		eventually(t, func() error {
			j := job(run(t, psyncJob(t, "--rate_iops=100", "--runtime=1", "--time_based")...))
			return within("rate_iops=100: IOPS", j.IOPS(bench.Read), 100, 0.05)
		})
		// Writes capped, reads free: fio's rate_ddir sends a read while
		// the writes are ahead of their rate.
		eventually(t, func() error {
			j := job(run(t, psyncJob(t, "--rw=randrw", "--rate_iops=,20", "--runtime=500ms", "--time_based")...))
			if r := j.IOPS(bench.Read); r < 200 {
				return fmt.Errorf("rate_iops=,20: reads at %.0f IOPS, capped too", r)
			}
			return within("rate_iops=,20: write IOPS", j.IOPS(bench.Write), 20, 0.25)
		})
	}
	// rate_min and rate_iops_min end the job once, after fio's 2 s
	// settling, a rate_cycle falls short.
	effects["rate_min"] = func(t *testing.T) {
		err := runErr(t, psyncJob(t, "--rate_iops=100", "--rate_min=1m", "--rate_cycle=200", "--runtime=4", "--time_based")...)
		refused(t, err, "rate_min=1048576B/s not met")
	}
	effects["rate_iops_min"] = func(t *testing.T) {
		err := runErr(t, psyncJob(t, "--rate=400k", "--rate_iops_min=200", "--rate_cycle=200", "--runtime=4", "--time_based")...)
		refused(t, err, "rate_iops_min=200 not met")
	}
	effects["rate_cycle"] = func(t *testing.T) {
		eventually(t, func() error {
			err := runErr(t, psyncJob(t, "--rate=400k", "--rate_iops_min=1000", "--rate_cycle=500", "--runtime=4", "--time_based")...)
			refused(t, err, "rate_iops_min=1000")
			if !regexp.MustCompile(`over [5-9]\d\d ms`).MatchString(err.Error()) {
				return fmt.Errorf("rate_cycle=500: the rate was not checked over 500 ms: %v", err)
			}
			return nil
		})
	}
	effects["rate_process"] = func(t *testing.T) {
		// The waits a rate asks for: all about one period apart when
		// linear; spread like the exponential gaps when poisson. They are
		// the schedule's, which a loaded machine does not blur as it
		// blurs the times of the reads.
		args := psyncJob(t, "--rate_iops=25", "--runtime=1200ms", "--time_based")
		eventually(t, func() error {
			linear := nearMedian(sleepRequests(traced(t, "clock_nanosleep", args...), time.Millisecond))
			poisson := nearMedian(sleepRequests(traced(t, "clock_nanosleep", append(args, "--rate_process=poisson")...), time.Millisecond))
			if linear < 0.7 || poisson > 0.45 {
				return fmt.Errorf("waits within a quarter of their median: %.2f linear (want most), %.2f poisson (want few)", linear, poisson)
			}
			return nil
		})
	}
	effects["thinktime"] = func(t *testing.T) {
		// 16 reads, each followed by 20 ms of think time.
		if d := job(run(t, psyncJob(t, "--size=64k", "--thinktime=20ms")...)).Runtime; d < 300*time.Millisecond {
			t.Errorf("thinktime=20ms after each of 16 reads: done in %v", d)
		}
	}
	effects["thinktime_spin"] = func(t *testing.T) {
		// Long think times: a sleep asks for the think time less the
		// granularity fio measures, which a traced, loaded process finds
		// in milliseconds.
		args := psyncJob(t, "--size=16k", "--thinktime=100ms")
		if n := sleeps(traced(t, "clock_nanosleep", args...), 20*time.Millisecond); n != 4 {
			t.Errorf("thinktime=100ms after 4 reads: %d sleeps", n)
		}
		if n := sleeps(traced(t, "clock_nanosleep", append(args, "--thinktime_spin=100ms")...), 20*time.Millisecond); n != 0 {
			t.Errorf("thinktime_spin=100ms: %d sleeps, want the time spun", n)
		}
	}
	effects["thinktime_blocks"] = func(t *testing.T) {
		lines := traced(t, "clock_nanosleep", psyncJob(t, "--size=64k", "--thinktime=50ms", "--thinktime_blocks=4")...)
		if n := sleeps(lines, 20*time.Millisecond); n != 4 {
			t.Errorf("thinktime_blocks=4 over 16 reads: %d think times, want 4", n)
		}
	}
	effects["thinktime_blocks_type"] = func(t *testing.T) {
		// At depth 4, counted as they complete, the 4th completion comes
		// after 7 submits (fio's order); counted as issued, after 4.
		args := aioJob(t, "--size=64k", "--thinktime=50ms", "--thinktime_blocks=4")
		if n := submitsBeforeSleep(traced(t, "io_submit,clock_nanosleep", args...)); n != 7 {
			t.Errorf("thinktime_blocks_type=complete: %d submits before the first think time, want 7", n)
		}
		if n := submitsBeforeSleep(traced(t, "io_submit,clock_nanosleep", append(args, "--thinktime_blocks_type=issue")...)); n != 4 {
			t.Errorf("thinktime_blocks_type=issue: %d submits before the first think time, want 4", n)
		}
	}
	effects["startdelay"] = func(t *testing.T) {
		r := run(t, append(psyncJob(t, "--runtime=200ms", "--time_based"), "--name=late", "--startdelay=300ms")...)
		early, late := r.Groups[0].Jobs[0].Start, r.Groups[0].Jobs[1].Start
		if d := late.Sub(early); d < 250*time.Millisecond {
			t.Errorf("startdelay=300ms: started %v after the other job", d)
		}
		// A range: each clone draws its own delay.
		r = run(t, psyncJob(t, "--runtime=50ms", "--time_based", "--startdelay=0-400ms", "--numjobs=4")...)
		var starts []time.Time
		for _, j := range r.Groups[0].Jobs {
			starts = append(starts, j.Start)
		}
		slices.SortFunc(starts, time.Time.Compare)
		if starts[3].Sub(starts[0]) < 50*time.Millisecond {
			t.Errorf("startdelay=0-400ms with 4 jobs: all started within %v", starts[3].Sub(starts[0]))
		}
	}
	effects["cpus_allowed_policy"] = func(t *testing.T) {
		args := psyncJob(t, "--size=64k", "--cpus_allowed=0-1", "--numjobs=2")
		lines := traced(t, "sched_setaffinity", append(args, "--cpus_allowed_policy=split")...)
		if count(lines, `sched_setaffinity\(0, \d+, \[0\]`) != 1 || count(lines, `sched_setaffinity\(0, \d+, \[1\]`) != 1 {
			t.Errorf("split: not one CPU each:\n%s", strings.Join(lines, "\n"))
		}
		lines = traced(t, "sched_setaffinity", append(args, "--cpus_allowed_policy=shared")...)
		if count(lines, `sched_setaffinity\(0, \d+, \[0 1\]`) != 2 {
			t.Errorf("shared: not both CPUs for each job:\n%s", strings.Join(lines, "\n"))
		}
	}
	lats := func(j *bench.JobResult) [3]uint64 {
		d := &j.Dirs[bench.Read]
		return [3]uint64{d.Slat.Stat.N, d.Clat.Stat.N, d.Lat.Stat.N}
	}
	measured := func(option string, want [3]bool) effect {
		return func(t *testing.T) {
			j := job(run(t, aioJob(t, "--size=256k", "--"+option+"=1")...))
			got := lats(j)
			for i, name := range []string{"slat", "clat", "lat"} {
				if (got[i] > 0) != want[i] {
					t.Errorf("%s=1: %d %s samples", option, got[i], name)
				}
			}
			if j.Dirs[bench.Read].IOs != 64 {
				t.Errorf("%s=1: %d I/Os counted, want 64", option, j.Dirs[bench.Read].IOs)
			}
		}
	}
	effects["disable_lat"] = measured("disable_lat", [3]bool{true, true, false})
	effects["disable_clat"] = measured("disable_clat", [3]bool{true, false, true})
	effects["disable_slat"] = measured("disable_slat", [3]bool{false, true, true})
	effects["gtod_reduce"] = func(t *testing.T) {
		measured("gtod_reduce", [3]bool{})(t)
		// With nothing to time, the loop reads the clock once per I/O.
		j := job(run(t, psyncJob(t, "--gtod_reduce=1")...))
		if per := float64(j.ClockReads) / float64(ios(run(t, psyncJob(t, "--gtod_reduce=1")...))); per > 1.05 {
			t.Errorf("gtod_reduce=1: %.2f clock reads per I/O", per)
		}
	}
	effects["clocksource"] = func(t *testing.T) {
		for v, want := range map[string]string{"cpu": bench.ClockTSC, "clock_gettime": bench.ClockMonotonic, "gettimeofday": bench.ClockWall} {
			j := job(run(t, psyncJob(t, "--size=256k", "--clocksource="+v)...))
			if j.Clock != want {
				t.Errorf("clocksource=%s: the job read %q", v, j.Clock)
			}
			// gettimeofday counts whole microseconds: so does every latency.
			st := j.Dirs[bench.Read].Clat.Stat
			whole := st.Min%1000 == 0 && st.Max%1000 == 0
			if st.N != 64 || whole != (v == "gettimeofday") {
				t.Errorf("clocksource=%s: %d clat samples, min %d ns, max %d ns", v, st.N, st.Min, st.Max)
			}
		}
		// fio keeps one clock for the run: the last job's that names one.
		r := run(t, append(psyncJob(t, "--size=64k", "--clocksource=cpu"), psyncJob(t, "--size=64k", "--clocksource=gettimeofday", "--name=q")...)...)
		for _, j := range r.Groups[0].Jobs {
			if j.Clock != bench.ClockWall {
				t.Errorf("clocksource=cpu, then gettimeofday in a later job: job %s read %q", j.Name, j.Clock)
			}
		}
	}
	effects["disable_bw_measurement"] = func(t *testing.T) {
		// With clat and slat off too, a submission takes no time stamp.
		per := func(extra ...string) float64 {
			j := job(run(t, aioJob(t, append([]string{"--size=1m", "--disable_clat=1", "--disable_slat=1"}, extra...)...)...))
			return float64(j.ClockReads) / float64(j.Dirs[bench.Read].IOs)
		}
		with, without := per("--disable_bw_measurement=1"), per()
		if with > without-0.9 {
			t.Errorf("disable_bw_measurement=1: %.2f clock reads per I/O, %.2f without", with, without)
		}
	}
	percentiles := func(option, dir string) effect {
		return func(t *testing.T) {
			has := func(args ...string) bool {
				d := dirJSON(t, reportJSON(t, aioJob(t, append([]string{"--size=256k"}, args...)...)...), "read")
				l := map[string]LatReport{"slat": d.Slat, "clat": d.Clat, "lat": d.Lat}[dir]
				return len(l.Percentile) > 0 && len(l.Bins) > 0
			}
			on := option + "=1"
			off := option + "=0"
			if !has("--"+on) || has("--"+off) {
				t.Errorf("%s: %s_ns percentiles with %s: %v, with %s: %v", option, dir, on, has("--"+on), off, has("--"+off))
			}
		}
	}
	effects["clat_percentiles"] = percentiles("clat_percentiles", "clat")
	effects["lat_percentiles"] = percentiles("lat_percentiles", "lat")
	effects["slat_percentiles"] = percentiles("slat_percentiles", "slat")
	effects["significant_figures"] = func(t *testing.T) {
		iops := func(sig string) string {
			var b bytes.Buffer
			if err := WriteNormal(&b, run(t, psyncJob(t, "--significant_figures="+sig)...), nil); err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`IOPS=(\S+),`).FindStringSubmatch(b.String())
			if m == nil {
				t.Fatalf("no IOPS in\n%s", b.String())
			}
			return m[1]
		}
		// Thousands of IOPS: in two figures with a k or M; in six, whole.
		if two, six := iops("2"), iops("6"); strings.Trim(two, "0123456789.") == "" || strings.Trim(six, "0123456789") != "" {
			t.Errorf("IOPS=%s with 2 significant figures, IOPS=%s with 6", two, six)
		}
	}
	effects["exitall"] = func(t *testing.T) {
		t0 := time.Now()
		r := run(t, append(psyncJob(t, "--size=64k", "--exitall"), "--name=long", "--runtime=20s", "--time_based")...)
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("exitall: the 20 s job ran on after the short one (%v)", d)
		}
		if long := r.Groups[0].Jobs[1]; long.Runtime > 5*time.Second || ios(r) == 0 {
			t.Errorf("exitall: the long job ran %v", long.Runtime)
		}
		refused(t, runErr(t, psyncJob(t, "--exitall=0")...), "even 0")
	}
	effects["wait_for"] = func(t *testing.T) {
		r := run(t, append(psyncJob(t, "--runtime=300ms", "--time_based"), "--name=after", "--wait_for=p")...)
		first, second := r.Groups[0].Jobs[0], r.Groups[0].Jobs[1]
		if second.Start.Before(first.Start.Add(first.Runtime)) {
			t.Errorf("wait_for=p: started %v after p, which ran %v", second.Start.Sub(first.Start), first.Runtime)
		}
		refused(t, runErr(t, psyncJob(t, "--wait_for=nobody")...), "no job of that name before this one")
	}
	effects["ioscheduler"] = func(t *testing.T) {
		dev := testdev.Loop(t, 16<<20)
		disk := filepath.Base(dev)
		original, other := testdev.OtherScheduler(t, dev)
		// Watch the disk's scheduler while the job runs.
		var seen atomic.Value
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 200; i++ {
				if active, _, err := (system.FS{}).Schedulers(disk); err == nil && active == other {
					seen.Store(active)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		r := run(t, "--name=s", "--filename="+dev, "--ioengine=psync", "--direct=1", "--runtime=500ms", "--time_based", "--ioscheduler="+other)
		<-done
		if seen.Load() != other || r.Groups[0].Schedulers[disk] != other {
			t.Errorf("ioscheduler=%s: seen %v while the job ran, recorded %v", other, seen.Load(), r.Groups[0].Schedulers)
		}
		if active, _, _ := (system.FS{}).Schedulers(disk); active != original {
			t.Errorf("after the job %s has %s, want %s back", disk, active, original)
		}
		refused(t, runErr(t, "--name=s", "--filename="+dev, "--ioengine=psync", "--size=64k", "--ioscheduler=cfq"), "legacy block layer")
	}
}
