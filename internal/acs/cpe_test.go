package acs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/platform/httpauth"
	"cpesuite/internal/platform/logx"
	platformmetrics "cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

// testACS is an ACS on a real store behind an httptest server.
type testACS struct {
	*ACS
	srv *httptest.Server
	api *httptest.Server
}

func testConfig() Config {
	return Config{CWMPPath: "/", DBDialect: "sqlite", SessionTimeout: 30 * time.Second, MaxSessions: 100, RetryAfter: 7 * time.Second,
		MaxBodyBytes: 1 << 20, Auth: "digest,basic", Username: "cpe", Password: "s3cret",
		ConnReq:     ConnRequestConfig{Timeout: 2 * time.Second, Attempts: 2, Backoff: time.Millisecond},
		OnlineGrace: 2, DefaultOnlineWindow: 10 * time.Minute, MaxAttempts: 3, MaxDiagnostics: 10, DiagnosticsTimeout: time.Hour,
		SpeedtestURL: "http://127.0.0.1:7580", DefaultDomain: 1, InformBatch: 64, InformWriters: 2}
}

func startACS(t *testing.T, db *sqlstore.DB, cfg Config) *testACS {
	t.Helper()
	store, err := OpenStore(context.Background(), db, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, store, logx.Discard(), platformmetrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc := a.Services()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = svc.Run(ctx); close(done) }()
	srv := httptest.NewServer(a)
	mux := newAPIMux(a)
	api := httptest.NewServer(mux)
	t.Cleanup(func() {
		api.Close()
		srv.Close()
		cancel()
		<-done
		_ = svc.Stop(context.Background())
	})
	return &testACS{ACS: a, srv: srv, api: api}
}

// fakeCPE is a CPE test double: it speaks CWMP over HTTP with
// internal/cwmp and answers RPCs from a parameter map.
type fakeCPE struct {
	t       *testing.T
	url     string
	key     DeviceKey
	version cwmp.Version
	client  *http.Client
	auth    *httpauth.Client
	mu      sync.Mutex
	params  map[string]cwmp.Value
	got     []string // RPC methods received
	// faults makes the named RPC answer with this fault.
	faults map[string]*cwmp.Fault
	// pending TransferComplete to send in the next session.
	transfers []cwmp.TransferComplete
	diagAsked string // diagnostics object requested
}

func newCPE(t *testing.T, acsURL, serial, dataModel string) *fakeCPE {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	c := &fakeCPE{t: t, url: acsURL, key: DeviceKey{OUI: "00D09E", ProductClass: "IGD", Serial: serial}, version: cwmp.CWMP12,
		client: hc, params: map[string]cwmp.Value{}, faults: map[string]*cwmp.Fault{}}
	c.auth = &httpauth.Client{HTTP: hc, Username: "cpe", Password: "s3cret", PreferDigest: true}
	root := "InternetGatewayDevice."
	if dataModel == DataModelTR181 {
		root = "Device."
	}
	c.params[root+"DeviceInfo.SoftwareVersion"] = cwmp.String("1.2.3")
	c.params[root+"DeviceInfo.ModelName"] = cwmp.String("Model " + serial)
	c.params[root+"DeviceInfo.UpTime"] = cwmp.UnsignedInt(42)
	c.params[root+"ManagementServer.ConnectionRequestURL"] = cwmp.String("http://127.0.0.1:1/cr")
	c.params[root+"ManagementServer.PeriodicInformInterval"] = cwmp.UnsignedInt(300)
	return c
}

