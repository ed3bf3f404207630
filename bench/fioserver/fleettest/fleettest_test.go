package fleettest

import (
	"context"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Two hosts: each its own hostname and address, reachable from here over
// its link, and nothing of them left once their test ends.
func TestHosts(t *testing.T) {
	var names []string
	t.Run("make", func(t *testing.T) {
		a, b := NewHost(t, "fleet-a"), NewHost(t, "fleet-b")
		if a.Addr == b.Addr || !Range.Contains(a.Addr) || !Range.Contains(b.Addr) {
			t.Fatalf("addresses %s and %s: want two distinct ones in %s", a.Addr, b.Addr, Range)
		}
		for _, h := range []*Host{a, b} {
			names = append(names, h.NS, h.link)
			out, err := h.Command(context.Background(), "cat", "/proc/sys/kernel/hostname").Output()
			if err != nil || strings.TrimSpace(string(out)) != h.Name {
				t.Errorf("hostname inside %s: %q, %v", h.Name, out, err)
			}
			// The host has its link and loopback only: no way out.
			out, err = h.Command(context.Background(), "ip", "-4", "route").Output()
			if err != nil || strings.Contains(string(out), "default") {
				t.Errorf("routes inside %s: %q, %v: want no default route", h.Name, out, err)
			}
		}
		// Each host has its own DataDir.
		for _, h := range []*Host{a, b} {
			if err := h.Command(context.Background(), "sh", "-c", "echo "+h.Name+" > "+DataDir+"/who").Run(); err != nil {
				t.Fatal(err)
			}
		}
		for _, h := range []*Host{a, b} {
			if got, err := os.ReadFile(filepath.Join(h.Data, "who")); err != nil || strings.TrimSpace(string(got)) != h.Name {
				t.Errorf("%s's data: %q, %v", h.Name, got, err)
			}
		}
		if _, err := os.Stat(filepath.Join(DataDir, "who")); err == nil {
			t.Error("a host wrote to this machine's DataDir")
		}
		if host, _ := exec.Command("hostname").Output(); strings.TrimSpace(string(host)) == "fleet-a" {
			t.Error("this machine's hostname changed")
		}
		srv := a.FioServer(t, DefaultFioPort)
		// From here, fio's client reaches the server over the link.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "fio", "--client=ip:"+a.Addr.String()+",8765", "--parse-only", nullJob(t)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "hostname=fleet-a,") {
			t.Errorf("fio --client to %s: %v\n%s", a.Addr, err, out)
		}
		if err := srv.Stop(); err == nil {
			t.Error("the fio server ended by itself; want it stopped by a signal")
		}
	})
	out, _ := exec.Command("ip", "-o", "link").Output()
	ns, _ := exec.Command("ip", "netns", "list").Output()
	for _, n := range names {
		if strings.Contains(string(out)+string(ns), n+" ") || strings.Contains(string(out), n+"@") {
			t.Errorf("%s is still there after the test", n)
		}
	}
}

func TestSetLink(t *testing.T) {
	t.Parallel()
	h := NewHost(t, "fleet-cut")
	h.FioServer(t, DefaultFioPort)
	probe := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return exec.CommandContext(ctx, "fio", "--client=ip:"+h.Addr.String()+",8765", "--parse-only", nullJob(t)).Run()
	}
	if err := h.SetLink(false); err != nil {
		t.Fatal(err)
	}
	if err := probe(2 * time.Second); err == nil {
		t.Error("reached the host with its link down")
	}
	if err := h.SetLink(true); err != nil {
		t.Fatal(err)
	}
	if err := probe(20 * time.Second); err != nil {
		t.Errorf("link up again: %v", err)
	}
}

// nullJob is a job file fio's client can send (it takes no jobs from its
// command line).
func nullJob(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "null.fio")
	if err := os.WriteFile(f, []byte("[x]\nioengine=null\nsize=4k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReapStale: a slot's namespace and link left by a dead holder are
// removed by the next claim.
func TestReapStale(t *testing.T) {
	NeedNamespaces(t)
	slot, lock, err := claimSlot()
	if err != nil {
		t.Fatal(err)
	}
	stale := slotHost(slot)
	t.Cleanup(func() { stale.remove() })
	if err := stale.make(); err != nil {
		lock.Close()
		t.Fatal(err)
	}
	lock.Close() // its holder dies
	_, lock, err = claimSlot()
	if err != nil {
		t.Fatal(err)
	}
	lock.Close()
	out, _ := exec.Command("ip", "-o", "link").Output()
	ns, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), stale.link+"@") || strings.Contains(string(ns), stale.NS+" ") || strings.Contains(string(ns), stale.NS+"\n") {
		t.Errorf("%s or %s is still there", stale.NS, stale.link)
	}
}

// TestReach: a host given a route to another host's gateway reaches a
// server listening there, one without it does not, and neither reaches
// the other hosts.
func TestReach(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed: the hosts dial with it")
	}
	a, b, c := NewHost(t, "fleet-ra"), NewHost(t, "fleet-rb"), NewHost(t, "fleet-rc")
	ln, err := net.Listen("tcp", net.JoinHostPort(a.Gateway.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte("here\n"))
			conn.Close()
		}
	}()
	if err := b.Reach(a.Gateway); err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	// Each host dials from inside its namespace, with python3's socket
	// (the hosts run what this machine has).
	dial := func(h *Host, addr netip.Addr) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := h.Command(ctx, "python3", "-c",
			"import socket,sys; print(socket.create_connection((sys.argv[1], int(sys.argv[2])), 3).recv(16).decode().strip())",
			addr.String(), strconv.Itoa(port)).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := dial(b, a.Gateway); err != nil || out != "here" {
		t.Errorf("%s to %s: %q, %v", b.Name, a.Gateway, out, err)
	}
	if out, err := dial(c, a.Gateway); err == nil {
		t.Errorf("%s reached %s without the route: %q", c.Name, a.Gateway, out)
	}
	if out, err := dial(b, c.Addr); err == nil || !strings.Contains(out, "unreachable") {
		t.Errorf("%s to the host %s: %q, %v: want unreachable", b.Name, c.Addr, out, err)
	}
}
