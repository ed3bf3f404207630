// Package fleettest makes hosts for fleet tests out of namespaces on this
// machine: each Host is a network namespace (`ip netns`) joined to this
// machine by a veth pair, with its own private /24 inside Range, and every
// process started in it gets its own UTS namespace with the host's name as
// hostname (`unshare --uts`). Nothing inside a host has a route beyond its
// link, so no traffic leaves the machine; the processes share this
// machine's filesystem, so a test gives each host its own files.
//
// A host is 10.213.K.2 and this machine's end of its link is 10.213.K.1
// (Gateway: where a dashboard in the root namespace listens for agents).
// Slot K is claimed with an flock on /run/iolab-fleettest/slot-K.lock, so
// test binaries running in parallel never share a slot, and what a dead
// holder left (a killed test binary's namespace and link) is removed by
// the next claim. Hosts reach this machine, not each other.
//
// The hosts share this machine's filesystem but for DataDir: inside each
// host it is that host's own Data directory (a bind mount in the mount
// namespace of each process started there), so one job naming
// DataDir/file does I/O on a different file on each host, as one job
// naming /dev/nvme0n1 would on real hosts.
//
// Everything a host makes — processes (each in its own process group,
// killed with its group), the link and the namespace — is removed by
// t.Cleanup, whether the test passed or not. Tests need root, ip
// (iproute2), unshare and mount (util-linux); NeedNamespaces skips,
// naming what is missing, when they are not there.
package fleettest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Range holds every host's address: 10.213.0.0/16, a range no common
// default (Docker's 172.17/16, libvirt's 192.168.122/24, VPNs' 10.0–10.8)
// uses. A slot whose /24 is routed elsewhere on this machine is skipped.
var Range = netip.MustParsePrefix("10.213.0.0/16")

// lockDir holds the slot locks; /run is a tmpfs, so a reboot frees them.
const lockDir = "/run/iolab-fleettest"

// DataDir is where each host sees its own Data directory. On this
// machine it is an empty directory.
const DataDir = lockDir + "/data"

// Host is one namespace host.
type Host struct {
	Name    string     // the hostname its processes see
	NS      string     // the network namespace, for ip netns exec
	Addr    netip.Addr // the host's address, 10.213.K.2
	Gateway netip.Addr // this machine's end of the link, 10.213.K.1
	// Data is the directory (on this machine, under the test's temporary
	// directory) that processes in the host see as DataDir.
	Data string

	link string // this machine's end of the veth pair
	peer string // the host's end
}

// NeedNamespaces skips the test when namespace hosts cannot be made here,
// naming why: it needs root, ip (iproute2), unshare and mount
// (util-linux).
func NeedNamespaces(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network and UTS namespaces")
	}
	for _, tool := range []string{"ip", "unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (iproute2, util-linux)", tool)
		}
	}
}

// NewHost makes a host named name (a valid hostname), removed when the
// test ends.
func NewHost(t testing.TB, name string) *Host {
	t.Helper()
	NeedNamespaces(t)
	if name == "" || len(name) > 64 || strings.ContainsAny(name, " \t\n/\x00") {
		t.Fatalf("fleettest: %q is not a hostname", name)
	}
	data := t.TempDir()
	if err := os.MkdirAll(DataDir, 0o755); err != nil {
		t.Fatalf("fleettest: %v", err)
	}
	slot, lock, err := claimSlot()
	if err != nil {
		t.Fatalf("fleettest: %v", err)
	}
	h := slotHost(slot)
	h.Name, h.Data = name, data
	t.Cleanup(func() {
		if err := h.remove(); err != nil {
			t.Errorf("fleettest: removing host %s: %v", h.Name, err)
		}
		lock.Close() // drops the flock: the slot is free
	})
	h.remove() // what a dead holder of the slot left behind
	if err := h.make(); err != nil {
		t.Fatalf("fleettest: making host %s: %v", name, err)
	}
	return h
}

// slotHost is slot's namespace, link and addresses.
func slotHost(slot int) *Host {
	return &Host{
		NS:      fmt.Sprintf("iolabft-%d", slot),
		Addr:    netip.AddrFrom4([4]byte{10, 213, byte(slot), 2}),
		Gateway: netip.AddrFrom4([4]byte{10, 213, byte(slot), 1}),
		link:    fmt.Sprintf("ilft%d", slot),
		peer:    fmt.Sprintf("ilft%dh", slot),
	}
}

