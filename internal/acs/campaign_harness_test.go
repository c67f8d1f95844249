package acs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acstest"
	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/campaigntime"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
	"cpesuite/internal/speedtest"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu"
)

// campaignScale makes a campaign hour last a second: a 30-minute slot is
// half a second.
const campaignScale = 3600

// campaignEnv is a campaign service's view of a real ACS with its
// executor, real emulated CPEs and a real speedtest target, over a real
// NATS server (embedded, per test: the queue names are fixed).
type campaignEnv struct {
	t        testing.TB
	acs      *acstest.ACS
	g        *grid.Grid
	cmds     *grid.Queue
	emulator *tr069emu.Emulator
	emuURL   string
	speedURL string
	col      *collector
	ecfg     acs.ExecutorConfig
}

func executorConfig() acs.ExecutorConfig {
	return acs.ExecutorConfig{Enabled: true, WANSampleInterval: 300 * time.Millisecond, WANRetryInterval: 50 * time.Millisecond,
		PollInterval: 50 * time.Millisecond, ConnectRetry: 2 * time.Second}
}

func newCampaignEnv(t testing.TB, edit func(*acs.Config)) *campaignEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	env := &campaignEnv{t: t, ecfg: executorConfig()}

	st, err := speedtest.New(speedtest.Config{DefaultBytes: 200_000, MaxBytes: 100_000_000}, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	smux := httpx.NewMux()
	st.Routes(smux)
	ssrv := httptest.NewServer(smux)
	t.Cleanup(ssrv.Close)
	env.speedURL = ssrv.URL

	scale, err := campaigntime.New(campaignScale)
	if err != nil {
		t.Fatal(err)
	}
	cfg := acstest.Config()
	cfg.SpeedtestURL = ssrv.URL
	cfg.TimeScale = scale
	cfg.MaxDiagnostics = 4
	if edit != nil {
		edit(&cfg)
	}
	env.acs = acstest.StartWithDB(t, sqltest.Open(t, sqlstore.SQLite), cfg)

	emb, err := grid.StartEmbedded(grid.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(emb.Shutdown)
	env.g, err = grid.Connect(ctx, grid.Config{Name: t.Name()}, emb)
	if err != nil {
		t.Fatalf("grid: %v", err)
	}
	t.Cleanup(env.g.Close)
	if env.cmds, err = grid.NewQueue(ctx, env.g, fccwire.QueueCommands, grid.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	env.col = newCollector(t, env.g)

	emu, err := tr069emu.New(tr069emu.Config{DataDir: t.TempDir(), DefaultACSURL: env.acs.CWMPURL, ACSUsername: "cpe", ACSPassword: "s3cret",
		SerialPrefix: "EMU", MaxDevices: 1000, AutoUpdate: 200 * time.Millisecond, MinRetry: 50 * time.Millisecond,
		DiagTimeout: 30 * time.Second, MaxUpload: 1 << 20}, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ectx, ecancel := context.WithCancel(context.Background())
	emu.Start(ectx)
	env.emulator = emu
	emux := httpx.NewMux()
	tr069emu.NewAPI(emu).Routes(emux)
	esrv := httptest.NewServer(emux)
	emu.SetListenAddr(esrv.Listener.Addr().String())
	t.Cleanup(func() {
		emu.Shutdown()
		esrv.Close()
		ecancel()
	})
	env.emuURL = esrv.URL
	// Emulated RPCs answer at once (the default is a realistic 11 s).
	var props map[string]any
	env.emu("GET", "/api/properties", nil, &props)
	for k := range props {
		if len(k) > 9 && k[:9] == "taskDelay" {
			props[k] = 0
		}
	}
	env.emu("POST", "/api/properties", props, nil)
	return env
}

// emu calls the emulator's API and fails the test on an error status.
func (env *campaignEnv) emu(method, path string, body, out any) {
	env.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, env.emuURL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: testutil.MinDeadline}).Do(req)
	if err != nil {
		env.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		env.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			env.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// cpe starts an emulated CPE with tree file and waits until the ACS
// knows it online; it returns the fleet row.
func (env *campaignEnv) cpe(serial, file string) fccwire.Device {
	env.t.Helper()
	env.emu("POST", "/apiV2/start", map[string]any{"serial": serial, "parameterFile": file, "enableHttpConnectionRequest": true}, nil)
	var dev acs.Device
	testutil.Eventually(env.t, testutil.MinDeadline, "device "+serial+" online in the ACS", func() bool {
		list, _, err := env.acs.Store().ListDevices(context.Background(), acs.DeviceFilter{Serial: serial}, acs.Page{Number: 1, Size: 10})
		if err != nil || len(list) != 1 || !list[0].Online {
			return false
		}
		dev = list[0]
		return true
	})
	proto := fccwire.ProtocolTR069
	if dev.DataModel == acs.DataModelTR181 {
		proto = fccwire.ProtocolTR181
	}
	return fccwire.Device{CpeID: dev.ID, Serial: serial, Protocol: proto}
}

// fleet starts n emulated CPEs in this process (even: TR-098, odd:
// TR-181), straight through the emulator rather than one API call and one
// online check each, waits until the ACS holds all of them online and
// returns them as fleet rows in serial order.
func (env *campaignEnv) fleet(prefix string, n int) []fccwire.Device {
	env.t.Helper()
	for i := range n {
		file := "tr098-base.xml"
		if i%2 == 1 {
			file = "tr181-base.xml"
		}
		dto := tr069emu.InitDeviceDto{Serial: fmt.Sprintf("%s%06d", prefix, i), ParameterFile: file, EnableHTTPConnectionRequest: true}
		if _, err := env.emulator.StartDevice(dto, false); err != nil {
			env.t.Fatalf("starting %s: %v", dto.Serial, err)
		}
	}
	// A 10,000-device fleet registers through the ACS's session limit and
	// Retry-After: minutes on a busy machine, hence the larger deadline.
	testutil.Eventually(env.t, 10*testutil.MinDeadline, fmt.Sprintf("%d devices online in the ACS", n), func() bool {
		_, online, err := env.acs.Store().CountDevices(context.Background())
		return err == nil && online >= int64(n)
	})
	db := env.acs.Store().DB()
	rows, err := db.QueryContext(context.Background(), db.Rebind(`SELECT id, serial, data_model FROM acs_devices WHERE serial LIKE ? ORDER BY serial`), prefix+"%")
	if err != nil {
		env.t.Fatal(err)
	}
	defer rows.Close()
	devs := make([]fccwire.Device, 0, n)
	for rows.Next() {
		var d fccwire.Device
		var model string
		if err := rows.Scan(&d.CpeID, &d.Serial, &model); err != nil {
			env.t.Fatal(err)
		}
		d.Protocol = fccwire.ProtocolTR069
		if model == acs.DataModelTR181 {
			d.Protocol = fccwire.ProtocolTR181
		}
		devs = append(devs, d)
	}
	if err := rows.Err(); err != nil {
		env.t.Fatal(err)
	}
	if len(devs) != n {
		env.t.Fatalf("fleet: %d of %d devices in the ACS", len(devs), n)
	}
	return devs
}

// row inserts a device the emulator does not run (a USP device, an
// offline CPE) straight into the ACS's device table.
func (env *campaignEnv) row(serial string, proto fccwire.Protocol) fccwire.Device {
	env.t.Helper()
	db := env.acs.Store().DB()
	var id int64
	err := db.QueryRowContext(context.Background(), db.Rebind(`INSERT INTO acs_devices (oui, product_class, serial, online) VALUES (?, ?, ?, ?) RETURNING id`),
		"000000", "ROW", serial, false).Scan(&id)
	if err != nil {
		env.t.Fatal(err)
	}
	return fccwire.Device{CpeID: id, Serial: serial, Protocol: proto}
}

// startExecutor runs an executor until the returned stop is called (or
// the test ends).
func (env *campaignEnv) startExecutor() (stop func()) {
	env.t.Helper()
	ex, err := acs.NewExecutor(env.acs.ACS, env.g, env.ecfg, metrics.NewRegistry())
	if err != nil {
		env.t.Fatal(err)
	}
	svc := ex.Service()
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		cancel()
		env.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = svc.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			_ = svc.Stop(context.Background())
		})
	}
	env.t.Cleanup(stop)
	return stop
}