func (c *fakeCPE) post(env *cwmp.Envelope) (*http.Response, []byte) {
	c.t.Helper()
	var body []byte
	if env != nil {
		var err error
		if body, err = cwmp.Encode(env); err != nil {
			c.t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Header.Set("Content-Type", "text/xml")
	resp, err := c.auth.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (c *fakeCPE) inform(events ...string) *cwmp.Envelope {
	inf := &cwmp.Inform{DeviceID: cwmp.DeviceID{Manufacturer: "Acme", OUI: c.key.OUI, ProductClass: c.key.ProductClass, SerialNumber: c.key.Serial},
		MaxEnvelopes: 1, CurrentTime: time.Now().UTC().Truncate(time.Second)}
	for _, e := range events {
		inf.Event = append(inf.Event, cwmp.EventStruct{EventCode: e})
	}
	c.mu.Lock()
	for name, v := range c.params {
		if strings.Contains(name, "DeviceInfo.") || strings.Contains(name, "ManagementServer.") {
			inf.ParameterList = append(inf.ParameterList, cwmp.ParameterValueStruct{Name: name, Value: v})
		}
	}
	c.mu.Unlock()
	sort.Slice(inf.ParameterList, func(i, j int) bool { return inf.ParameterList[i].Name < inf.ParameterList[j].Name })
	return cwmp.NewEnvelope(c.version, "1", inf)
}

// session runs one whole session and returns the RPC methods received.
func (c *fakeCPE) session(events ...string) []string {
	c.t.Helper()
	resp, body := c.post(c.inform(events...))
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("Inform: %d %s", resp.StatusCode, body)
	}
	env, err := cwmp.Decode(body)
	if err != nil {
		c.t.Fatalf("InformResponse: %v", err)
	}
	if _, ok := env.Body.(*cwmp.InformResponse); !ok {
		c.t.Fatalf("got %s, want InformResponse", env.Body.Method())
	}
	var got []string
	var next *cwmp.Envelope
	c.mu.Lock()
	if len(c.transfers) > 0 {
		tc := c.transfers[0]
		c.transfers = c.transfers[1:]
		next = cwmp.NewEnvelope(c.version, "tc", &tc)
	}
	c.mu.Unlock()
	for i := 0; i < 100; i++ {
		resp, body := c.post(next)
		if resp.StatusCode == http.StatusNoContent {
			return got
		}
		env, err := cwmp.Decode(body)
		if err != nil {
			c.t.Fatalf("decoding %d %s: %v", resp.StatusCode, body, err)
		}
		if _, ok := env.Body.(*cwmp.TransferCompleteResponse); ok {
			next = nil
			continue
		}
		got = append(got, env.Body.Method())
		next = env.Reply(c.answer(env.Body))
	}
	c.t.Fatal("session did not end")
	return nil
}

func (c *fakeCPE) answer(m cwmp.Message) cwmp.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, m.Method())
	if f := c.faults[m.Method()]; f != nil {
		return f
	}
	switch m := m.(type) {
	case *cwmp.GetParameterValues:
		resp := &cwmp.GetParameterValuesResponse{}
		for _, n := range m.ParameterNames {
			found := false
			for name, v := range c.params {
				if name == n || (strings.HasSuffix(n, ".") && strings.HasPrefix(name, n)) {
					resp.ParameterList = append(resp.ParameterList, cwmp.ParameterValueStruct{Name: name, Value: v})
					found = true
				}
			}
			if !found {
				return cwmp.NewFault(cwmp.FaultInvalidParameterName, "")
			}
		}
		return resp
	case *cwmp.SetParameterValues:
		for _, p := range m.ParameterList {
			c.params[p.Name] = p.Value
			if strings.HasSuffix(p.Name, "DiagnosticsState") && p.Value.Text == "Requested" {
				c.diagAsked = strings.TrimSuffix(p.Name, "DiagnosticsState")
			}
		}
		return &cwmp.SetParameterValuesResponse{Status: 0}
	case *cwmp.GetParameterNames:
		resp := &cwmp.GetParameterNamesResponse{}
		for name := range c.params {
			if strings.HasPrefix(name, m.ParameterPath) {
				resp.ParameterList = append(resp.ParameterList, cwmp.ParameterInfoStruct{Name: name, Writable: true})
			}
		}
		return resp
	case *cwmp.GetParameterAttributes:
		return &cwmp.GetParameterAttributesResponse{ParameterList: []cwmp.ParameterAttributeStruct{{Name: m.ParameterNames[0], Notification: 2}}}
	case *cwmp.SetParameterAttributes:
		return &cwmp.SetParameterAttributesResponse{}
	case *cwmp.AddObject:
		return &cwmp.AddObjectResponse{InstanceNumber: 7, Status: 0}
	case *cwmp.DeleteObject:
		return &cwmp.DeleteObjectResponse{Status: 0}
	case *cwmp.Reboot:
		return &cwmp.RebootResponse{}
	case *cwmp.FactoryReset:
		return &cwmp.FactoryResetResponse{}
	case *cwmp.ScheduleInform:
		return &cwmp.ScheduleInformResponse{}
	case *cwmp.Download:
		now := time.Now().UTC().Truncate(time.Second)
		c.transfers = append(c.transfers, cwmp.TransferComplete{CommandKey: m.CommandKey, StartTime: now, CompleteTime: now})
		return &cwmp.DownloadResponse{Status: 1, StartTime: time.Time{}, CompleteTime: time.Time{}}
	case *cwmp.Upload:
		now := time.Now().UTC().Truncate(time.Second)
		return &cwmp.UploadResponse{Status: 0, StartTime: now, CompleteTime: now}
	}
	return cwmp.NewFault(cwmp.FaultCPEMethodNotSupported, "")
}

