// Package tr069emu is the TR-069 emulator target: a load-test controller
// (/api) that runs a batch of CPEs from one shared configuration and a
// single-device controller (/apiV2) with a per-device lifecycle. The CWMP
// client of each device is package cpe; parameter trees are package tree.
package tr069emu

import (
	"context"
	"cpesuite/internal/platform/fsx"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"cpesuite/internal/platform/httpauth"
	"cpesuite/internal/tr069emu/cpe"
	"cpesuite/internal/tr069emu/tree"
)

// Emulator owns the batch, the single devices and their shared resources.
type Emulator struct {
	cfg   Config
	log   *slog.Logger
	env   *cpe.Env
	files *treeFiles
	store *storedDevices
	logs  *deviceLogs
	cr    *httpauth.Verifier

	// crBase is the connection request URL prefix; the module points it at
	// the bound listener.
	crBase atomic.Pointer[string]
	acsPW  atomic.Pointer[string]

	propsMu   sync.Mutex
	props     Properties
	propsPath string
	// globalUpdatable is the load test's auto-update list.
	globalUpdatable []cpe.Updatable

	mu      sync.Mutex
	batch   *batch
	singles map[string]*single
	ctx     context.Context
}

// single is one device of the /apiV2 controller.
type single struct {
	dev *cpe.Device
	cfg InitDeviceDto
}

// New opens the emulator's folder (properties, trees, stored devices,
// logs) and prepares the shared HTTP client.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Emulator, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("emulator data dir: %w", err)
	}
	tr, err := acsTransport(cfg)
	if err != nil {
		return nil, err
	}
	e := &Emulator{cfg: cfg, log: log, singles: map[string]*single{}, ctx: context.Background(),
		propsPath: filepath.Join(cfg.DataDir, "emulator.properties")}
	e.env = &cpe.Env{Transport: tr, Credentials: e.acsCredentials, Log: log, DiagTimeout: cfg.DiagTimeout, MinRetry: cfg.MinRetry}
	if e.files, err = newTreeFiles(filepath.Join(cfg.DataDir, "trees"), cfg.MaxUpload); err != nil {
		return nil, fmt.Errorf("tree folder: %w", err)
	}
	if e.store, err = openStored(filepath.Join(cfg.DataDir, "stored-devices.json")); err != nil {
		return nil, fmt.Errorf("stored devices: %w", err)
	}
	if e.logs, err = newDeviceLogs(filepath.Join(cfg.DataDir, "logs")); err != nil {
		return nil, fmt.Errorf("device logs: %w", err)
	}
	if err := e.loadProperties(); err != nil {
		return nil, err
	}
	if err := e.loadGlobalUpdatable(); err != nil {
		return nil, err
	}
	e.cr = &httpauth.Verifier{Realm: "cpesuite-cpe", Digest: true, Creds: httpauth.CredentialsFunc(e.crLookup)}
	e.SetListenAddr(cfg.Addr)
	if reg != nil {
		if err := e.registerMetrics(reg); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// acsTransport is the template every CWMP session copies for its own
// connection (cpe.Env.Transport): the TLS trust the operator configured. The
// TLS session cache is shared so that a session's new connection resumes
// instead of paying a full handshake; it carries no CWMP state.
func acsTransport(cfg Config) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure, //nolint:gosec // opt-in for labs
		ClientSessionCache: tls.NewLRUClientSessionCache(0)}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CPESUITE_TR069_EMULATOR_CA_FILE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CPESUITE_TR069_EMULATOR_CA_FILE: %s holds no PEM certificate", cfg.CAFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return tr, nil
}

