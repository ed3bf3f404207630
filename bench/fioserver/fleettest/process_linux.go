package fleettest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Command is name run inside the host: in its network namespace, in a UTS
// namespace of its own whose hostname is the host's name, in a mount
// namespace of its own where DataDir is the host's Data, in a process
// group of its own (so that stopping it stops what it forked), and killed
// if the test binary dies first.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	// ip netns exec, unshare and sh each exec the next: the process is
	// name's own. Writing /proc/sys/kernel/hostname needs no hostname(1).
	argv := append([]string{"netns", "exec", h.NS, "unshare", "--uts", "--mount", "--propagation", "private", "--",
		"sh", "-c", `printf %s "$0" > /proc/sys/kernel/hostname && mount --bind "$1" "$2" && shift 2 && exec "$@"`,
		h.Name, h.Data, DataDir, name}, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// Process is a command started in a host, stopped when the test ends.
type Process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
	once sync.Once
}

// Start starts name in the host; its output (stdout and stderr) is kept
// for Output and logged if the test fails.
func (h *Host) Start(t testing.TB, name string, args ...string) *Process {
	t.Helper()
	p := &Process{out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = h.Command(context.Background(), name, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("fleettest: start %s in %s: %v", name, h.Name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("fleettest: %s on %s printed:\n%s", name, h.Name, p.Output())
		}
	})
	return p
}

// Pid is the process's id (also its process group's).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is what the process has printed so far.
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process's group: SIGTERM, then SIGKILL after 5 s. It
// returns how the process ended; stopping it again does nothing.
func (p *Process) Stop() error {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
		// The group's other members (fio server's per-connection
		// children) may outlive its leader.
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
	<-p.done
	return p.err
}

// Members are the processes of the process's group: the process and
// what it forked (a fio server's per-connection children).
func (p *Process) Members() []int {
	pgid := p.cmd.Process.Pid
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// DefaultFioPort is fio's own default server port.
const DefaultFioPort = 8765

// FioServer starts `fio --server=ip:ADDR,PORT` in the host (fio from
// PATH; the test is skipped without it) and waits until it listens.
func (h *Host) FioServer(t testing.TB, port int) *Process {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	p := h.Start(t, "fio", fmt.Sprintf("--server=ip:%s,%d", h.Addr, port))
	if err := p.WaitListening(h.Addr, port, 10*time.Second); err != nil {
		t.Fatalf("fleettest: fio server on %s: %v\n%s", h.Name, err, p.Output())
	}
	return p
}

// WaitListening waits until a socket of the process's network namespace
// listens on addr:port (read from /proc/PID/net/tcp, without connecting:
// a fio server forks for every connection).
func (p *Process) WaitListening(addr netip.Addr, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := listening(p.Pid(), addr, port)
		if ok {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("exited (%v) before listening on %s:%d", p.err, addr, port)
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("timed out")
			}
			return fmt.Errorf("not listening on %s:%d after %v: %w", addr, port, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listening reads /proc/PID/net/tcp (proc(5): local_address is the IPv4
// address as the kernel's u32 in host order, in hex, then the port; st
// 0A is TCP_LISTEN).
func listening(pid int, addr netip.Addr, port int) (bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false, err
	}
	a := addr.As4()
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", a[3], a[2], a[1], a[0], port)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 3 && f[1] == want && f[3] == "0A" {
			return true, nil
		}
	}
	return false, sc.Err()
}

// syncBuffer is a bytes.Buffer safe for a process's two output pipes and
// a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
