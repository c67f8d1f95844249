package tr143

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"
)

const (
	// responseHeaderTimeout is how long a server may keep a connection
	// silent after the request before the test ends in Error_NoResponse
	// (unless the run's Timeout strikes first).
	responseHeaderTimeout = 30 * time.Second
	// ioBufferSize is the transport's socket buffer and the body read
	// size: large enough that syscalls do not cap loopback throughput.
	ioBufferSize = 64 << 10
	// maxResponseDrain bounds how much of an upload's answer is read.
	maxResponseDrain = 64 << 10
	userAgent        = "cpesuite-tr069emu/tr143"
)

// uploadPattern is the upload payload, pseudo-random so that compression
// anywhere on the path cannot inflate the measured throughput.
var uploadPattern = func() []byte {
	b := make([]byte, ioBufferSize)
	r := rand.New(rand.NewPCG(0x143, 0x0b0d))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

var (
	errIncorrectSize = errors.New("body shorter than its announced length")
	errNoData        = errors.New("nothing received within the test duration")
)

// statusError is a non-2xx answer.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("server answered %d", e.code) }

// transferSpec is a transfer's validated input.
type transferSpec struct {
	url      string
	network  string // tcp, tcp4 or tcp6
	dscp     int
	conns    int
	perConn  bool
	duration time.Duration // > 0: time-based test
	length   int64         // upload: TestFileLength, split across connections
}

func parseTransfer(dataModel string, kind Kind, in inputs) (transferSpec, bool) {
	spec := transferSpec{conns: 1, network: "tcp"}
	// TR-143 calls it DSCP in both data models' transfer objects.
	urlName, dscpName := "DownloadURL", "DSCP"
	if kind == Upload {
		urlName = "UploadURL"
	}
	spec.url = in.str(urlName)
	u, err := url.Parse(spec.url)
	if spec.url == "" || err != nil || u.Scheme != "http" || u.Host == "" {
		return spec, false
	}
	dscp, ok := in.uint(dscpName, 0, 63)
	if !ok {
		return spec, false
	}
	spec.dscp = int(dscp)
	if dataModel == TR181 {
		n, ok1 := in.uint("NumberOfConnections", 1, math.MaxUint32)
		d, ok2 := in.uint("TimeBasedTestDuration", 0, maxTimeBasedDurationSeconds)
		if !ok1 || !ok2 {
			return spec, false
		}
		spec.conns = int(min(max(n, 1), MaxConnections))
		spec.duration = time.Duration(d) * time.Second
		spec.perConn = in.bool("EnablePerConnectionResults")
		spec.network = in.network("tcp")
	}
	if kind == Upload && spec.duration == 0 {
		n, ok := in.uint("TestFileLength", 0, math.MaxUint32)
		if !ok {
			return spec, false
		}
		spec.length = int64(n)
	}
	return spec, true
}

// badInputState is the state of a transfer whose parameters cannot be
// used. TR-098 has no generic error, and failing to start is what happens;
// TR-181 has Error_Other for it.
func badInputState(dataModel string) string {
	if dataModel == TR181 {
		return StateOther
	}
	return StateInitConnectionFailed
}

func runTransfer(ctx context.Context, dataModel string, kind Kind, in inputs, opt Options) map[string]string {
	spec, ok := parseTransfer(dataModel, kind, in)
	if !ok {
		return failure(dataModel, kind, in.obj, badInputState(dataModel))
	}
	runCtx, cancel := context.WithTimeout(ctx, runTimeout(opt, spec.duration+TimeBasedGrace)+stallAllowance(opt))
	defer cancel()
	// The first failing connection ends the others: the test has failed.
	connCtx, stop := context.WithCancel(runCtx)
	defer stop()

	var deadline time.Time
	if spec.duration > 0 {
		deadline = time.Now().Add(spec.duration)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		state string
		stats = make([]*connStats, spec.conns)
		pace  = newPacer(opt.SpeedDelay, connCtx.Done(), deadline)
	)
	for i := range stats {
		st := &connStats{pace: pace, onBytes: opt.OnBytes, upload: kind == Upload}
		stats[i] = st
		wg.Go(func() {
			var err error
			if kind == Download {
				err = download(connCtx, spec, deadline, st)
			} else {
				err = upload(connCtx, spec, deadline, uploadShare(spec.length, spec.conns, i), st)
			}
			if err == nil {
				return
			}
			s := classify(ctx, runCtx, dataModel, kind, err, st)
			mu.Lock()
			defer mu.Unlock()
			if state == "" {
				state = s
				stop()
			}
		})
	}
	wg.Wait()
	if state != "" {
		return failure(dataModel, kind, in.obj, state)
	}
	snaps := make([]connFigures, len(stats))
	for i, st := range stats {
		snaps[i] = st.snapshot()
	}
	return transferResults(dataModel, kind, in.obj, spec, snaps)
}

// uploadShare splits the test file across connections, the first ones
// taking the remainder.
func uploadShare(total int64, conns, i int) int64 {
	n := total / int64(conns)
	if int64(i) < total%int64(conns) {
		n++
	}
	return n
}

// classify maps a connection's failure to a TR-143 state.
func classify(parent, runCtx context.Context, dataModel string, kind Kind, err error, st *connStats) string {
	if runCtx.Err() != nil {
		return ctxState(parent, dataModel, kind)
	}
	var se *statusError
	switch {
	case errors.As(err, &se):
		return StateTransferFailed
	case errors.Is(err, errIncorrectSize):
		return StateIncorrectSize
	case errors.Is(err, errNoData):
		return StateNoResponse
	}
	s := st.snapshot()
	switch {
	case s.dialErr != nil && isDNSError(s.dialErr):
		return StateCannotResolveHostName
	case s.dialErr != nil:
		return StateInitConnectionFailed
	case s.read == 0:
		// Connected, request sent, and not one byte back.
		return StateNoResponse
	}
	return StateTransferFailed
}

func newTransport(spec transferSpec, st *connStats) *http.Transport {
	return &http.Transport{
		// A CPE talks to the test server directly; no proxy from the
		// emulator's environment.
		Proxy:       nil,
		DialContext: st.dialer(spec.network, spec.dscp),
		// Compressed bytes would not be the test file's bytes.
		DisableCompression: true,
		// One TCP connection per test connection: a time-based download
		// re-requests on it rather than opening more.
		MaxConnsPerHost:       1,
		MaxIdleConnsPerHost:   1,
		ResponseHeaderTimeout: responseHeaderTimeout,
		WriteBufferSize:       ioBufferSize,
		ReadBufferSize:        ioBufferSize,
	}
}

func newClient(tr *http.Transport) *http.Client {
	return &http.Client{
		Transport: tr,
		// The URL is the test resource: a redirect is the server's
		// failure to serve it, and following it would mix two servers'
		// traffic in one measurement.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// download GETs the URL on one connection: once, or, in a time-based test,
// again and again on the same connection until the deadline.
func download(ctx context.Context, spec transferSpec, deadline time.Time, st *connStats) error {
	tr := newTransport(spec, st)
	defer tr.CloseIdleConnections()
	client := newClient(tr)
	testCtx := ctx
	if !deadline.IsZero() {
		st.mu.Lock()
		st.f.until = deadline
		st.mu.Unlock()
		var cancel context.CancelFunc
		testCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	buf := make([]byte, ioBufferSize)
	for {
		n, err := getOnce(testCtx, client, spec.url, buf)
		if err != nil {
			if !deadline.IsZero() && testCtx.Err() != nil && ctx.Err() == nil {
				// The test window closed: the normal end of a time-based
				// test, whatever the transfer was doing.
				if st.snapshot().read == 0 {
					return errNoData
				}
				return nil
			}
			return err
		}
		// An empty resource would have a time-based test spin on
		// requests; one round of it is the whole test.
		if deadline.IsZero() || n == 0 {
			return nil
		}
	}
}

// getOnce sends one GET and reads the body to its end, returning the body
// bytes read.
func getOnce(ctx context.Context, client *http.Client, rawURL string, buf []byte) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, &statusError{resp.StatusCode}
	}
	var n int64
	for {
		m, err := resp.Body.Read(buf)
		n += int64(m)
		switch {
		case err == io.EOF:
			return n, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			// net/http reports a body cut short of its Content-Length
			// (or chunked framing) this way.
			return n, errIncorrectSize
		case err != nil:
			return n, err
		}
	}
}

// upload POSTs share bytes, or, in a time-based test, a chunked body that
// ends at the deadline, and waits for the server's answer.
func upload(ctx context.Context, spec transferSpec, deadline time.Time, share int64, st *connStats) error {
	tr := newTransport(spec, st)
	defer tr.CloseIdleConnections()
	client := newClient(tr)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotFirstResponseByte: func() { st.markResponse(time.Now()) },
	})
	var body io.Reader = http.NoBody
	length := share
	switch {
	case !deadline.IsZero():
		body, length = &uploadBody{deadline: deadline, st: st}, -1
	case share > 0:
		body = &uploadBody{left: share, st: st}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.url, body)
	if err != nil {
		return err
	}
	req.ContentLength = length
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseDrain))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &statusError{resp.StatusCode}
	}
	return nil
}