func forACS(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(string(d), func(t *testing.T) { fn(t, sqltest.Open(t, d)) })
	}
}

func enqueue(t *testing.T, a *testACS, dev int64, kind TaskKind, args string) Transaction {
	t.Helper()
	norm, err := ValidateArgs(kind, []byte(args))
	if err != nil {
		t.Fatal(err)
	}
	txn, err := a.store.Enqueue(context.Background(), "", []NewTask{{DeviceID: dev, Kind: kind, Args: norm}})
	if err != nil {
		t.Fatal(err)
	}
	return txn
}

func deviceID(t *testing.T, a *testACS, c *fakeCPE) int64 {
	t.Helper()
	d, err := a.store.DeviceByKey(context.Background(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func txnState(t *testing.T, a *testACS, id int64) Transaction {
	t.Helper()
	txn, err := a.store.Transaction(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return txn
}

func TestSessionEveryRPC(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		cpe := newCPE(t, a.srv.URL, "FULL1", DataModelTR098)
		if got := cpe.session(cwmp.EventBootstrap, cwmp.EventBoot); len(got) != 0 {
			t.Fatalf("first session got RPCs %v", got)
		}
		dev := deviceID(t, a, cpe)
		specs := []struct {
			kind TaskKind
			args string
		}{
			{KindGetParameterValues, `{"names":["InternetGatewayDevice.DeviceInfo."]}`},
			{KindSetParameterValues, `{"values":[{"name":"InternetGatewayDevice.X.Y","value":"5","type":"xsd:unsignedInt"}]}`},
			{KindGetParameterNames, `{"path":"InternetGatewayDevice.","nextLevel":false}`},
			{KindGetParameterAttributes, `{"names":["InternetGatewayDevice.X.Y"]}`},
			{KindSetParameterAttributes, `{"attributes":[{"name":"InternetGatewayDevice.X.Y","notificationChange":true,"notification":2}]}`},
			{KindAddObject, `{"objectName":"InternetGatewayDevice.X.Obj."}`},
			{KindDeleteObject, `{"objectName":"InternetGatewayDevice.X.Obj.7."}`},
			{KindScheduleInform, `{"delaySeconds":5}`},
			{KindUpload, `{"fileType":"1 Vendor Configuration File","url":"http://127.0.0.1:7580/upload"}`},
			{KindDownload, `{"fileType":"1 Firmware Upgrade Image","url":"http://fw.example/img.bin"}`},
			{KindReboot, `{"commandKey":"rb"}`},
			{KindFactoryReset, `{}`},
		}
		var txns []Transaction
		for _, s := range specs {
			txns = append(txns, enqueue(t, a, dev, s.kind, s.args))
		}
		got := cpe.session(cwmp.EventConnectionRequest)
		want := []string{"GetParameterValues", "SetParameterValues", "GetParameterNames", "GetParameterAttributes", "SetParameterAttributes",
			"AddObject", "DeleteObject", "ScheduleInform", "Upload", "Download", "Reboot", "FactoryReset"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("RPCs\n got %v\nwant %v", got, want)
		}
		for i, txn := range txns {
			cur := txnState(t, a, txn.ID)
			wantState := TaskDone
			if specs[i].kind == KindDownload {
				wantState = TaskPending // waits for TransferComplete
			}
			if cur.State != wantState {
				t.Errorf("%s: state %s (%+v), want %s", specs[i].kind, cur.State, cur.Tasks[0], wantState)
			}
		}
		gpv := txnState(t, a, txns[0].ID).Tasks[0]
		if !strings.Contains(string(gpv.Result), `"InternetGatewayDevice.DeviceInfo.UpTime":{"v":"42","t":"xsd:unsignedInt"}`) {
			t.Errorf("GPV result %s", gpv.Result)
		}
		if add := txnState(t, a, txns[5].ID).Tasks[0]; !strings.Contains(string(add.Result), `"instanceNumber":7`) {
			t.Errorf("AddObject result %s", add.Result)
		}
		p, _ := a.store.Params(context.Background(), dev)
		if p["InternetGatewayDevice.X.Y"].Value != "5" {
			t.Errorf("SPV value not in the parameter cache: %+v", p["InternetGatewayDevice.X.Y"])
		}
		// The Download ends with TransferComplete in the next session.
		if got := cpe.session(cwmp.EventTransferComplete, cwmp.EventMDownload); len(got) != 0 {
			t.Fatalf("transfer session got RPCs %v", got)
		}
		if cur := txnState(t, a, txns[9].ID); cur.State != TaskDone || !strings.Contains(string(cur.Tasks[0].Result), "completeTime") {
			t.Fatalf("download after TransferComplete: %+v", cur.Tasks[0])
		}
	})
}

func TestSessionFaults(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		cpe := newCPE(t, a.srv.URL, "FAULT1", DataModelTR098)
		cpe.session(cwmp.EventBootstrap)
		dev := deviceID(t, a, cpe)
		gpv := enqueue(t, a, dev, KindGetParameterValues, `{"names":["InternetGatewayDevice.Nope"]}`)
		cpe.faults["SetParameterValues"] = &cwmp.Fault{FaultCode: cwmp.FaultCPEInvalidArguments, FaultString: "Invalid arguments",
			SetParameterValuesFaults: []cwmp.SPVFault{{ParameterName: "A.B", FaultCode: cwmp.FaultNonWritableParameter, FaultString: "Attempt to set a non-writable parameter"}}}
		spvTxn := enqueue(t, a, dev, KindSetParameterValues, `{"values":[{"name":"A.B","value":"1"}]}`)
		after := enqueue(t, a, dev, KindReboot, `{}`)
		cpe.session(cwmp.EventPeriodic)
		g := txnState(t, a, gpv.ID)
		if g.State != TaskFault || g.Tasks[0].Fault.Code != 9005 {
			t.Fatalf("GPV fault: %+v", g.Tasks[0])
		}
		s := txnState(t, a, spvTxn.ID).Tasks[0]
		if s.State != TaskFault || s.Fault.Code != 9003 || !strings.Contains(string(s.Fault.Detail), `"parameterName":"A.B","faultCode":9008`) {
			t.Fatalf("SPV fault: %+v %s", s, s.Fault.Detail)
		}
		if txnState(t, a, after.ID).State != TaskDone {
			t.Fatal("a fault must not block the tasks behind it")
		}
	})
}

