package cli

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// straceOut runs a command under strace -f with flags and returns what
// strace wrote.
func straceOut(t *testing.T, flags []string, env []string, name string, args ...string) string {
	t.Helper()
	out := t.TempDir() + "/strace"
	cmd := exec.Command("strace", append(append(append([]string{"-f"}, flags...), "-o", out, name), args...)...)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, b)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// straceTrace is the trace of calls (comma-separated), one line each.
func straceTrace(t *testing.T, calls string, env []string, name string, args ...string) string {
	t.Helper()
	return straceOut(t, []string{"-qq", "-e", "trace=" + calls, "-e", "signal=none"}, env, name, args...)
}

// straceCounts runs a command under strace -f -c and returns the calls
// counted for each of the system calls named.
func straceCounts(t *testing.T, calls []string, env []string, name string, args ...string) map[string]int {
	t.Helper()
	text := straceOut(t, []string{"-c", "-e", "trace=" + strings.Join(calls, ",")}, env, name, args...)
	counts := map[string]int{}
	// strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall
	row := regexp.MustCompile(`(?m)^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$`)
	for _, m := range row.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		counts[m[2]] = n
	}
	return counts
}

// uringEnters runs a command under strace and counts its io_uring_enter
// calls that submit (to_submit > 0) and those that only wait.
func uringEnters(t *testing.T, env []string, name string, args ...string) [2]int {
	t.Helper()
	var n [2]int
	re := regexp.MustCompile(`io_uring_enter\(\d+, (\d+),`)
	for _, m := range re.FindAllStringSubmatch(straceTrace(t, "io_uring_enter", env, name, args...), -1) {
		if m[1] == "0" {
			n[1]++
		} else {
			n[0]++
		}
	}
	return n
}

// TestSyscallsMatchFio runs fio and iolab with the same options on one loop
// device under strace and compares the submit and reap system calls per
// I/O: with fio's defaults each I/O is submitted on its own
// (iodepth_batch_submit=1) and reaped one at a time once the queue is
// full, and the batch options batch the same way.
func TestSyscallsMatchFio(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	fio := lookFio(t)
	dev := testLoop(t, 256<<20)
	for _, tc := range []struct {
		engine string
		depth  int
		extra  []string
	}{
		{"io_uring", 1, nil}, {"io_uring", 8, nil}, {"io_uring", 32, nil},
		{"libaio", 1, nil}, {"libaio", 8, nil}, {"libaio", 32, nil},
		{"libaio", 8, []string{"--iodepth_batch_submit=0", "--iodepth_batch_complete_min=4"}},
		{"libaio", 32, []string{"--iodepth_batch_submit=0", "--iodepth_batch_complete_min=16"}},
	} {
		name := fmt.Sprintf("%s/iodepth=%d%s", tc.engine, tc.depth, strings.Join(tc.extra, ""))
		// io_uring's reaps make a system call only when the ring is empty,
		// which depends on timing; a longer run evens that out.
		size := 16 << 20
		if tc.engine == "io_uring" && tc.depth > 1 {
			size = 64 << 20
		}
		ios := float64(size / 4096)
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--name=t", "--filename=" + dev, "--rw=randread", "--bs=4k", fmt.Sprintf("--size=%d", size), "--direct=1",
				"--ioengine=" + tc.engine, fmt.Sprintf("--iodepth=%d", tc.depth)}, tc.extra...)
			calls := []string{"io_uring_enter", "io_submit", "io_getevents"}
			if tc.engine == "io_uring" {
				// io_uring_enter both submits and waits; the waits come only
				// when the ring is empty at reap time, which depends on the
				// machine's load at that moment. The submits are the rule.
				want := uringEnters(t, nil, fio, args...)
				got := uringEnters(t, []string{"IOLAB_TEST_MAIN=1"}, os.Args[0], append([]string{"run", "--no-save"}, args...)...)
				w, g := float64(want[0])/ios, float64(got[0])/ios
				if math.Abs(g-w) > 0.05*w {
					t.Errorf("io_uring_enter submitting: %.3f per I/O, fio %.3f", g, w)
				}
				if gw := float64(got[1]) / ios; gw > 1.05 || (tc.depth > 1 && gw > 0.25) {
					t.Errorf("io_uring_enter waiting: %.3f per I/O (fio %.3f)", gw, float64(want[1])/ios)
				}
				t.Logf("submitting, waiting: fio %v, iolab %v", want, got)
				return
			}
			want := straceCounts(t, calls, nil, fio, args...)
			got := straceCounts(t, calls, []string{"IOLAB_TEST_MAIN=1"}, os.Args[0], append([]string{"run", "--no-save"}, args...)...)
			for _, c := range calls {
				w, g := float64(want[c])/ios, float64(got[c])/ios
				if w == 0 && g == 0 {
					continue
				}
				if math.Abs(g-w) > 0.05*w {
					t.Errorf("%s: %.3f per I/O, fio %.3f", c, g, w)
				}
			}
			t.Logf("fio %v, iolab %v", want, got)
		})
	}
}

// lookFio returns fio's path; the test command installs it.
func lookFio(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed (the test command installs it)")
	}
	return p
}

// TestOpenFlagsMatchFio runs fio and iolab on one loop device under strace
// and compares the flags each opens the device with for its I/O: fio opens
// what is not a regular file with O_NOATIME (generic_open_file), so that a
// read does not look at the device inode's atime, and so does iolab.
// O_CLOEXEC, which iolab adds and fio does not, is left out.
func TestOpenFlagsMatchFio(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	fio := lookFio(t)
	dev := testLoop(t, 16<<20)
	re := regexp.MustCompile(`openat\(AT_FDCWD, "` + regexp.QuoteMeta(dev) + `", ([A-Z_|]+)`)
	// iolab's guard looks the name up with O_PATH and opens for I/O what
	// it checked, through /proc/self/fd/N: that open's flags are the job's.
	reopen := regexp.MustCompile(`openat\(AT_FDCWD, "/proc/self/fd/[0-9]+", ([A-Z_|]+)`)
	flagsOf := func(trace string) map[string]bool {
		t.Helper()
		var last []string
		for _, m := range re.FindAllStringSubmatchIndex(trace, -1) {
			last = strings.Split(trace[m[2]:m[3]], "|") // the job's own open is the last
			if slices.Contains(last, "O_PATH") {
				r := reopen.FindStringSubmatch(trace[m[1]:])
				if r == nil {
					t.Fatalf("%s looked up with O_PATH and never opened through /proc/self/fd:\n%s", dev, trace)
				}
				last = strings.Split(r[1], "|")
			}
		}
		if last == nil {
			t.Fatalf("no open of %s in:\n%s", dev, trace)
		}
		set := map[string]bool{}
		for _, f := range last {
			if f != "O_CLOEXEC" {
				set[f] = true
			}
		}
		return set
	}
	for _, rw := range []string{"randread", "randwrite"} {
		args := []string{"--name=t", "--filename=" + dev, "--rw=" + rw, "--bs=4k", "--size=1m", "--direct=1", "--ioengine=psync"}
		want := flagsOf(straceTrace(t, "openat", nil, fio, args...))
		got := flagsOf(straceTrace(t, "openat", []string{"IOLAB_TEST_MAIN=1"}, os.Args[0], append([]string{"run", "--no-save"}, args...)...))
		if !want["O_NOATIME"] {
			t.Errorf("%s: fio opened %s without O_NOATIME: %v", rw, dev, want)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: iolab opens %s with %v, fio with %v", rw, dev, got, want)
		}
	}
}