// crHostPort is the host:port put in ConnectionRequestURL.
func crHostPort(host, listen string) string {
	lh, port, err := net.SplitHostPort(listen)
	if err != nil {
		lh, port = "", "8555"
	}
	if host == "" {
		host = lh
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// SetListenAddr points connection request URLs at the bound listener.
func (e *Emulator) SetListenAddr(addr string) {
	base := fmt.Sprintf("http://%s/cr/", crHostPort(e.cfg.CRHost, addr))
	e.crBase.Store(&base)
}

func (e *Emulator) crURL(serial string) string { return *e.crBase.Load() + serial }

// acsCredentials returns the CPE credentials; without a configured password
// the ACS's generated one is read (once it exists).
func (e *Emulator) acsCredentials() (string, string) {
	if e.cfg.ACSPassword != "" {
		return e.cfg.ACSUsername, e.cfg.ACSPassword
	}
	if p := e.acsPW.Load(); p != nil {
		return e.cfg.ACSUsername, *p
	}
	if e.cfg.ACSPasswordFile != "" {
		if b, err := os.ReadFile(e.cfg.ACSPasswordFile); err == nil {
			pw := strings.TrimSpace(string(b))
			if pw != "" {
				e.acsPW.Store(&pw)
				return e.cfg.ACSUsername, pw
			}
		}
	}
	return e.cfg.ACSUsername, ""
}

// crCredentials are the connection request credentials of t: its own
// ManagementServer values when both are set (as an ACS does with SPV), else
// the configured ones.
func (e *Emulator) crCredentials(t *tree.Tree) (string, string) {
	root := t.Template().Root()
	u, _ := t.Get(root + "ManagementServer.ConnectionRequestUsername")
	p, _ := t.Get(root + "ManagementServer.ConnectionRequestPassword")
	if u.Value != "" && p.Value != "" {
		return u.Value, p.Value
	}
	if e.cfg.CRUsername != "" {
		return e.cfg.CRUsername, e.cfg.CRPassword
	}
	return e.acsCredentials()
}

type crDeviceKey struct{}

func (e *Emulator) crLookup(ctx context.Context, username string) (string, bool, error) {
	d, _ := ctx.Value(crDeviceKey{}).(*cpe.Device)
	if d == nil {
		return "", false, nil
	}
	u, p := e.crCredentials(d.Tree())
	if u != username || p == "" {
		return "", false, nil
	}
	return p, true, nil
}

// Start remembers the module's context for devices it starts.
func (e *Emulator) Start(ctx context.Context) {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
}

// Shutdown stops every device.
func (e *Emulator) Shutdown() {
	e.StopBatch(false)
	e.mu.Lock()
	var devs []*cpe.Device
	for _, s := range e.singles {
		devs = append(devs, s.dev)
	}
	e.singles = map[string]*single{}
	e.mu.Unlock()
	stopAll(devs)
}

// stopAll stops devices in parallel: each Stop waits for its runner.
func stopAll(devs []*cpe.Device) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, d := range devs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			d.Stop()
			<-sem
		}()
	}
	wg.Wait()
}

// device finds a running device of the batch or the single controller.
func (e *Emulator) device(serial string) (*cpe.Device, error) {
	if err := checkSerial(serial); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.singles[serial]; s != nil {
		return s.dev, nil
	}
	if b := e.batch; b != nil {
		if d := b.get(serial); d != nil {
			return d, nil
		}
	}
	return nil, notFound("no running device with serial %s", serial)
}

// singleDevice finds a running /apiV2 device.
func (e *Emulator) singleDevice(serial string) (*single, error) {
	if err := checkSerial(serial); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.singles[serial]; s != nil {
		return s, nil
	}
	return nil, notFound("no running device with serial %s", serial)
}

// Properties returns the current properties.
func (e *Emulator) Properties() Properties {
	e.propsMu.Lock()
	defer e.propsMu.Unlock()
	return e.props
}

// loadProperties reads the properties file, writing the defaults on first
// start. A file without the taskDelay keys gets the defaults, logged once.
func (e *Emulator) loadProperties() error {
	data, err := os.ReadFile(e.propsPath)
	if errors.Is(err, os.ErrNotExist) {
		e.props = DefaultProperties()
		e.env.SetSettings(e.props.settings())
		return fsx.WriteFileAtomic(e.propsPath, encodeProperties(e.props))
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Base(e.propsPath), err)
	}
	p, missing, err := decodeProperties(data)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(e.propsPath), err)
	}
	if missing {
		e.log.Info("properties file predates the taskDelay keys; those missing use the default", "default_seconds", DefaultTaskDelay)
	}
	e.props = p
	e.env.SetSettings(p.settings())
	return nil
}