// uploadBody produces the upload payload: left bytes, or until deadline
// when that is set.
type uploadBody struct {
	left     int64
	deadline time.Time
	st       *connStats
	off      int
	started  bool
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.deadline.IsZero() {
		if b.left == 0 {
			return 0, io.EOF
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
	} else if !time.Now().Before(b.deadline) {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], uploadPattern[b.off:])
		n += c
		b.off = (b.off + c) % len(uploadPattern)
	}
	if b.deadline.IsZero() {
		b.left -= int64(n)
	}
	if !b.started && n > 0 {
		b.started = true
		b.st.markBodyStarted()
	}
	return n, nil
}

// connMeasure is one connection's figures in TR-143 terms.
type connMeasure struct {
	tcpReq, tcpResp, rom, bom, eom time.Time
	test, rx, tx                   int64
}

// measure reads TR-143's definitions off the socket figures. ROM is when
// the request went onto the socket. Download: BOM and EOM are the first and
// last bytes received ("first/last data packet received"), and test bytes
// are everything received, HTTP headers included. Upload: BOM is the first
// socket write carrying payload, EOM the arrival of the server's answer
// ("HTTP successful response code received"), test bytes everything sent.
func measure(kind Kind, s connFigures) connMeasure {
	m := connMeasure{tcpReq: s.tcpOpenRequest, tcpResp: s.tcpOpenResponse, rom: s.firstWrite, rx: s.read, tx: s.written}
	if kind == Download {
		m.bom, m.eom, m.test = s.firstRead, s.lastRead, s.read
		return m
	}
	m.bom, m.eom, m.test = s.firstPayload, s.responseAt, s.written
	if m.bom.IsZero() {
		// An empty share: the request itself is all there was to send.
		m.bom = s.firstWrite
	}
	if m.eom.IsZero() {
		m.eom = s.firstRead
	}
	return m
}