// publish sends a command as the campaign service's outbox does.
func (env *campaignEnv) publish(data []byte, msgID string) {
	env.t.Helper()
	if err := env.cmds.Publish(context.Background(), data, msgID); err != nil {
		env.t.Fatal(err)
	}
}

func (env *campaignEnv) activate(a *fccwire.Activate) {
	env.t.Helper()
	b, err := fccwire.Encode(a)
	if err != nil {
		env.t.Fatal(err)
	}
	env.publish(b, fccwire.CommandMsgID(a.CommandID, a.Part, 1))
}

// activateParts publishes a run as the campaign service does with a fleet
// too large for one message: split into parts, each its own command.
func (env *campaignEnv) activateParts(a *fccwire.Activate) int {
	env.t.Helper()
	parts, err := fccwire.SplitActivate(*a, 0)
	if err != nil {
		env.t.Fatal(err)
	}
	for i, b := range parts {
		env.publish(b, fccwire.CommandMsgID(a.CommandID, i+1, 1))
	}
	return len(parts)
}

func (env *campaignEnv) stop(s *fccwire.Stop, attempt int) {
	env.t.Helper()
	b, err := fccwire.Encode(s)
	if err != nil {
		env.t.Fatal(err)
	}
	env.publish(b, fccwire.CommandMsgID(s.CommandID, 1, attempt))
}

// diagnostics counts the diagnostics tasks the ACS holds for a device.
func (env *campaignEnv) diagnostics(cpeID int64) map[acs.TaskKind]int {
	env.t.Helper()
	tasks, err := env.acs.Store().DeviceTasks(context.Background(), cpeID, 10000)
	if err != nil {
		env.t.Fatal(err)
	}
	out := map[acs.TaskKind]int{}
	for _, task := range tasks {
		if task.Kind.IsDiagnostics() {
			out[task.Kind]++
		}
	}
	return out
}

