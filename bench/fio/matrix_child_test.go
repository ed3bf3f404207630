package fio

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMatrixChildOwnSession: each tool the matrix runs starts a session
// of its own (and so, with autogroup scheduling, a CPU share of its own,
// as fio's job processes do), and a canceled run is asked to stop with
// SIGTERM, which a shell can trap.
func TestMatrixChildOwnSession(t *testing.T) {
	out, err := childCommand(context.Background(), []string{"sh", "-c", "cut -d' ' -f6 /proc/self/stat"}).Output()
	if err != nil {
		t.Fatal(err)
	}
	own, _ := unix.Getsid(0)
	sid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || sid == own {
		t.Errorf("child's session %q (%v), ours %d: want one of its own", out, err, own)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := childCommand(ctx, []string{"sh", "-c", "trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.05; done"})
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(pipe)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child said %q (%v)", line, err)
	}
	cancel()
	rest, _ := io.ReadAll(r)
	cmd.Wait()
	if string(rest) != "term\n" {
		t.Errorf("canceled child printed %q: it was not sent SIGTERM", rest)
	}
}
