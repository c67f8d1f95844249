package tr143

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"time"
)

// defaultTCPPingPort is the port of the TCP fallback when Host has none.
const defaultTCPPingPort = "80"

// pingSpec is a ping's validated input.
type pingSpec struct {
	host, port string
	network    string // ip, ip4 or ip6
	reps       int
	timeout    time.Duration
	size       int
	dscp       int
}

// parsePing validates the ping parameters; a non-empty state is the error
// to report. An empty Host cannot be resolved; out-of-range numbers, which
// the tree should have refused at SetParameterValues, are Error_Other.
func parsePing(dataModel string, in inputs) (pingSpec, string) {
	var spec pingSpec
	spec.host, spec.port = splitHost(in.str("Host"))
	if spec.host == "" {
		return spec, StateCannotResolveHostName
	}
	reps, ok1 := in.uint("NumberOfRepetitions", defaultPingRepetitions, maxPingRepetitions)
	timeout, ok2 := in.uint("Timeout", defaultPingTimeoutMs, 1<<32-1)
	size, ok3 := in.uint("DataBlockSize", defaultPingDataBlockSize, 65535)
	dscp, ok4 := in.uint("DSCP", 0, 63)
	if !ok1 || !ok2 || !ok3 || !ok4 || reps == 0 || timeout == 0 || size == 0 {
		return spec, StateOther
	}
	spec.reps, spec.size, spec.dscp = int(reps), int(size), int(dscp)
	spec.timeout = time.Duration(timeout) * time.Millisecond
	spec.network = "ip"
	if dataModel == TR181 {
		spec.network = in.network("ip")
	}
	return spec, ""
}

// splitHost accepts "host", "host:port", "[v6]:port" and a bare IPv6
// address; the port only matters to the TCP fallback.
func splitHost(h string) (host, port string) {
	if host, port, err := net.SplitHostPort(h); err == nil {
		return host, port
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ""
}

// prober sends one echo and reports its round trip.
type prober interface {
	probe(ctx context.Context, seq int, timeout time.Duration) (time.Duration, bool)
}

type pingStats struct {
	success, failure int64
	min, max, sum    time.Duration
}

func (ps *pingStats) add(rtt time.Duration) {
	if ps.success == 0 || rtt < ps.min {
		ps.min = rtt
	}
	ps.max = max(ps.max, rtt)
	ps.sum += rtt
	ps.success++
}

func runPing(ctx context.Context, dataModel string, in inputs, opt Options, k knobs) map[string]string {
	spec, state := parsePing(dataModel, in)
	if state != "" {
		return failure(dataModel, IPPing, in.obj, state)
	}
	runCtx, cancel := context.WithTimeout(ctx, runTimeout(opt, 0))
	defer cancel()
	dst, err := resolveHost(runCtx, spec.host, spec.network)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return failure(dataModel, IPPing, in.obj, ctxState(ctx, dataModel, IPPing))
		}
		return failure(dataModel, IPPing, in.obj, StateCannotResolveHostName)
	}

	var p prober
	method := methodTCP
	if !k.forceTCPPing {
		h := icmp4
		if dst.IP.To4() == nil {
			h = icmp6
		}
		// DSCP is not applied to ICMP: the shared raw socket carries
		// every ping at once and cannot mark them one by one.
		if s, err := h.acquire(); err == nil {
			defer h.release()
			p, method = newICMPProber(s, dst, spec.size), methodICMP
		}
	}
	if p == nil {
		port := spec.port
		if port == "" {
			port = defaultTCPPingPort
		}
		p = tcpProber{addr: net.JoinHostPort(dst.String(), port), dscp: spec.dscp}
	}

	// Echoes go back to back, without ping(8)'s one-second interval:
	// TR-143 sets none, and an emulated CPE should answer promptly.
	var ps pingStats
	for i := range spec.reps {
		if runCtx.Err() != nil {
			// Out of time: the echoes not sent did not succeed.
			ps.failure += int64(spec.reps - i)
			break
		}
		if rtt, ok := p.probe(runCtx, i, spec.timeout); ok {
			ps.add(rtt)
		} else {
			ps.failure++
		}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return failure(dataModel, IPPing, in.obj, ctxState(ctx, dataModel, IPPing))
	}
	out := map[string]string{in.obj + "DiagnosticsState": StateComplete}
	writePing(out, in.obj, dataModel, method, ps)
	return out
}

// resolveHost picks the address to ping: IPv4 first unless the network
// says otherwise.
func resolveHost(ctx context.Context, host, network string) (*net.IPAddr, error) {
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	ips = filterFamily(ips, network)
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no address of the requested IP version", Name: host, IsNotFound: true}
	}
	return &ips[0], nil
}

// tcpProber measures a TCP handshake instead of an echo, for processes
// that may not open raw sockets. A refused connection still took a round
// trip to the host (SYN out, RST back), so it counts as a success with that
// round trip; only silence or an unreachable network is a failure.
type tcpProber struct {
	addr string
	dscp int
}

func (p tcpProber) probe(ctx context.Context, _ int, timeout time.Duration) (time.Duration, bool) {
	d := net.Dialer{Timeout: timeout, Control: dscpControl(p.dscp)}
	start := time.Now()
	c, err := d.DialContext(ctx, "tcp", p.addr)
	rtt := time.Since(start)
	if err == nil {
		_ = c.Close()
		return rtt, true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return rtt, true
	}
	return 0, false
}

// writePing writes the ping results: milliseconds, rounded to the nearest,
// and on TR-181 the *Detailed microsecond figures too.
func writePing(out map[string]string, obj, dataModel, method string, ps pingStats) {
	var avg time.Duration
	if ps.success > 0 {
		avg = ps.sum / time.Duration(ps.success)
	}
	ms := func(d time.Duration) string { return itoa(int64((d + time.Millisecond/2) / time.Millisecond)) }
	us := func(d time.Duration) string { return itoa(d.Microseconds()) }
	out[obj+"SuccessCount"] = itoa(ps.success)
	out[obj+"FailureCount"] = itoa(ps.failure)
	out[obj+"AverageResponseTime"] = ms(avg)
	out[obj+"MinimumResponseTime"] = ms(ps.min)
	out[obj+"MaximumResponseTime"] = ms(ps.max)
	if dataModel == TR181 {
		out[obj+"AverageResponseTimeDetailed"] = us(avg)
		out[obj+"MinimumResponseTimeDetailed"] = us(ps.min)
		out[obj+"MaximumResponseTimeDetailed"] = us(ps.max)
	}
	out[obj+MethodParam] = method
}