// aggregate combines connections as TR-181 says: earliest ROM and BOM,
// latest EOM and TCP open times, byte counts summed.
func aggregate(ms []connMeasure) connMeasure {
	var a connMeasure
	earliest := func(dst *time.Time, t time.Time) {
		if !t.IsZero() && (dst.IsZero() || t.Before(*dst)) {
			*dst = t
		}
	}
	latest := func(dst *time.Time, t time.Time) {
		if t.After(*dst) {
			*dst = t
		}
	}
	for _, m := range ms {
		earliest(&a.rom, m.rom)
		earliest(&a.bom, m.bom)
		latest(&a.eom, m.eom)
		latest(&a.tcpReq, m.tcpReq)
		latest(&a.tcpResp, m.tcpResp)
		a.test += m.test
		a.rx += m.rx
		a.tx += m.tx
	}
	return a
}

func transferResults(dataModel string, kind Kind, obj string, spec transferSpec, snaps []connFigures) map[string]string {
	ms := make([]connMeasure, len(snaps))
	for i, s := range snaps {
		ms[i] = measure(kind, s)
	}
	out := map[string]string{obj + "DiagnosticsState": StateCompleted}
	writeMeasure(out, obj, dataModel, kind, aggregate(ms))
	if kind == Upload && spec.duration == 0 {
		out[obj+"TestFileLength"] = itoa(spec.length)
	}
	if dataModel != TR181 {
		return out
	}
	if !spec.perConn {
		out[obj+perConnectionEntriesParam] = "0"
		return out
	}
	out[obj+perConnectionEntriesParam] = itoa(int64(len(ms)))
	for i, m := range ms {
		pc := fmt.Sprintf("%s%s%d.", obj, perConnectionResultPrefix, i+1)
		writeMeasure(out, pc, TR181, kind, m)
	}
	return out
}

// writeMeasure writes the figures the data model has for a transfer under
// prefix, the object itself or one of its PerConnectionResult entries.
func writeMeasure(out map[string]string, prefix, dataModel string, kind Kind, m connMeasure) {
	out[prefix+"ROMTime"] = formatTime(m.rom)
	out[prefix+"BOMTime"] = formatTime(m.bom)
	out[prefix+"EOMTime"] = formatTime(m.eom)
	out[prefix+"TCPOpenRequestTime"] = formatTime(m.tcpReq)
	out[prefix+"TCPOpenResponseTime"] = formatTime(m.tcpResp)
	// The emulated interface carries nothing but the test, and IP-layer
	// overhead is not visible from a socket: Total* are the socket counts.
	if kind == Download {
		out[prefix+"TestBytesReceived"] = itoa(m.test)
		out[prefix+"TotalBytesReceived"] = itoa(m.rx)
		if dataModel == TR181 {
			out[prefix+"TotalBytesSent"] = itoa(m.tx)
		}
		return
	}
	out[prefix+"TotalBytesSent"] = itoa(m.tx)
	if dataModel == TR181 {
		out[prefix+"TestBytesSent"] = itoa(m.test)
		out[prefix+"TotalBytesReceived"] = itoa(m.rx)
	}
}

// failure is the result of a failed run: the state, and every result
// parameter reset so that figures of an earlier run do not survive.
func failure(dataModel string, kind Kind, obj, state string) map[string]string {
	out := map[string]string{}
	if kind == IPPing {
		writePing(out, obj, dataModel, "", pingStats{})
	} else {
		writeMeasure(out, obj, dataModel, kind, connMeasure{})
		if dataModel == TR181 {
			out[obj+perConnectionEntriesParam] = "0"
		}
	}
	out[obj+"DiagnosticsState"] = state
	return out
}
