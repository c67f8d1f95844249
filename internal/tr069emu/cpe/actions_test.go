package cpe

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/speedtest"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/tr143"
	"cpesuite/internal/tr069emu/tree"
)

// transferDone waits for the session that reports the transfer of key:
// an Inform with 7 TRANSFER COMPLETE and mEvent/key, then the
// TransferComplete; it returns the TransferComplete.
func transferDone(t *testing.T, a *acsDouble, serial string, from int, mEvent, key string) *cwmp.TransferComplete {
	t.Helper()
	inf, i := a.waitInform(t, serial, from, cwmp.EventTransferComplete, "")
	if !hasEvent(inf, mEvent, key) {
		t.Errorf("events %v, want %s with CommandKey %q too", codes(inf.Event), mEvent, key)
	}
	p, _ := a.waitPost(t, serial, i+1, "TransferComplete", func(p post) bool { return p.method() == "TransferComplete" })
	tc := p.Env.Body.(*cwmp.TransferComplete)
	if tc.CommandKey != key {
		t.Errorf("TransferComplete CommandKey %q, want %q", tc.CommandKey, key)
	}
	if tc.StartTime.IsZero() || tc.CompleteTime.Before(tc.StartTime) {
		t.Errorf("TransferComplete times %v .. %v", tc.StartTime, tc.CompleteTime)
	}
	return tc
}

// fileServer serves /fw.bin (4096 bytes), /auth/fw.bin (Basic u:p),
// /missing (404), accepts uploads on /upload and fails /upload-fail.
type fileServer struct {
	*httptest.Server
	mu      sync.Mutex
	uploads map[string][]byte
	hits    atomic.Int64
}