func TestCPEAuthentication(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		tests := []struct {
			name       string
			user, pass string
			wantStatus int
		}{
			{"digest, right password", "cpe", "s3cret", 200},
			{"wrong password", "cpe", "nope", 401},
			{"unknown user", "ghost", "s3cret", 401},
			{"no credentials", "", "", 401},
		}
		for i, tt := range tests {
			cpe := newCPE(t, a.srv.URL, fmt.Sprintf("AUTH%d", i), DataModelTR098)
			cpe.auth.Username, cpe.auth.Password = tt.user, tt.pass
			body, _ := cwmp.Encode(cpe.inform(cwmp.EventBootstrap))
			req, _ := http.NewRequest(http.MethodPost, a.srv.URL, bytes.NewReader(body))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			status := 0
			resp, err := cpe.auth.Do(req)
			switch {
			case errors.Is(err, httpauth.ErrUnauthorized):
				status = http.StatusUnauthorized // challenged, answered, refused
			case err != nil:
				t.Fatal(err)
			default:
				status = resp.StatusCode
				resp.Body.Close()
			}
			if status != tt.wantStatus {
				t.Errorf("%s: status %d, want %d", tt.name, status, tt.wantStatus)
			}
			if status == http.StatusOK {
				if resp, _ := cpe.post(nil); resp.StatusCode != http.StatusNoContent {
					t.Fatalf("ending the session: %d", resp.StatusCode)
				}
			}
			_, err = a.store.DeviceByKey(context.Background(), cpe.key)
			if (err == nil) != (tt.wantStatus == 200) {
				t.Errorf("%s: device stored=%v", tt.name, err == nil)
			}
		}
		// Per-device credentials from the registry.
		cpe := newCPE(t, a.srv.URL, "AUTH0", DataModelTR098)
		dev := deviceID(t, a, cpe)
		u, p := "dev-AUTH0", "per-device"
		if err := a.store.UpdateDevice(context.Background(), dev, DeviceUpdate{AuthUsername: &u, AuthPassword: &p}); err != nil {
			t.Fatal(err)
		}
		cpe.auth.Username, cpe.auth.Password = u, p
		cpe.session(cwmp.EventPeriodic)
	})
}

