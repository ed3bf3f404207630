package testdev

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Request is one request the block layer issued to a device, as its
// block_rq_issue tracepoint shows it (include/trace/events/block.h): the
// first sector, the size, fio's rwbs letters (R, W, RS, …) and the I/O
// priority it carried — class (none, rt, be, idle) and level.
type Request struct {
	Sector uint64
	Bytes  int
	RWBS   string
	Class  string
	Level  int
}

// Prio is the request's priority as "class/level", e.g. "rt/0".
func (r Request) Prio() string { return r.Class + "/" + strconv.Itoa(r.Level) }

// BlockTrace records the requests issued to one block device through a
// tracefs instance of its own, which the test removes when it ends: the
// machine's own tracing, and other tests', are left alone.
type BlockTrace struct {
	t   testing.TB
	dir string // the instance
}

// TraceRequests starts recording the requests issued to block device
// dev, and turns off the merging of adjacent I/Os into one request on
// it (queue/nomerges=2) until the test ends, so that each I/O is a
// request of its own. It skips the test where tracefs is missing or the
// kernel's block_rq_issue has no ioprio field (before Linux 6.10).
func TraceRequests(t testing.TB, dev string) *BlockTrace {
	t.Helper()
	NeedLoopTools(t)
	root := Tracefs(t)
	format, err := os.ReadFile(filepath.Join(root, "events", "block", "block_rq_issue", "format"))
	if err != nil {
		t.Skipf("no block_rq_issue tracepoint: %v", err)
	}
	if !bytes.Contains(format, []byte("field:unsigned short ioprio;")) {
		t.Skip("this kernel's block_rq_issue does not show the I/O priority (Linux 6.10 and later do)")
	}
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	nomerges := filepath.Join("/sys/block", filepath.Base(dev), "queue", "nomerges")
	was, err := os.ReadFile(nomerges)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nomerges, []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(nomerges, bytes.TrimSpace(was), 0o644) })
	dir := filepath.Join(root, "instances", fmt.Sprintf("iolab-test-%d-%d", os.Getpid(), st.Rdev))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("tracefs instance: %v", err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "events", "block", "block_rq_issue", "enable"), []byte("0"), 0o644)
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove tracefs instance: %v", err)
		}
	})
	// The kernel's dev_t: major << 20 | minor (MKDEV in linux/kdev_t.h).
	kdev := uint64(unix.Major(st.Rdev))<<20 | uint64(unix.Minor(st.Rdev))
	event := filepath.Join(dir, "events", "block", "block_rq_issue")
	for _, w := range []struct{ file, value string }{
		{filepath.Join(dir, "buffer_size_kb"), "2048"},
		{filepath.Join(event, "filter"), fmt.Sprintf("dev == %d", kdev)},
		{filepath.Join(event, "enable"), "1"},
	} {
		if err := os.WriteFile(w.file, []byte(w.value), 0o644); err != nil {
			t.Fatalf("tracefs %s: %v", w.file, err)
		}
	}
	return &BlockTrace{t: t, dir: dir}
}

// Tracefs is where tracefs is mounted, mounting it for the test (and
// unmounting it after) where it is not.
func Tracefs(t testing.TB) string {
	t.Helper()
	if b, err := os.ReadFile("/proc/self/mounts"); err == nil {
		for l := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[2] == "tracefs" {
				return f[1]
			}
		}
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tracefs", "nodev", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tracefs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount tracefs: %v %s", err, out)
		}
	})
	return dir
}

// requestLine is block_rq_issue's print format: "7,2 R 4096 () 88 + 8
// rt,0,0 [comm]" — device, rwbs, bytes, command, sector + sectors, then
// class, hint and level.
var requestLine = regexp.MustCompile(`block_rq_issue: \d+,\d+ (\S+) (\d+) \(.*\) (\d+) \+ \d+ (\w+),\d+,(\d+) \[`)

// Take returns the requests recorded since the last Take (or the
// start), in the order they were issued, and clears the record.
func (bt *BlockTrace) Take() []Request {
	t := bt.t
	t.Helper()
	path := filepath.Join(bt.dir, "trace")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Request
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if strings.Contains(line, "entries-in-buffer/entries-written:") {
				var in, written int
				fmt.Sscanf(line[strings.Index(line, ":")+1:], " %d/%d", &in, &written)
				if in != written {
					t.Fatalf("the trace lost requests: %d kept of %d", in, written)
				}
			}
			continue
		}
		m := requestLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		sector, _ := strconv.ParseUint(m[3], 10, 64)
		level, _ := strconv.Atoi(m[5])
		out = append(out, Request{Sector: sector, Bytes: n, RWBS: m[1], Class: m[4], Level: level})
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