func newFileServer(t *testing.T) *fileServer {
	fs := &fileServer{uploads: map[string][]byte{}}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.hits.Add(1)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/fw.bin":
			_, _ = w.Write(make([]byte, 4096))
		case r.Method == http.MethodGet && r.URL.Path == "/auth/fw.bin":
			if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
				w.Header().Set("WWW-Authenticate", `Basic realm="files"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_, _ = w.Write(make([]byte, 4096))
		case r.URL.Path == "/upload" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
			b, _ := io.ReadAll(r.Body)
			fs.mu.Lock()
			fs.uploads[r.URL.Query().Get("n")] = b
			fs.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
		case r.URL.Path == "/upload-fail":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fileServer) upload(n string) []byte {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.uploads[n]
}

func TestDownloadAndUploadTransfers(t *testing.T) {
	t.Parallel()
	fs := newFileServer(t)
	dead := "http://" + testutil.FreeAddr(t)
	for _, tc := range []struct {
		name     string
		download *cwmp.Download
		upload   *cwmp.Upload
		// code is the FaultStruct's (0: success), as filexfer documents them.
		code  cwmp.FaultCode
		check func(t *testing.T, serial string)
	}{
		{name: "download", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/fw.bin", FileSize: 4096}},
		{name: "download with credentials", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/auth/fw.bin", Username: "u", Password: "p"}},
		{name: "download missing file", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/missing"}, code: cwmp.FaultFileTransferFailure},
		{name: "download wrong credentials", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/auth/fw.bin", Username: "u", Password: "bad"}, code: cwmp.FaultFileTransferAuthFailure},
		{name: "download size mismatch", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/fw.bin", FileSize: 10}, code: cwmp.FaultFileCorrupted},
		{name: "download server down", download: &cwmp.Download{FileType: "1 Firmware Upgrade Image", URL: dead + "/fw.bin"}, code: cwmp.FaultFileServerUnreachable},
		{name: "upload configuration", upload: &cwmp.Upload{FileType: "1 Vendor Configuration File", URL: fs.URL + "/upload?n=config"},
			check: func(t *testing.T, serial string) {
				if b := string(fs.upload("config")); !strings.Contains(b, "DeviceInfo.SerialNumber="+serial) {
					t.Errorf("configuration upload lacks the serial: %.200q", b)
				}
			}},
		{name: "upload log", upload: &cwmp.Upload{FileType: "2 Vendor Log File", URL: fs.URL + "/upload?n=log"},
			check: func(t *testing.T, serial string) {
				if b := string(fs.upload("log")); !strings.HasPrefix(b, "log of "+serial) {
					t.Errorf("log upload %.200q", b)
				}
			}},
		{name: "upload refused", upload: &cwmp.Upload{FileType: "1 Vendor Configuration File", URL: fs.URL + "/upload-fail"}, code: cwmp.FaultUploadFailure},
		{name: "upload server down", upload: &cwmp.Upload{FileType: "1 Vendor Configuration File", URL: dead + "/upload"}, code: cwmp.FaultFileServerUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, tree.TR181, Settings{})
			key := "cmd-" + strings.ReplaceAll(tc.name, " ", "-")
			var resp cwmp.Message
			mEvent := cwmp.EventMDownload
			if tc.download != nil {
				tc.download.CommandKey = key
				resp = a.call(t, d, tc.download)
				if r := as[*cwmp.DownloadResponse](t, resp); r.Status != 1 {
					t.Fatalf("Download status %d, want 1 (TransferComplete follows)", r.Status)
				}
			} else {
				tc.upload.CommandKey = key
				mEvent = cwmp.EventMUpload
				resp = a.call(t, d, tc.upload)
				if r := as[*cwmp.UploadResponse](t, resp); r.Status != 1 {
					t.Fatalf("Upload status %d, want 1", r.Status)
				}
			}
			done := transferDone(t, a, d.Serial(), 0, mEvent, key)
			if got := done.FaultStruct; got.FaultCode != tc.code {
				t.Fatalf("FaultStruct %d %q, want code %d", got.FaultCode, got.FaultString, tc.code)
			}
			if tc.code != 0 && done.FaultStruct.FaultString == "" {
				t.Error("a failed transfer without FaultString")
			}
			if tc.check != nil {
				tc.check(t, d.Serial())
			}
		})
	}
}

func TestTransferURLMustBeHTTP(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR098, Settings{})
	for _, u := range []string{"ftp://files.example/fw.bin", "tftp://10.0.0.1/fw", "file:///etc/passwd", "fw.bin", "http://", "://bad"} {
		t.Run(u, func(t *testing.T) {
			f := fault(t, a.call(t, d, &cwmp.Download{CommandKey: "k", FileType: "1 Firmware Upgrade Image", URL: u}), cwmp.FaultUnsupportedProtocol)
			if f.FaultString == "" {
				t.Error("empty FaultString")
			}
			fault(t, a.call(t, d, &cwmp.Upload{CommandKey: "k", FileType: "1 Vendor Configuration File", URL: u}), cwmp.FaultUnsupportedProtocol)
		})
	}
	// Nothing was queued: no TransferComplete follows.
	_, end := a.waitSessionEnd(t, d.Serial(), len(a.all(d.Serial()))-1)
	connReq(t, d)
	inf, _ := a.waitInform(t, d.Serial(), end+1, cwmp.EventConnectionRequest, "")
	if hasEvent(inf, cwmp.EventTransferComplete, "") {
		t.Errorf("refused transfers reported: %v", codes(inf.Event))
	}
}

func TestTransferEmulation(t *testing.T) {
	t.Parallel()
	delays := [3]time.Duration{200 * time.Millisecond, 250 * time.Millisecond, 150 * time.Millisecond}
	fs := newFileServer(t)
	a, d := rpcDevice(t, tree.TR181, Settings{TransferEmulation: true, TransferDelays: delays})

	resp := a.await(t, d, a.queue(d.Serial(), &cwmp.Download{CommandKey: "emu-dl", FileType: "1 Firmware Upgrade Image", URL: fs.URL + "/fw.bin", DelaySeconds: 1}))
	as[*cwmp.DownloadResponse](t, resp.Env.Body)
	tc := transferDone(t, a, d.Serial(), 0, cwmp.EventMDownload, "emu-dl")
	if tc.FaultStruct.FaultCode != 0 {
		t.Errorf("emulated download failed: %+v", tc.FaultStruct)
	}
	if took := tc.CompleteTime.Sub(tc.StartTime); took < delays[0] {
		t.Errorf("emulated download took %v, want at least %v", took, delays[0])
	}
	if tc.StartTime.Before(resp.At.Add(time.Second)) {
		t.Errorf("download started %v after the response, want at least DelaySeconds 1 s", tc.StartTime.Sub(resp.At))
	}

	from := len(a.all(d.Serial()))
	as[*cwmp.UploadResponse](t, a.call(t, d, &cwmp.Upload{CommandKey: "emu-ul", FileType: "1 Vendor Configuration File", URL: fs.URL + "/upload"}))
	tc = transferDone(t, a, d.Serial(), from, cwmp.EventMUpload, "emu-ul")
	if took := tc.CompleteTime.Sub(tc.StartTime); tc.FaultStruct.FaultCode != 0 || took < delays[1] {
		t.Errorf("emulated upload: %+v in %v, want success in at least %v", tc.FaultStruct, took, delays[1])
	}

	// ChangeDUState waits its delay inside the session.
	id := a.queue(d.Serial(), &cwmp.ChangeDUState{CommandKey: "emu-du", Operations: []cwmp.Operation{cwmp.InstallOp{URL: fs.URL + "/du.ipk", UUID: "u-1"}}})
	answer := a.await(t, d, id)
	as[*cwmp.ChangeDUStateResponse](t, answer.Env.Body)
	ps := a.all(d.Serial())
	i := slices.IndexFunc(ps, func(p post) bool { return p.Env != nil && p.Env.ID == id })
	if gap := ps[i].At.Sub(ps[i-1].At); gap < delays[2] {
		t.Errorf("ChangeDUState answered after %v, want at least %v", gap, delays[2])
	}
	if n := fs.hits.Load(); n != 0 {
		t.Errorf("transfer emulation made %d requests to the file server", n)
	}
}

func TestChangeDUStateAndInvokeComplete(t *testing.T) {
	t.Parallel()
	a, d := rpcDevice(t, tree.TR181, Settings{})
	fault(t, a.call(t, d, &cwmp.ChangeDUState{CommandKey: "none"}), cwmp.FaultCPEInvalidArguments)
	ops := []cwmp.Operation{
		cwmp.InstallOp{URL: "http://files.example/app.ipk", UUID: "11111111-1111-1111-1111-111111111111", ExecutionEnvRef: "Device.SoftwareModules.ExecEnv.1"},
		cwmp.UpdateOp{UUID: "22222222-2222-2222-2222-222222222222", Version: "2.0", URL: "http://files.example/app2.ipk"},
		cwmp.UninstallOp{UUID: "33333333-3333-3333-3333-333333333333", Version: "1.0"},
	}
	as[*cwmp.ChangeDUStateResponse](t, a.call(t, d, &cwmp.ChangeDUState{CommandKey: "du-1", Operations: ops}))
	_, end := a.waitSessionEnd(t, d.Serial(), len(a.all(d.Serial()))-1)
	eventually(t, "session over", func() bool { return !d.InSession() })
	if err := d.Invoke("DUStateChangeComplete"); err != nil {
		t.Fatal(err)
	}
	inf, i := a.waitInform(t, d.Serial(), end+1, cwmp.EventDUStateChangeComplete, "")
	if !slices.Equal(codes(inf.Event), []string{cwmp.EventDUStateChangeComplete}) {
		t.Errorf("events %v", codes(inf.Event))
	}
	p, _ := a.waitPost(t, d.Serial(), i+1, "DUStateChangeComplete", func(p post) bool { return p.method() == "DUStateChangeComplete" })
	dsc := p.Env.Body.(*cwmp.DUStateChangeComplete)
	if dsc.CommandKey != "du-1" || len(dsc.Results) != 3 {
		t.Fatalf("DUStateChangeComplete %+v", dsc)
	}
	for k, want := range []struct{ uuid, state, version string }{
		{"11111111-1111-1111-1111-111111111111", "Installed", ""},
		{"22222222-2222-2222-2222-222222222222", "Installed", "2.0"},
		{"33333333-3333-3333-3333-333333333333", "Uninstalled", "1.0"},
	} {
		r := dsc.Results[k]
		if r.UUID != want.uuid || r.CurrentState != want.state || r.Version != want.version || !r.Resolved || r.Fault.FaultCode != 0 {
			t.Errorf("result %d: %+v, want %+v", k, r, want)
		}
		if r.StartTime.IsZero() || r.CompleteTime.IsZero() {
			t.Errorf("result %d without times", k)
		}
	}
	if dsc.Results[0].DeploymentUnitRef == "" {
		t.Error("install result without DeploymentUnitRef")
	}
	// The pending change is reported once.
	_, end = a.waitSessionEnd(t, d.Serial(), i)
	eventually(t, "session over", func() bool { return !d.InSession() })
	if err := d.Invoke("DUStateChangeComplete"); err != nil {
		t.Fatal(err)
	}
	_, i = a.waitInform(t, d.Serial(), end+1, cwmp.EventDUStateChangeComplete, "")
	p, _ = a.waitPost(t, d.Serial(), i+1, "second DUStateChangeComplete", func(p post) bool { return p.method() == "DUStateChangeComplete" })
	if dsc := p.Env.Body.(*cwmp.DUStateChangeComplete); dsc.CommandKey != "" || len(dsc.Results) != 0 {
		t.Errorf("second invoke repeated the results: %+v", dsc)
	}
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	const serial = "EMUINVOKE"
	d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url(serial), Options{Serial: serial, Bootstrap: true})
	a.waitSessionEnd(t, serial, 0)
	// A transfer gives TransferComplete its CommandKey.
	d.mu.Lock()
	d.lastCommand = "last-transfer"
	d.mu.Unlock()
	for _, tc := range []struct {
		name, code string
		request    string
	}{
		{"BootStrap", cwmp.EventBootstrap, ""},
		{"Boot", cwmp.EventBoot, ""},
		{"Periodic", cwmp.EventPeriodic, ""},
		{"ValueChange", cwmp.EventValueChange, ""},
		{"ConnectionRequest", cwmp.EventConnectionRequest, ""},
		{"TransferComplete", cwmp.EventTransferComplete, "TransferComplete"},
		{"Diagnostics", cwmp.EventDiagnosticsComplete, ""},
		{"DUStateChangeComplete", cwmp.EventDUStateChangeComplete, "DUStateChangeComplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InvokeEvents[tc.name]; got != tc.code {
				t.Fatalf("InvokeEvents[%q] = %q, want %q", tc.name, got, tc.code)
			}
			eventually(t, "idle device", func() bool { return !d.InSession() })
			from := len(a.all(serial))
			if err := d.Invoke(tc.name); err != nil {
				t.Fatal(err)
			}
			inf, i := a.waitInform(t, serial, from, tc.code, "")
			if !slices.Equal(codes(inf.Event), []string{tc.code}) {
				t.Errorf("events %v, want %s alone", codes(inf.Event), tc.code)
			}
			_, end := a.waitSessionEnd(t, serial, i)
			var requests []string
			for _, p := range a.all(serial)[i+1 : end+1] {
				if m := p.method(); m != "" {
					requests = append(requests, m)
				}
			}
			if want := slices.DeleteFunc([]string{tc.request}, func(s string) bool { return s == "" }); !slices.Equal(requests, want) {
				t.Errorf("requests %v, want %v", requests, want)
			}
			if tc.request == "TransferComplete" {
				p, _ := a.waitPost(t, serial, i+1, "TransferComplete", func(p post) bool { return p.method() == "TransferComplete" })
				if k := p.Env.Body.(*cwmp.TransferComplete).CommandKey; k != "last-transfer" {
					t.Errorf("TransferComplete CommandKey %q, want the last transfer's", k)
				}
			}
		})
	}
	for _, name := range []string{"boot", "BOOT", "Bootstrap", "bootstrap", "Scheduled", "", "6 CONNECTION REQUEST"} {
		if err := d.Invoke(name); !errors.Is(err, ErrUnknownEvent) {
			t.Errorf("Invoke(%q) = %v, want ErrUnknownEvent", name, err)
		}
	}
	// In a session: refused, and a connection request too.
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	a.configure(serial, func(dd *doubleDevice) {
		dd.onInform = func(*cwmp.Inform) { once.Do(func() { close(held) }); <-release }
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	eventually(t, "idle device", func() bool { return !d.InSession() })
	if err := d.Invoke("Periodic"); err != nil {
		t.Fatal(err)
	}
	<-held
	if !d.InSession() {
		t.Fatal("not in session while the ACS holds the Inform")
	}
	if err := d.Invoke("Boot"); !errors.Is(err, ErrInSession) {
		t.Errorf("Invoke in session = %v, want ErrInSession", err)
	}
	if d.ConnectionRequest() {
		t.Error("ConnectionRequest accepted in session")
	}
	close(release)
	eventually(t, "session over", func() bool { return !d.InSession() })
}

func TestSetPeriodic(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			enable, interval := m.root+"ManagementServer.PeriodicInformEnable", m.root+"ManagementServer.PeriodicInformInterval"
			d.SetPeriodic(3 * time.Second)
			if d.Periodic() != 3*time.Second || paramValue(t, d, interval) != "3" || paramValue(t, d, enable) != "true" {
				t.Errorf("after SetPeriodic(3s): %v %s=%s %s=%s", d.Periodic(), interval, paramValue(t, d, interval), enable, paramValue(t, d, enable))
			}
			d.SetPeriodic(50 * time.Millisecond)
			from := len(a.all(d.Serial()))
			_, i := a.waitInform(t, d.Serial(), from, cwmp.EventPeriodic, "")
			a.waitInform(t, d.Serial(), i+1, cwmp.EventPeriodic, "")

			d.SetPeriodic(0)
			if d.Periodic() != 0 || paramValue(t, d, enable) != "false" {
				t.Errorf("after SetPeriodic(0): %v %s=%s", d.Periodic(), enable, paramValue(t, d, enable))
			}
			d.mu.Lock()
			timer := d.periodicT
			d.mu.Unlock()
			if timer != nil {
				t.Error("periodic timer still armed after SetPeriodic(0)")
			}
		})
	}
}

// speedtestServer is the real speedtest target on an httptest server.
func speedtestServer(t *testing.T) string {
	t.Helper()
	st, err := speedtest.New(speedtest.Config{DefaultBytes: 1 << 20, MaxBytes: 1 << 30}, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	st.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// diagnose sets the diagnostic's parameters with DiagnosticsState
// Requested and waits for 8 DIAGNOSTICS COMPLETE; it returns the time from
// the end of the requesting session to that Inform.
func diagnose(t *testing.T, a *acsDouble, d *Device, obj string, params map[string]cwmp.Value) time.Duration {
	t.Helper()
	spv := &cwmp.SetParameterValues{ParameterKey: "diag", ParameterList: []cwmp.ParameterValueStruct{
		{Name: obj + "DiagnosticsState", Value: cwmp.String("Requested")}}}
	for n, v := range params {
		spv.ParameterList = append(spv.ParameterList, cwmp.ParameterValueStruct{Name: obj + n, Value: v})
	}
	id := a.queue(d.Serial(), spv)
	as[*cwmp.SetParameterValuesResponse](t, a.await(t, d, id).Env.Body)
	ps := a.all(d.Serial())
	i := slices.IndexFunc(ps, func(p post) bool { return p.Env != nil && p.Env.ID == id })
	end, j := a.waitSessionEnd(t, d.Serial(), i)
	p, _ := a.waitPost(t, d.Serial(), j+1, "8 DIAGNOSTICS COMPLETE", func(p post) bool {
		inf, ok := informOf(p)
		return ok && hasEvent(inf, cwmp.EventDiagnosticsComplete, "")
	})
	return p.At.Sub(end.At)
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	st := speedtestServer(t)
	pingHost := strings.TrimPrefix(st, "http://")
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			download := tr143.Object(m.name, tr143.Download)
			upload := tr143.Object(m.name, tr143.Upload)
			ping := tr143.Object(m.name, tr143.IPPing)

			diagnose(t, a, d, download, map[string]cwmp.Value{"DownloadURL": cwmp.String(st + "/download?size=200000")})
			if s := paramValue(t, d, download+"DiagnosticsState"); s != tr143.StateCompleted {
				t.Errorf("download state %q", s)
			}
			// TR-143 counts what the socket received: the body and the headers.
			if n, _ := strconv.Atoi(paramValue(t, d, download+"TestBytesReceived")); n < 200000 || n > 201000 {
				t.Errorf("TestBytesReceived %d, want 200000 and the headers", n)
			}
			if v := paramValue(t, d, download+"EOMTime"); v == cwmp.UnknownTime {
				t.Error("EOMTime not written")
			}

			diagnose(t, a, d, upload, map[string]cwmp.Value{"UploadURL": cwmp.String(st + "/upload"), "TestFileLength": cwmp.UnsignedInt(100000)})
			if s := paramValue(t, d, upload+"DiagnosticsState"); s != tr143.StateCompleted {
				t.Errorf("upload state %q", s)
			}
			if n, _ := strconv.Atoi(paramValue(t, d, upload+"TotalBytesSent")); n < 100000 {
				t.Errorf("TotalBytesSent %d, want at least 100000", n)
			}

			diagnose(t, a, d, ping, map[string]cwmp.Value{"Host": cwmp.String(pingHost), "NumberOfRepetitions": cwmp.UnsignedInt(2)})
			if s := paramValue(t, d, ping+"DiagnosticsState"); s != tr143.StateComplete {
				t.Errorf("ping state %q", s)
			}
			if n := paramValue(t, d, ping+"SuccessCount"); n != "2" {
				t.Errorf("ping SuccessCount %s", n)
			}

			// An unreachable server is an error state, still reported.
			diagnose(t, a, d, download, map[string]cwmp.Value{"DownloadURL": cwmp.String("http://" + testutil.FreeAddr(t) + "/download")})
			if s := paramValue(t, d, download+"DiagnosticsState"); !strings.HasPrefix(s, "Error_") {
				t.Errorf("download from a closed port: state %q", s)
			}
		})
	}
	t.Run("per-connection results", func(t *testing.T) {
		t.Parallel()
		a, d := rpcDevice(t, tree.TR181, Settings{})
		obj := tr143.Object(tree.TR181, tr143.Download)
		for _, conns := range []uint32{3, 1} {
			diagnose(t, a, d, obj, map[string]cwmp.Value{"DownloadURL": cwmp.String(st + "/download?size=30000"),
				"NumberOfConnections": cwmp.UnsignedInt(conns), "EnablePerConnectionResults": cwmp.Bool(true)})
			if s := paramValue(t, d, obj+"DiagnosticsState"); s != tr143.StateCompleted {
				t.Fatalf("%d connections: state %q", conns, s)
			}
			if n := paramValue(t, d, obj+"PerConnectionResultNumberOfEntries"); n != strconv.Itoa(int(conns)) {
				t.Errorf("%d connections: PerConnectionResultNumberOfEntries %s", conns, n)
			}
			for i := 1; i <= 3; i++ {
				_, ok := d.Tree().Get(obj + "PerConnectionResult." + strconv.Itoa(i) + ".TestBytesReceived")
				if ok != (i <= int(conns)) {
					t.Errorf("%d connections: PerConnectionResult.%d present %v", conns, i, ok)
				}
			}
		}
	})
}

// measured is the speed a diagnostic wrote into the tree, bytes per
// second, as the executor computes it from BOM, EOM and the test bytes.
func measured(t *testing.T, d *Device, obj, bytesParam string) float64 {
	t.Helper()
	if s := paramValue(t, d, obj+"DiagnosticsState"); s != tr143.StateCompleted {
		t.Fatalf("state %q", s)
	}
	bom, err1 := time.Parse(time.RFC3339Nano, paramValue(t, d, obj+"BOMTime"))
	eom, err2 := time.Parse(time.RFC3339Nano, paramValue(t, d, obj+"EOMTime"))
	n, err3 := strconv.ParseInt(paramValue(t, d, obj+bytesParam), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || !eom.After(bom) || n <= 0 {
		t.Fatalf("BOM %v, EOM %v, %s %d: %v %v %v", bom, eom, bytesParam, n, err1, err2, err3)
	}
	return float64(n) / eom.Sub(bom).Seconds()
}

// TestSpeedDelay: makeSpeedDelay's delay throttles the device's speed
// diagnostics against the real speedtest target, so the speed the ACS
// computes from the results falls (a tier breach is real), and resetDelay
// brings it back. The delay makes a loopback transfer far more than 10x
// slower; the test asks for 2x.
func TestSpeedDelay(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	st := speedtestServer(t)
	for _, m := range models {
		for _, c := range []struct {
			kind   tr143.Kind
			params map[string]cwmp.Value
			bytes  string
		}{
			{tr143.Download, map[string]cwmp.Value{"DownloadURL": cwmp.String(st + "/download?size=2000000")}, "TestBytesReceived"},
			{tr143.Upload, map[string]cwmp.Value{"UploadURL": cwmp.String(st + "/upload"), "TestFileLength": cwmp.UnsignedInt(2000000)}, "TotalBytesSent"},
		} {
			t.Run(fmt.Sprintf("%s/%d", m.name, c.kind), func(t *testing.T) {
				t.Parallel()
				a, d := rpcDevice(t, m.name, Settings{SpeedDelay: delay})
				if d.SpeedDelay() {
					t.Fatal("speed delay on by default")
				}
				obj := tr143.Object(m.name, c.kind)
				diagnose(t, a, d, obj, c.params)
				fast := measured(t, d, obj, c.bytes)
				d.SetSpeedDelay(true)
				if !d.SpeedDelay() {
					t.Fatal("SetSpeedDelay(true) not kept")
				}
				diagnose(t, a, d, obj, c.params)
				slow := measured(t, d, obj, c.bytes)
				t.Logf("%.0f B/s, with the delay %.0f B/s (%.0fx)", fast, slow, fast/slow)
				if slow*2 > fast {
					t.Fatalf("with a %s speed delay %.0f B/s, without %.0f B/s: want at most half", delay, slow, fast)
				}
				d.SetSpeedDelay(false)
				diagnose(t, a, d, obj, c.params)
				if again := measured(t, d, obj, c.bytes); again < 2*slow {
					t.Fatalf("after resetDelay %.0f B/s, with the delay %.0f B/s: want at least twice", again, slow)
				}
			})
		}
	}
}

func TestResetWiFi(t *testing.T) {
	t.Parallel()
	five := []int{36, 40, 44, 48, 52, 56, 60, 64, 100, 104, 108, 112, 116, 132, 136, 140, 149, 153, 157, 161}
	for _, tc := range []struct {
		model               string
		channel24, channel5 string
		snr24, snr5         string
	}{
		{tree.TR181, "Device.WiFi.Radio.1.Channel", "Device.WiFi.Radio.2.Channel", "Device.WiFi.Radio.1.X_CPESUITE_SNR", "Device.WiFi.Radio.2.X_CPESUITE_SNR"},
		{tree.TR098, "InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.Channel", "InternetGatewayDevice.LANDevice.1.WLANConfiguration.2.Channel",
			"InternetGatewayDevice.LANDevice.1.WLANConfiguration.1.X_CPESUITE_SNR", "InternetGatewayDevice.LANDevice.1.WLANConfiguration.2.X_CPESUITE_SNR"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, tc.model, Settings{})
			if err := d.Tree().SetNotification(tc.channel24, 2); err != nil {
				t.Fatal(err)
			}
			first := paramValue(t, d, tc.channel24)
			from := len(a.all(d.Serial()))
			changed := false
			for range 100 {
				if n := d.ResetWiFi(); n != 4 {
					t.Fatalf("ResetWiFi drew %d values, want 4 (channel and SNR of 2 radios)", n)
				}
				c24, _ := strconv.Atoi(paramValue(t, d, tc.channel24))
				c5, _ := strconv.Atoi(paramValue(t, d, tc.channel5))
				if c24 < 1 || c24 > 13 {
					t.Errorf("2.4 GHz channel %d", c24)
				}
				if !slices.Contains(five, c5) {
					t.Errorf("5 GHz channel %d", c5)
				}
				for _, n := range []string{tc.snr24, tc.snr5} {
					if s, _ := strconv.Atoi(paramValue(t, d, n)); s < 10 || s > 45 {
						t.Errorf("%s = %d, want 10..45 dB", n, s)
					}
				}
				if paramValue(t, d, tc.channel24) != first {
					changed = true
					break
				}
			}
			if !changed {
				t.Fatal("100 WiFi resets never changed the 2.4 GHz channel")
			}
			// The channel has active notification: 4 VALUE CHANGE follows.
			inf, _ := a.waitInform(t, d.Serial(), from, cwmp.EventValueChange, "")
			if _, ok := informParam(inf, tc.channel24); !ok {
				t.Errorf("VALUE CHANGE Inform lacks %s: %+v", tc.channel24, inf.ParameterList)
			}
		})
	}
}