// SetProperties validates, persists and applies new properties. Delays and
// modes apply to running devices at once; the batch shape at next start.
func (e *Emulator) SetProperties(p Properties) error {
	e.propsMu.Lock()
	defer e.propsMu.Unlock()
	p.periodicSeconds = e.props.periodicSeconds
	if err := p.Validate(e.cfg.MaxDevices); err != nil {
		return err
	}
	if _, err := e.files.Template(p.ParamsXML); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(e.propsPath, encodeProperties(p)); err != nil {
		return fmt.Errorf("saving properties: %w", err)
	}
	e.props = p
	e.env.SetSettings(p.settings())
	return nil
}

// updateProperties applies fn to a copy and saves it.
func (e *Emulator) updateProperties(fn func(p *Properties) error) error {
	e.propsMu.Lock()
	defer e.propsMu.Unlock()
	p := e.props
	if err := fn(&p); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(e.propsPath, encodeProperties(p)); err != nil {
		return fmt.Errorf("saving properties: %w", err)
	}
	e.props = p
	e.env.SetSettings(p.settings())
	return nil
}

// Statistics is the /apiV2/statistics shape.
type Statistics struct {
	ActiveEmulators      int `json:"activeEmulators"`
	StoredConfigurations int `json:"storedConfigurations"`
	EmulatorsInSession   int `json:"emulatorsInSession"`
}

// Statistics counts the single-device controller's devices.
func (e *Emulator) Statistics() Statistics {
	e.mu.Lock()
	st := Statistics{ActiveEmulators: len(e.singles)}
	for _, s := range e.singles {
		if s.dev.InSession() {
			st.EmulatorsInSession++
		}
	}
	e.mu.Unlock()
	st.StoredConfigurations = e.store.Len()
	return st
}

func (e *Emulator) registerMetrics(reg prometheus.Registerer) error {
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tr069emu_devices", Help: "Running emulated devices (batch and single).",
			ConstLabels: nil}, func() float64 {
			c := e.DeviceCounts()
			e.mu.Lock()
			n := len(e.singles)
			e.mu.Unlock()
			return float64(c.Total + n)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tr069emu_devices_in_session", Help: "Devices in a CWMP session now."},
			func() float64 { return float64(e.env.InSession.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tr069emu_sessions_total", Help: "CWMP sessions whose Inform the ACS accepted."},
			func() float64 { return float64(e.env.Sessions.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tr069emu_session_failures_total", Help: "CWMP sessions that failed and were retried."},
			func() float64 { return float64(e.env.Failures.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tr069emu_session_seconds_total", Help: "Summed duration of successful CWMP sessions (divide by tr069emu_sessions_total for the mean)."},
			func() float64 { return float64(e.env.SessionNanos.Load()) / 1e9 }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// ConnectionRequest handles GET /cr/{serial}: Digest-authenticated, then a
// session with 6 CONNECTION REQUEST. A device already in a session answers
// 503, as TR-069 3.2.2 allows.
func (e *Emulator) ConnectionRequest(w http.ResponseWriter, r *http.Request) {
	serial := r.PathValue("serial")
	d, err := e.device(serial)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if u, _ := e.crCredentials(d.Tree()); u == "" {
		http.Error(w, "connection requests are disabled", http.StatusForbidden)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), crDeviceKey{}, d))
	if _, err := e.cr.Verify(r); err != nil {
		e.cr.Reject(w, r, err)
		return
	}
	if !e.crEnabled(serial) {
		http.Error(w, "connection requests are disabled", http.StatusForbidden)
		return
	}
	if !d.ConnectionRequest() {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "session in progress", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// crEnabled reports whether the device accepts connection requests: batch
// devices per connectionRequestEnabled, single ones per their
// enableHttpConnectionRequest.
func (e *Emulator) crEnabled(serial string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.singles[serial]; s != nil {
		return s.cfg.EnableHTTPConnectionRequest
	}
	return e.batch != nil && e.batch.crEnabled
}