func TestUnauthenticatedAllowedOnlyWhenConfigured(t *testing.T) {
	db := sqltest.Open(t, sqlstore.SQLite)
	cfg := testConfig()
	cfg.Password, cfg.AllowUnauthenticated = "", true
	a := startACS(t, db, cfg)
	cpe := newCPE(t, a.srv.URL, "OPEN1", DataModelTR098)
	cpe.auth.Username, cpe.auth.Password = "", ""
	cpe.session(cwmp.EventBootstrap)
}

func TestSessionTakeoverRefusedAndBackpressure(t *testing.T) {
	db := sqltest.Open(t, sqlstore.SQLite)
	cfg := testConfig()
	cfg.MaxSessions = 2
	a := startACS(t, db, cfg)
	one := newCPE(t, a.srv.URL, "BUSY1", DataModelTR098)
	resp, _ := one.post(one.inform(cwmp.EventPeriodic)) // session stays open: no empty POST
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	// The same device again, from another connection, while its session
	// handles a message: refused.
	busy := liveSession(a, one.key)
	busy.mu.Lock()
	again := newCPE(t, a.srv.URL, "BUSY1", DataModelTR098)
	resp, body := again.post(again.inform(cwmp.EventBoot))
	busy.mu.Unlock()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "7" {
		t.Fatalf("takeover: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	two := newCPE(t, a.srv.URL, "BUSY2", DataModelTR098)
	if resp, _ := two.post(two.inform(cwmp.EventPeriodic)); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	three := newCPE(t, a.srv.URL, "BUSY3", DataModelTR098)
	resp, _ = three.post(three.inform(cwmp.EventPeriodic))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("capacity: %d", resp.StatusCode)
	}
	if _, err := a.store.DeviceByKey(context.Background(), three.key); err == nil {
		t.Fatal("a refused Inform must not be stored")
	}
	// The first session finishes; a new one may start.
	if resp, _ := one.post(nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("empty POST: %d", resp.StatusCode)
	}
	three.session(cwmp.EventPeriodic)
}

func TestTasksSurviveRestart(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		first := startACS(t, db, testConfig())
		cpe := newCPE(t, first.srv.URL, "RST1", DataModelTR098)
		cpe.session(cwmp.EventBootstrap)
		dev := deviceID(t, first, cpe)
		txn := enqueue(t, first, dev, KindGetParameterValues, `{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}`)
		second := enqueue(t, first, dev, KindReboot, `{}`)
		// A session that receives the GPV and then dies (the CPE never answers).
		if resp, _ := cpe.post(cpe.inform(cwmp.EventPeriodic)); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		if resp, body := cpe.post(nil); resp.StatusCode != 200 || !strings.Contains(string(body), "GetParameterValues") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		// A new ACS process on the same database.
		restarted := startACS(t, db, testConfig())
		cpe2 := newCPE(t, restarted.srv.URL, "RST1", DataModelTR098)
		got := cpe2.session(cwmp.EventBoot)
		if strings.Join(got, ",") != "GetParameterValues,Reboot" {
			t.Fatalf("after restart got %v", got)
		}
		if s := txnState(t, restarted, txn.ID); s.State != TaskDone || s.Tasks[0].Attempts != 2 {
			t.Fatalf("resent task: %+v", s.Tasks[0])
		}
		if txnState(t, restarted, second.ID).State != TaskDone {
			t.Fatal("queued task lost across restart")
		}
	})
}