// claimSlot locks a free slot from 1 to 254, starting at a random one,
// after removing what dead holders of other slots left.
func claimSlot() (int, *os.File, error) {
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		return 0, nil, err
	}
	reapStale()
	routed, err := routedPrefixes()
	if err != nil {
		return 0, nil, err
	}
	start := rand.IntN(254)
	for i := range 254 {
		slot := 1 + (start+i)%254
		if clashes(routed, slot) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(lockDir, fmt.Sprintf("slot-%d.lock", slot)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return 0, nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue
			}
			return 0, nil, fmt.Errorf("lock slot %d: %w", slot, err)
		}
		return slot, f, nil
	}
	return 0, nil, fmt.Errorf("no free slot in %s (254 hosts in use, or the range is routed elsewhere)", Range)
}

// reapStale removes the namespaces and links of slots nobody holds: a
// test binary killed before its cleanups ran leaves them.
func reapStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var slot int
		if _, err := fmt.Sscanf(f[0], "iolabft-%d", &slot); err != nil || f[0] != fmt.Sprintf("iolabft-%d", slot) {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(lockDir, fmt.Sprintf("slot-%d.lock", slot)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			continue
		}
		if unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			slotHost(slot).remove()
		}
		lock.Close()
	}
}

// routedPrefix is one route of this machine's main table and its device.
type routedPrefix struct {
	prefix netip.Prefix
	dev    string
}

// routedPrefixes lists the IPv4 routes of the root namespace other than
// the default one.
func routedPrefixes() ([]routedPrefix, error) {
	out, err := exec.Command("ip", "-4", "-o", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip route: %w", err)
	}
	var routes []routedPrefix
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "local" || f[0] == "broadcast" || f[0] == "unicast" {
			f = f[1:]
		}
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		p, err := netip.ParsePrefix(f[0])
		if err != nil {
			a, aerr := netip.ParseAddr(f[0])
			if aerr != nil {
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		r := routedPrefix{prefix: p}
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "dev" {
				r.dev = f[i+1]
			}
		}
		routes = append(routes, r)
	}
	return routes, nil
}

// clashes reports whether slot's /24 overlaps a route of a device that is
// not the slot's own link (which a dead holder may have left).
func clashes(routes []routedPrefix, slot int) bool {
	mine := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(slot), 0}), 24)
	for _, r := range routes {
		if r.prefix.Overlaps(mine) && r.dev != fmt.Sprintf("ilft%d", slot) {
			return true
		}
	}
	return false
}

// make creates the namespace, the veth pair and the addresses; the host
// has no default route.
func (h *Host) make() error {
	steps := [][]string{
		{"netns", "add", h.NS},
		{"link", "add", h.link, "type", "veth", "peer", "name", h.peer},
		{"link", "set", h.peer, "netns", h.NS},
		{"addr", "add", h.Gateway.String() + "/24", "dev", h.link},
		{"link", "set", h.link, "up"},
		{"-n", h.NS, "addr", "add", h.Addr.String() + "/24", "dev", h.peer},
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", h.NS, "link", "set", h.peer, "up"},
	}
	for _, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the link (both ends) and the namespace, ignoring what is
// not there. The kernel frees a namespace once its last process is gone.
func (h *Host) remove() error {
	var errs []error
	if err := ip("link", "del", h.link); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
		errs = append(errs, err)
	}
	if err := ip("netns", "del", h.NS); err != nil && !strings.Contains(err.Error(), "No such file") {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Reach routes addr, an address of this machine in another host's
// /24 (its Gateway), through the host's own link, so that one server
// listening on one address serves every host: a dashboard for fifty
// agents. The host still reaches no other host (this machine does not
// forward), and the route goes with the namespace.
func (h *Host) Reach(addr netip.Addr) error {
	return ip("-n", h.NS, "route", "add", addr.String()+"/32", "via", h.Gateway.String(), "dev", h.peer)
}

// SetLink takes the host's link down (up false) or up again: a network
// cut between the host and this machine that leaves the processes running.
func (h *Host) SetLink(up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return ip("link", "set", h.link, state)
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
