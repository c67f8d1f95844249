package accounts

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr returns the address of the client that made r: the socket
// peer (r.RemoteAddr), unless the peer is inside one of the trusted proxy
// prefixes, in which case it is the right-most X-Forwarded-For address that
// is not itself a trusted proxy.
//
// Right-most, because each proxy appends the peer it saw: the entries left
// of the last untrusted one were written by that untrusted party and may
// be anything. Malformed entries are skipped. When every entry is trusted,
// or there is none, the peer is the answer. IPv4-mapped IPv6 addresses are
// returned as IPv4, so that one client has one key. The result is the zero
// Addr when RemoteAddr cannot be parsed.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return netip.Addr{}
	}
	if !isTrusted(peer, trusted) {
		return peer
	}
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		parts := strings.Split(values[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, ok := parseHostAddr(strings.TrimSpace(parts[j]))
			if ok && !isTrusted(a, trusted) {
				return a
			}
		}
	}
	return peer
}

// parseHostAddr accepts an address with or without a port ("1.2.3.4",
// "1.2.3.4:80", "::1", "[::1]:80"), as both RemoteAddr and proxies write.
func parseHostAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies parses a comma-separated list of IP addresses and
// CIDR prefixes ("10.0.0.0/8, 127.0.0.1, ::1"). Blank entries are skipped;
// an empty list trusts nobody.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR prefix", f)
			}
			if p.Addr().Is4In6() {
				// ::ffff:10.0.0.0/104 names the IPv4 prefix 10.0.0.0/8, the
				// form client addresses are compared in.
				if p.Bits() < 96 {
					return nil, fmt.Errorf("trusted proxy %q: IPv4-mapped prefix shorter than /96", f)
				}
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR prefix", f)
		}
		// A zone names an interface of this host, which says nothing about
		// which peers are proxies.
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