func TestDiagnosticsBothDataModels(t *testing.T) {
	tests := []struct {
		model, obj string
	}{
		{DataModelTR098, "InternetGatewayDevice.DownloadDiagnostics."},
		{DataModelTR181, "Device.IP.Diagnostics.DownloadDiagnostics."},
	}
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		a := startACS(t, db, testConfig())
		for _, tt := range tests {
			t.Run(tt.model, func(t *testing.T) {
				cpe := newCPE(t, a.srv.URL, "DIAG-"+tt.model, tt.model)
				cpe.session(cwmp.EventBootstrap)
				dev := deviceID(t, a, cpe)
				txn := enqueue(t, a, dev, KindDownloadDiagnostics, `{}`)
				ping := enqueue(t, a, dev, KindGetParameterValues, `{"names":["`+tt.obj[:strings.Index(tt.obj, ".")+1]+`DeviceInfo.UpTime"]}`)
				got := cpe.session(cwmp.EventConnectionRequest)
				// The diagnostic waits; the GPV behind it still runs.
				if strings.Join(got, ",") != "SetParameterValues,GetParameterValues" || cpe.diagAsked != tt.obj {
					t.Fatalf("got %v, diag %q", got, cpe.diagAsked)
				}
				if url := cpe.params[tt.obj+"DownloadURL"].Text; url != "http://127.0.0.1:7580/download?size=10000000" {
					t.Errorf("DownloadURL %q", url)
				}
				if txnState(t, a, ping.ID).State != TaskDone || txnState(t, a, txn.ID).State != TaskPending {
					t.Fatal("states after the first session")
				}
				// A periodic session before completion does not fetch results.
				if got := cpe.session(cwmp.EventPeriodic); len(got) != 0 {
					t.Fatalf("premature RPCs %v", got)
				}
				cpe.mu.Lock()
				for k, v := range map[string]string{"DiagnosticsState": "Completed", "ROMTime": "2026-11-21T08:00:00.100000Z",
					"BOMTime": "2026-11-21T08:00:00.200000Z", "EOMTime": "2026-11-21T08:00:02.200000Z", "TestBytesReceived": "25000000",
					"TotalBytesReceived": "25100000", "TCPOpenRequestTime": "2026-11-21T08:00:00.110000Z", "TCPOpenResponseTime": "2026-11-21T08:00:00.120000Z"} {
					cpe.params[tt.obj+k] = cwmp.String(v)
				}
				if tt.model == DataModelTR181 {
					cpe.params[tt.obj+"PerConnectionResult.1.TestBytesReceived"] = cwmp.UnsignedInt(25000000)
					cpe.params[tt.obj+"PerConnectionResult.1.BOMTime"] = cwmp.String("2026-11-21T08:00:00.200000Z")
				}
				cpe.mu.Unlock()
				if got := cpe.session(cwmp.EventDiagnosticsComplete); strings.Join(got, ",") != "GetParameterValues" {
					t.Fatalf("results session got %v", got)
				}
				res := txnState(t, a, txn.ID)
				if res.State != TaskDone {
					t.Fatalf("diagnostic %+v", res.Tasks[0])
				}
				r := string(res.Tasks[0].Result)
				for _, want := range []string{`"diagnosticsState":"Completed"`, `"bomTime":"2026-11-21T08:00:00.200000Z"`, `"testBytesReceived":25000000`, `"throughputKbps":100000`} {
					if !strings.Contains(r, want) {
						t.Errorf("result %s lacks %s", r, want)
					}
				}
				if tt.model == DataModelTR181 && !strings.Contains(r, `"perConnectionResults":[{"index":1`) {
					t.Errorf("per-connection results missing: %s", r)
				}
			})
		}
	})
}

