package fleet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
)

// DefaultPort is fio's server port when none is given (server.h:
// FIO_NET_PORT).
const DefaultPort = 8765

// Host is one fio server.
type Host struct {
	// Name is what the dashboard calls the host, in errors and progress;
	// "" is taken as Addr. The host's own hostname comes from its probe.
	Name string
	// Addr is the server's IP address, or a DNS name resolved once per
	// run: every address it resolves to must be on the allow-list, and
	// fio is given the first, so that what was checked is what is used.
	Addr string
	Port int // 0: DefaultPort
	// AllowDevices are the paths under /dev this host's jobs may use as
	// filename or directory (compared as paths, not resolved on the
	// host); none by default (see the package doc).
	AllowDevices []string
}

func (h Host) label() string {
	if h.Name != "" {
		return h.Name
	}
	return h.Addr
}

func (h Host) port() int {
	if h.Port == 0 {
		return DefaultPort
	}
	return h.Port
}

// resolve turns the host's address into the one fio will be given,
// checked against allow.
func (h Host) resolve(ctx context.Context, allow AllowList) (netip.AddrPort, error) {
	if h.Port < 0 || h.Port > 65535 {
		return netip.AddrPort{}, hostError(h, "", ErrNotAllowed, fmt.Sprintf("port %d is not a port", h.Port), nil)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(h.Addr); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if h.Addr == "" || strings.ContainsAny(h.Addr, ",: /") {
			return netip.AddrPort{}, hostError(h, h.Addr, ErrNotAllowed, fmt.Sprintf("%q is neither an IP address nor a host name", h.Addr), nil)
		}
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", h.Addr)
		if err != nil {
			return netip.AddrPort{}, hostError(h, h.Addr, ErrUnreachable, "cannot resolve its name", err)
		}
	}
	for _, a := range addrs {
		if a.Zone() != "" {
			return netip.AddrPort{}, hostError(h, h.Addr, ErrNotAllowed, fmt.Sprintf("%s has a zone, which fio's client cannot be given", a), nil)
		}
		if !allow.Allows(a) {
			return netip.AddrPort{}, hostError(h, h.Addr, ErrNotAllowed, fmt.Sprintf("%s is not on the allow-list (%s)", a, allowString(allow)), nil)
		}
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, hostError(h, h.Addr, ErrUnreachable, "its name resolves to no address", nil)
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(h.port())), nil
}

func allowString(a AllowList) string {
	if a.Empty() {
		return "empty: no fio server is allowed"
	}
	return a.String()
}

// clientArg is fio's --client value for ap (fio's
// fio_server_parse_string: "ip:" or "ip6:" says the family, "," the port).
func clientArg(ap netip.AddrPort) string {
	family := "ip"
	if ap.Addr().Is6() {
		family = "ip6"
	}
	return "--client=" + family + ":" + ap.Addr().String() + "," + strconv.Itoa(int(ap.Port()))
}

// checkTargets refuses, on host h, a job whose filename or directory
// (any of fio's ':'-separated directories) is under /dev, /dev/shm aside, unless
// h.AllowDevices holds that path. iolab cannot look at the host: see the
// package doc for what this does not catch.
func checkTargets(h Host, cfg *bench.Config) error {
	var bad []string
	for _, j := range cfg.Jobs {
		if j.WritesLogs() {
			// fio's client writes the logs its servers send back here,
			// under the names the job gives them (client.c).
			bad = append(bad, fmt.Sprintf("job %s: fio's log files (write_bw_log, …), which fio's client would write on this machine under the job's names; run logged jobs with iolab run on the host", j.Name))
			continue
		}
		if eng := j.Engine(); eng != nil && eng.Has(bench.Diskless) {
			continue
		}
		paths := []string{j.Filename} // one file per job, unescaped (fio.setFilename)
		for _, o := range slices.Concat(cfg.GlobalOptions, j.Options) {
			if o.Name == "directory" {
				// fio's list of directories; a "\:" (a colon in a
				// name) splits too, which keeps a /dev start in view.
				paths = append(paths, strings.Split(o.Value, ":")...)
			}
		}
		for _, p := range paths {
			if isDevicePath(p) && !slices.ContainsFunc(h.AllowDevices, func(a string) bool { return filepath.Clean(a) == filepath.Clean(p) }) {
				bad = append(bad, fmt.Sprintf("job %s: %s", j.Name, p))
			}
		}
	}
	if len(bad) > 0 {
		return hostError(h, "", ErrTarget, strings.Join(bad, "; ")+": a device on a fio host, whose disks iolab cannot check (mounted, in use); list it in the host's allowed devices to run there", nil)
	}
	return nil
}

func isDevicePath(p string) bool {
	if p == "" || !strings.HasPrefix(p, "/") {
		return false
	}
	c := filepath.Clean(p)
	return (c == "/dev" || strings.HasPrefix(c, "/dev/")) && c != "/dev/shm" && !strings.HasPrefix(c, "/dev/shm/")
}
