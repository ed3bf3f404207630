package fioserver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
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
	// AllowTargets are the devices and files this host's jobs may use,
	// each as a job's filename must give it, byte for byte (see
	// CheckAllowedTarget); none by default: a job that touches a file is
	// then refused (see the package doc).
	AllowTargets []string
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
