package fioserver

import (
	"fmt"
	"net/netip"
	"strings"
)

// AllowList is the set of addresses fio servers may have: prefixes
// (10.213.0.0/16) and single addresses (192.0.2.7, ::1). The zero
// AllowList allows nothing.
type AllowList struct {
	prefixes []netip.Prefix
}

// ParseAllowList reads entries, each a prefix or an address; an entry may
// hold several separated by commas or blanks, as a flag's value would.
func ParseAllowList(entries ...string) (AllowList, error) {
	var a AllowList
	for _, e := range entries {
		for _, f := range strings.FieldsFunc(e, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			p, err := parseAllowEntry(f)
			if err != nil {
				return AllowList{}, err
			}
			a.prefixes = append(a.prefixes, p)
		}
	}
	return a, nil
}

func parseAllowEntry(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("fleet: allow-list entry %q: %w", s, err)
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("fleet: allow-list entry %q has host bits set (write %s)", s, p.Masked())
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("fleet: allow-list entry %q is neither an address nor a prefix (10.0.0.0/24)", s)
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("fleet: allow-list entry %q: zones are not taken", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Allows reports whether addr is on the list. An IPv4-mapped IPv6 address
// is taken as the IPv4 address it maps.
func (a AllowList) Allows(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Empty reports whether the list allows nothing.
func (a AllowList) Empty() bool { return len(a.prefixes) == 0 }

// String writes the list as ParseAllowList reads it.
func (a AllowList) String() string {
	s := make([]string, len(a.prefixes))
	for i, p := range a.prefixes {
		if p.IsSingleIP() {
			s[i] = p.Addr().String()
		} else {
			s[i] = p.String()
		}
	}
	return strings.Join(s, ",")
}