// finished waits for the run's ACTIVATION_FINISHED.
func (env *campaignEnv) finished(id int64) *fccwire.ActivationFinished {
	env.t.Helper()
	return env.finishedWithin(id, testutil.MinDeadline)
}

// finishedWithin waits for the run's ACTIVATION_FINISHED up to deadline
// (a safety net sized for large fleets).
func (env *campaignEnv) finishedWithin(id int64, deadline time.Duration) *fccwire.ActivationFinished {
	env.t.Helper()
	var f *fccwire.ActivationFinished
	testutil.Eventually(env.t, deadline, fmt.Sprintf("ACTIVATION_FINISHED of run %d", id), func() bool {
		f = env.col.finishedOf(id)
		return f != nil
	})
	env.col.check()
	return f
}

func (env *campaignEnv) ack(commandID string, part int) *fccwire.CommandAck {
	env.t.Helper()
	var a *fccwire.CommandAck
	testutil.Eventually(env.t, testutil.MinDeadline, "ack of "+commandID, func() bool {
		acks := env.col.acksOf(commandID, part)
		if len(acks) > 0 {
			a = acks[0]
		}
		return a != nil
	})
	return a
}

// collector plays the campaign service's consumers: it takes every
// message the executor sends, validates it against the contract and keeps
// it.
type collector struct {
	t        testing.TB
	mu       sync.Mutex
	errs     []string
	acks     []*fccwire.CommandAck
	states   []*fccwire.DeviceState
	results  []*fccwire.Result
	resultID []string
	finished []*fccwire.ActivationFinished
}

func newCollector(t testing.TB, g *grid.Grid) *collector {
	c := &collector{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, name := range []string{fccwire.QueueCommandAck, fccwire.QueueDeviceState, fccwire.QueueResults, fccwire.QueueActivationFinished} {
		q, err := grid.NewQueue(ctx, g, name, grid.QueueOptions{})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				ds, err := q.Fetch(ctx, 100, 100*time.Millisecond)
				if err != nil {
					continue
				}
				for _, d := range ds {
					c.take(d)
					_ = d.Ack(ctx)
				}
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return c
}

func (c *collector) take(d *grid.Delivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := fccwire.PeekKind(d.Data)
	if err == nil {
		err = fccwire.Validate(k, d.Data)
	}
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%v: %s", err, d.Data))
		return
	}
	m, _ := fccwire.Decode(k, d.Data)
	switch m := m.(type) {
	case *fccwire.CommandAck:
		c.acks = append(c.acks, m)
	case *fccwire.DeviceState:
		c.states = append(c.states, m)
	case *fccwire.Result:
		c.results = append(c.results, m)
		c.resultID = append(c.resultID, d.MsgID)
		if d.MsgID != m.NaturalKey() {
			c.errs = append(c.errs, fmt.Sprintf("result message id %q, natural key %q", d.MsgID, m.NaturalKey()))
		}
	case *fccwire.ActivationFinished:
		c.finished = append(c.finished, m)
	}
}

// check fails the test for every message the contract refused.
func (c *collector) check() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		c.t.Errorf("the executor sent a message the contract refuses: %s", e)
	}
	c.errs = nil
}

func (c *collector) acksOf(commandID string, part int) []*fccwire.CommandAck {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*fccwire.CommandAck
	for _, a := range c.acks {
		if a.CommandID == commandID && a.Part == part {
			out = append(out, a)
		}
	}
	return out
}

func (c *collector) finishedOf(id int64) *fccwire.ActivationFinished {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.finished {
		if f.ActivationID == id {
			return f
		}
	}
	return nil
}

func (c *collector) resultsOf(id int64) []*fccwire.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*fccwire.Result
	for _, r := range c.results {
		if r.ActivationID == id {
			out = append(out, r)
		}
	}
	return out
}

// statesOf returns a device's states in seq order as received.
func (c *collector) statesOf(id, cpeID int64) []*fccwire.DeviceState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*fccwire.DeviceState
	for _, s := range c.states {
		if s.ActivationID == id && s.CpeID == cpeID {
			out = append(out, s)
		}
	}
	return out
}

func ip(n int) *int      { return &n }
func i64(n int64) *int64 { return &n }

// newActivate is a one-part run of one campaign hour starting now, in
// slots of single minutes (60: one iteration, 30: two); the window is long
// as a safety net only.
func newActivate(id int64, typ fccwire.TestType, single int, groups ...fccwire.Group) *fccwire.Activate {
	now := time.Now()
	return &fccwire.Activate{CommandID: fmt.Sprintf("act-%d", id), ActivationID: id, FccTestID: 7, RunNumber: 1, Type: typ, DomainID: 1,
		Part: 1, Parts: 1, Window: fccwire.Window{StartAt: fccwire.At(now), EndAt: fccwire.At(now.Add(10 * time.Minute))},
		Schedule: fccwire.Schedule{TotalTestDuration: 1, SingleTestDuration: single, Iterations: fccwire.Iterations(1, single),
			RequestDeviceConnect: true},
		Config: fccwire.ActivateConfig{Retry: fccwire.Retry{StopDrainGraceSec: 900}, Groups: groups}}
}