func TestBadInputLeavesStateUnchanged(t *testing.T) {
	db := sqltest.Open(t, sqlstore.SQLite)
	cfg := testConfig()
	cfg.Password, cfg.AllowUnauthenticated = "", true
	cfg.MaxBodyBytes = 8192
	a := startACS(t, db, cfg)
	valid, _ := cwmp.Encode(newCPE(t, "", "BAD1", DataModelTR098).inform(cwmp.EventBootstrap))
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantFault  string
	}{
		{"malformed XML", "<soap:Envelope><oops", 400, ""},
		{"not XML", "hello", 400, ""},
		{"wrong namespace", strings.ReplaceAll(string(valid), "http://schemas.xmlsoap.org/soap/envelope/", "urn:other"), 400, ""},
		{"unknown cwmp namespace", strings.ReplaceAll(string(valid), "urn:dslforum-org:cwmp-1-2", "urn:evil:cwmp"), 400, ""},
		{"DTD", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]>` + string(valid[strings.Index(string(valid), "<SOAP-ENV:Envelope"):]), 400, ""},
		{"entity expansion", `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><lolz>&lol2;</lolz>`, 400, ""},
		{"oversize", string(valid) + strings.Repeat(" ", 9000), 413, ""},
		{"unknown RPC", strings.ReplaceAll(strings.ReplaceAll(string(valid), "cwmp:Inform>", "cwmp:Bogus>"), "cwmp:Inform ", "cwmp:Bogus "), 500, "<FaultCode>8000</FaultCode>"},
		{"RPC before Inform", strings.Replace(string(valid), "1 BOOT", "1 BOOT", 1)[:0] + `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:cwmp="urn:dslforum-org:cwmp-1-0"><soap:Header><cwmp:ID soap:mustUnderstand="1">9</cwmp:ID></soap:Header><soap:Body><cwmp:GetRPCMethods/></soap:Body></soap:Envelope>`, 500, "<FaultCode>8001</FaultCode>"},
		{"empty POST without session", "", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(a.srv.URL, "text/xml", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			if tt.wantFault != "" && !strings.Contains(string(b), tt.wantFault) {
				t.Fatalf("body lacks %s: %s", tt.wantFault, b)
			}
			total, _, _ := a.store.CountDevices(context.Background())
			if total != 0 {
				t.Fatalf("bad input stored %d devices", total)
			}
		})
	}
	resp, _ := http.Get(a.srv.URL)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

// TestEnqueueWithConnectionRequestAndWait: the API sends a connection
// request, the CPE opens a session, and the caller gets 200 with the
// result within its wait.
func TestEnqueueWithConnectionRequestAndWait(t *testing.T) {
	forACS(t, func(t *testing.T, db *sqlstore.DB) {
		cfg := testConfig()
		cfg.ConnReq.Username, cfg.ConnReq.Password = "acs", "cr-pass"
		a := startACS(t, db, cfg)
		cpe := newCPE(t, a.srv.URL, "CRW1", DataModelTR098)
		v := &httpauth.Verifier{Digest: true, Creds: httpauth.StaticCredentials{"acs": "cr-pass"}}
		sessions := make(chan []string, 1)
		cr := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			go func() { sessions <- cpe.session(cwmp.EventConnectionRequest) }()
			w.WriteHeader(http.StatusOK)
		})))
		defer cr.Close()
		cpe.params["InternetGatewayDevice.ManagementServer.ConnectionRequestURL"] = cwmp.String(cr.URL + "/cr")
		cpe.session(cwmp.EventBootstrap)
		dev := deviceID(t, a, cpe)

		body := `{"tasks":[{"kind":"GetParameterValues","args":{"names":["InternetGatewayDevice.DeviceInfo.UpTime"]}}],"connectionRequest":true,"waitSeconds":20}`
		resp, err := http.Post(fmt.Sprintf("%s/acs/devices/%d/tasks", a.api.URL, dev), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, raw)
		}
		for _, want := range []string{`"state":"done"`, `"connectionRequest":{"ok":true}`, `"InternetGatewayDevice.DeviceInfo.UpTime":{"v":"42"`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("answer lacks %s: %s", want, raw)
			}
		}
		if got := <-sessions; strings.Join(got, ",") != "GetParameterValues" {
			t.Fatalf("session got %v", got)
		}

		// A CPE that does not answer: 202, the task stays queued with the
		// failure recorded.
		cr.Close()
		body = `{"tasks":[{"kind":"Reboot"}],"connectionRequest":true,"waitSeconds":1}`
		resp, err = http.Post(fmt.Sprintf("%s/acs/devices/%d/tasks", a.api.URL, dev), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(raw), `"connectionRequest":{"ok":false`) ||
			!strings.Contains(string(raw), `"state":"pending"`) {
			t.Fatalf("unreachable CPE: %d %s", resp.StatusCode, raw)
		}
		open, _ := a.store.OpenTasks(context.Background(), dev)
		if len(open) != 1 || open[0].ConnReqError == "" {
			t.Fatalf("open tasks %+v", open)
		}
	})
}
