package cpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/tree"
)

func TestStartInformsBootstrapOrBoot(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		// A device's first contact after power-on carries 1 BOOT with
		// 0 BOOTSTRAP, as real CPEs send it.
		for _, tc := range []struct {
			name      string
			bootstrap bool
			want      []string
		}{{"new device", true, []string{cwmp.EventBootstrap, cwmp.EventBoot}}, {"known device", false, []string{cwmp.EventBoot}}} {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				a := newDouble(t)
				serial := "EMU" + strings.ReplaceAll(m.name, "-", "") + map[bool]string{true: "NEW", false: "OLD"}[tc.bootstrap]
				before := time.Now().UTC().Truncate(time.Second)
				d := startDevice(t, newEnv(t, Settings{}), m.name, a.url(serial),
					Options{Serial: serial, Bootstrap: tc.bootstrap, ConnReqURL: "http://cpe.example:7547/cr/" + serial})
				inf, _ := a.waitInform(t, serial, 0, tc.want[0], "")
				after := time.Now().UTC()

				if got := codes(inf.Event); !slices.Equal(got, tc.want) {
					t.Errorf("events %v, want exactly %v", got, tc.want)
				}
				want := cwmp.DeviceID{Manufacturer: "cpesuite", OUI: "A1B2C3", ProductClass: "EMU-GW", SerialNumber: serial}
				if inf.DeviceID != want {
					t.Errorf("DeviceId %+v, want %+v", inf.DeviceID, want)
				}
				if got := paramValue(t, d, m.root+"DeviceInfo.SerialNumber"); got != serial {
					t.Errorf("tree SerialNumber %q, want the serial %q", got, serial)
				}
				if inf.RetryCount != 0 || inf.MaxEnvelopes != 1 {
					t.Errorf("RetryCount %d MaxEnvelopes %d, want 0 and 1", inf.RetryCount, inf.MaxEnvelopes)
				}
				if inf.CurrentTime.Before(before) || inf.CurrentTime.After(after) {
					t.Errorf("CurrentTime %v outside [%v, %v]", inf.CurrentTime, before, after)
				}
				// Exactly the inform="true" parameters, with the tree's values
				// and types, in file order.
				forced := d.Tree().InformParams()
				if len(forced) < 5 {
					t.Fatalf("base tree has only %d inform parameters", len(forced))
				}
				if len(inf.ParameterList) != len(forced) {
					t.Errorf("ParameterList has %d entries, want the %d forced ones: %+v", len(inf.ParameterList), len(forced), inf.ParameterList)
				}
				for i, p := range forced {
					if i >= len(inf.ParameterList) {
						break
					}
					got := inf.ParameterList[i]
					if got.Name != p.Name || got.Value.Text != p.Value || got.Value.Type != p.Type.XSD() {
						t.Errorf("ParameterList[%d] = %+v, want %s=%q (%s)", i, got, p.Name, p.Value, p.Type.XSD())
					}
				}
				if v, _ := informParam(inf, m.root+"ManagementServer.ConnectionRequestURL"); v != "http://cpe.example:7547/cr/"+serial {
					t.Errorf("ConnectionRequestURL %q, want the ConnReqURL option", v)
				}
				if v := paramValue(t, d, m.root+"ManagementServer.URL"); v != a.url(serial) {
					t.Errorf("ManagementServer.URL %q, want the ACS URL", v)
				}
			})
		}
	}
}

func TestWithoutInitialInform(t *testing.T) {
	t.Parallel()
	t.Run("first periodic", func(t *testing.T) {
		t.Parallel()
		a := newDouble(t)
		d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url("EMUWOPER"),
			Options{Serial: "EMUWOPER", Bootstrap: true, WithoutInitialInform: true, FirstPeriodic: 50 * time.Millisecond})
		inf, i := a.waitInform(t, "EMUWOPER", 0, cwmp.EventPeriodic, "")
		if i != 0 || !slices.Equal(codes(inf.Event), []string{cwmp.EventPeriodic}) {
			t.Fatalf("first message #%d with events %v, want the periodic Inform first and alone", i, codes(inf.Event))
		}
		if d.Periodic() != time.Hour {
			t.Errorf("periodic interval %v, want the tree's 3600 s after the first one", d.Periodic())
		}
	})
	t.Run("connection request", func(t *testing.T) {
		t.Parallel()
		a := newDouble(t)
		d := startDevice(t, newEnv(t, Settings{}), tree.TR098, a.url("EMUWOCR"),
			Options{Serial: "EMUWOCR", Bootstrap: true, WithoutInitialInform: true, PeriodicDisabled: true})
		d.mu.Lock()
		running := d.running
		d.mu.Unlock()
		if running {
			t.Fatal("a session runner started without an initial Inform")
		}
		if !d.ConnectionRequest() {
			t.Fatal("ConnectionRequest refused on an idle device")
		}
		inf, i := a.waitInform(t, "EMUWOCR", 0, cwmp.EventConnectionRequest, "")
		if i != 0 || !slices.Equal(codes(inf.Event), []string{cwmp.EventConnectionRequest}) {
			t.Fatalf("first message #%d with events %v, want 6 CONNECTION REQUEST first and alone", i, codes(inf.Event))
		}
		if d.Periodic() != 0 {
			t.Errorf("periodic %v with PeriodicDisabled", d.Periodic())
		}
	})
}

func TestRetryKeepsEventsAndCountsRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    failure
	}{
		{"503", failure{status: 503}},
		{"500", failure{status: 500}},
		{"dropped connection", failure{drop: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newDouble(t)
			serial := "EMURETRY" + strings.ReplaceAll(tc.name, " ", "")
			a.fail(serial, tc.f, tc.f, tc.f)
			env := newEnv(t, Settings{})
			d := startDevice(t, env, tree.TR181, a.url(serial), Options{Serial: serial, Bootstrap: true})
			_, done := a.waitSessionEnd(t, serial, 0)
			ps := a.all(serial)[:done+1]
			var informs []post
			for _, p := range ps {
				if p.method() == "Inform" {
					informs = append(informs, p)
				}
			}
			if len(informs) != 4 {
				t.Fatalf("%d Informs before the session succeeded, want 3 failed and 1 answered", len(informs))
			}
			for i, p := range informs {
				inf := p.Env.Body.(*cwmp.Inform)
				if inf.RetryCount != uint32(i) {
					t.Errorf("Inform %d: RetryCount %d, want %d", i, inf.RetryCount, i)
				}
				if !slices.Equal(codes(inf.Event), []string{cwmp.EventBootstrap, cwmp.EventBoot}) {
					t.Errorf("Inform %d: events %v, want 0 BOOTSTRAP and 1 BOOT kept for the retry", i, codes(inf.Event))
				}
				if i > 0 {
					// TR-069 3.2.1.1 back-off with m = 20 ms: 20, 40, 80 ms at least.
					if gap, lo := p.At.Sub(informs[i-1].At), env.MinRetry<<(i-1); gap < lo {
						t.Errorf("retry %d after %v, want at least %v", i, gap, lo)
					}
				}
			}
			if env.Failures.Load() != 3 || env.Sessions.Load() != 1 {
				t.Errorf("Failures %d Sessions %d, want 3 and 1", env.Failures.Load(), env.Sessions.Load())
			}
			// After a success the count starts again and BOOTSTRAP is gone.
			from := len(a.all(serial))
			connReq(t, d)
			inf, _ := a.waitInform(t, serial, from, cwmp.EventConnectionRequest, "")
			if inf.RetryCount != 0 || !slices.Equal(codes(inf.Event), []string{cwmp.EventConnectionRequest}) {
				t.Errorf("next session: RetryCount %d events %v, want 0 and 6 CONNECTION REQUEST only", inf.RetryCount, codes(inf.Event))
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	a.fail("EMURA", failure{status: 503, retryAfter: "1"})
	startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url("EMURA"), Options{Serial: "EMURA", Bootstrap: true})
	a.waitSessionEnd(t, "EMURA", 0)
	ps := a.all("EMURA")
	if ps[0].method() != "Inform" || ps[1].method() != "Inform" {
		t.Fatalf("posts %v %v, want two Informs", ps[0].method(), ps[1].method())
	}
	// The back-off alone would be 20 ms; Retry-After asks for 1 s.
	if gap := ps[1].At.Sub(ps[0].At); gap < time.Second {
		t.Fatalf("retried after %v, want at least the Retry-After of 1 s", gap)
	}
	if inf := ps[1].Env.Body.(*cwmp.Inform); inf.RetryCount != 1 || !hasEvent(inf, cwmp.EventBootstrap, "") {
		t.Fatalf("retry Inform: RetryCount %d events %v", inf.RetryCount, codes(inf.Event))
	}
}

func TestRetryWaitTable(t *testing.T) {
	t.Parallel()
	// TR-069 3.2.1.1 table 3, m = 5 s, k = 2: the n-th retry waits within
	// [m*2^(n-1), m*2^n] seconds, n counted up to 10 ("#10 and subsequent").
	table := []struct {
		n      int
		lo, hi time.Duration
	}{
		{1, 5, 10}, {2, 10, 20}, {3, 20, 40}, {4, 40, 80}, {5, 80, 160}, {6, 160, 320},
		{7, 320, 640}, {8, 640, 1280}, {9, 1280, 2560}, {10, 2560, 5120}, {11, 2560, 5120}, {12, 2560, 5120},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range table {
		lo, hi := tc.lo*time.Second, tc.hi*time.Second
		if got := RetryWait(tc.n, false, rand.Int64N); got != lo {
			t.Errorf("n=%d without random: %v, want the lower bound %v", tc.n, got, lo)
		}
		if got := RetryWait(tc.n, true, nil); got != lo {
			t.Errorf("n=%d random without a source: %v, want %v", tc.n, got, lo)
		}
		// The window's ends are reachable: rnd gets the window size + 1.
		var asked int64
		if got := RetryWait(tc.n, true, func(n int64) int64 { asked = n; return 0 }); got != lo {
			t.Errorf("n=%d smallest draw: %v, want %v", tc.n, got, lo)
		}
		if got := RetryWait(tc.n, true, func(n int64) int64 { return n - 1 }); got != hi {
			t.Errorf("n=%d largest draw: %v, want %v", tc.n, got, hi)
		}
		if asked != int64(hi-lo)+1 {
			t.Errorf("n=%d: random source asked for [0, %d), want [0, %d)", tc.n, asked, int64(hi-lo)+1)
		}
		for range 200 {
			if got := RetryWait(tc.n, true, rng.Int64N); got < lo || got > hi {
				t.Fatalf("n=%d: random wait %v outside [%v, %v]", tc.n, got, lo, hi)
			}
		}
	}
	for _, n := range []int{0, -3} {
		if got := RetryWait(n, false, nil); got != 5*time.Second {
			t.Errorf("n=%d: %v, want the first retry's 5 s", n, got)
		}
	}
	if got := retryWait(3, 20*time.Millisecond, false, nil); got != 80*time.Millisecond {
		t.Errorf("m=20ms n=3: %v, want 80ms", got)
	}
}

func TestCookiesLastOneSession(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	const serial = "EMUCOOKIE"
	a.configure(serial, func(dd *doubleDevice) { dd.cookie = "cwmpsession" })
	d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url(serial), Options{Serial: serial, Bootstrap: true})
	a.waitSessionEnd(t, serial, 0)
	// Two more sessions, each with RPCs so that several POSTs follow the Inform.
	for range 2 {
		a.queue(serial, &cwmp.GetRPCMethods{})
		id := a.queue(serial, &cwmp.GetParameterValues{ParameterNames: []string{"Device.DeviceInfo.SerialNumber"}})
		a.await(t, d, id)
	}
	_, last := a.waitSessionEnd(t, serial, len(a.all(serial))-1)
	session := 0
	for i, p := range a.all(serial)[:last+1] {
		if p.method() == "Inform" {
			session++
			if p.Cookie != "" {
				t.Errorf("post %d: Inform of session %d sent cookie %q from an earlier session", i, session, p.Cookie)
			}
			continue
		}
		if want := "cwmpsession=s" + string(rune('0'+session)); p.Cookie != want {
			t.Errorf("post %d (%s) in session %d: Cookie %q, want %q", i, p.method(), session, p.Cookie, want)
		}
	}
	if session != 3 {
		t.Fatalf("%d sessions, want 3", session)
	}
}

func TestNotifyPassiveAndActive(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a := newDouble(t)
			serial := "EMUNOTE" + strings.ReplaceAll(m.name, "-", "")
			d := startDevice(t, newEnv(t, Settings{}), m.name, a.url(serial), Options{Serial: serial, Bootstrap: true})
			a.waitSessionEnd(t, serial, 0)
			idle(t, d)
			tr := d.Tree()
			passive, active := m.root+"Time.NTPServer1", m.root+"Time.NTPServer2"
			if err := tr.SetNotification(passive, 1); err != nil {
				t.Fatal(err)
			}
			if err := tr.SetNotification(active, 2); err != nil {
				t.Fatal(err)
			}

			// Passive: no session, the change rides on the next Inform.
			changes, err := tr.SetValues([]tree.Set{{Name: passive, Value: "ntp.passive.example"}}, tree.SetOptions{})
			if err != nil || len(changes) != 1 || changes[0].Notification != 1 {
				t.Fatalf("changes %+v err %v", changes, err)
			}
			if d.Notify(changes) {
				t.Fatal("Notify of a passive change reported a session")
			}
			d.mu.Lock()
			running := d.running
			d.mu.Unlock()
			if running {
				t.Fatal("a passive change started a session")
			}
			from := len(a.all(serial))
			connReq(t, d)
			inf, _ := a.waitInform(t, serial, from, cwmp.EventConnectionRequest, "")
			if v, ok := informParam(inf, passive); !ok || v != "ntp.passive.example" {
				t.Errorf("Inform after a passive change lacks %s: %+v", passive, inf.ParameterList)
			}
			// TR-069 A.3.2.4: a passive change also brings 4 VALUE CHANGE.
			if !hasEvent(inf, cwmp.EventValueChange, "") {
				t.Errorf("Inform after a passive change: events %v, want 4 VALUE CHANGE too", codes(inf.Event))
			}
			_, end := a.waitSessionEnd(t, serial, from)

			// Delivered once: the next Inform does not repeat it.
			connReq(t, d)
			inf, _ = a.waitInform(t, serial, end+1, cwmp.EventConnectionRequest, "")
			if _, ok := informParam(inf, passive); ok || hasEvent(inf, cwmp.EventValueChange, "") {
				t.Errorf("passive change informed twice: %v %+v", codes(inf.Event), inf.ParameterList)
			}
			_, end = a.waitSessionEnd(t, serial, end+1)

			// Active: a session of its own with 4 VALUE CHANGE.
			changes, _ = tr.SetValues([]tree.Set{{Name: active, Value: "ntp.active.example"}}, tree.SetOptions{})
			if !d.Notify(changes) {
				t.Fatal("Notify of an active change started no session")
			}
			inf, _ = a.waitInform(t, serial, end+1, cwmp.EventValueChange, "")
			if v, ok := informParam(inf, active); !ok || v != "ntp.active.example" {
				t.Errorf("VALUE CHANGE Inform lacks %s: %+v", active, inf.ParameterList)
			}
			// Changes with notification off are not reported.
			if d.Notify([]tree.Change{{Name: m.root + "Time.NTPServer3", Value: "x", Notification: 0}}) {
				t.Error("a change with notification off started a session")
			}
		})
	}
}

// A session that only delivers requests (their Inform got through, the
// request did not) reports the event of the request it carries.
func TestRequestRetryReportsItsEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		invoke, event, method string
	}{
		{"TransferComplete", cwmp.EventTransferComplete, "TransferComplete"},
		{"DUStateChangeComplete", cwmp.EventDUStateChangeComplete, "DUStateChangeComplete"},
	} {
		t.Run(tc.invoke, func(t *testing.T) {
			t.Parallel()
			a := newDouble(t)
			serial := "EMUREQ" + tc.invoke[:2]
			d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url(serial), Options{Serial: serial, Bootstrap: true})
			_, end := a.waitSessionEnd(t, serial, 0)
			idle(t, d)
			a.configure(serial, func(dd *doubleDevice) { dd.failRequests = 1 })
			if err := d.Invoke(tc.invoke); err != nil {
				t.Fatal(err)
			}
			first, i := a.waitInform(t, serial, end+1, tc.event, "")
			if first.RetryCount != 0 {
				t.Errorf("first Inform RetryCount %d", first.RetryCount)
			}
			retry, j := a.waitPost(t, serial, i+1, "retry Inform", func(p post) bool { return p.method() == "Inform" })
			inf := retry.Env.Body.(*cwmp.Inform)
			if inf.RetryCount != 1 || !slices.Equal(codes(inf.Event), []string{tc.event}) {
				t.Errorf("retry Inform: RetryCount %d events %v, want 1 and %s", inf.RetryCount, codes(inf.Event), tc.event)
			}
			req, _ := a.waitPost(t, serial, j+1, tc.method, func(p post) bool { return p.method() == tc.method })
			if req.Reply != tc.method+"Response" {
				t.Errorf("request answered %q", req.Reply)
			}
		})
	}
}

func TestConnectionRequestOverridesBackoff(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	const serial = "EMUBACKOFF"
	a.fail(serial, failure{status: 500})
	env := newEnv(t, Settings{})
	env.MinRetry = time.Hour // the back-off alone would outlast the test
	d := startDevice(t, env, tree.TR181, a.url(serial), Options{Serial: serial, Bootstrap: true})
	eventually(t, "the back-off", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.retryT != nil && !d.running
	})
	// New work waits for the back-off...
	if err := d.Invoke("Periodic"); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	running := d.running
	d.mu.Unlock()
	if running {
		t.Fatal("an event started a session during the back-off")
	}
	// ...but the ACS asking wins: a session now, with everything owed.
	connReq(t, d)
	inf, _ := a.waitInform(t, serial, 1, cwmp.EventConnectionRequest, "")
	want := []string{cwmp.EventBootstrap, cwmp.EventBoot, cwmp.EventPeriodic, cwmp.EventConnectionRequest}
	if !slices.Equal(codes(inf.Event), want) || inf.RetryCount != 1 {
		t.Fatalf("events %v RetryCount %d, want %v and 1", codes(inf.Event), inf.RetryCount, want)
	}
	a.waitSessionEnd(t, serial, 0)
	idle(t, d)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.retryT != nil || d.retries != 0 {
		t.Errorf("after success: retry timer %v, retries %d", d.retryT != nil, d.retries)
	}
}

func TestTriggerKeepsEventsOnce(t *testing.T) {
	t.Parallel()
	d := newDevice(t, newEnv(t, Settings{}), tree.TR181, "http://"+testutil.FreeAddr(t), Options{Serial: "EMUTRIGGER"})
	d.Trigger(
		cwmp.EventStruct{EventCode: cwmp.EventBoot},
		cwmp.EventStruct{EventCode: cwmp.EventBoot},
		cwmp.EventStruct{EventCode: cwmp.EventMReboot, CommandKey: "a"},
		cwmp.EventStruct{EventCode: cwmp.EventMReboot, CommandKey: "a"},
		cwmp.EventStruct{EventCode: cwmp.EventMReboot, CommandKey: "b"},
		cwmp.EventStruct{EventCode: cwmp.EventValueChange},
	)
	d.Trigger(cwmp.EventStruct{EventCode: cwmp.EventValueChange}, cwmp.EventStruct{EventCode: cwmp.EventMDownload, CommandKey: "a"})
	d.mu.Lock()
	defer d.mu.Unlock()
	want := []string{cwmp.EventBoot, cwmp.EventMReboot + "[a]", cwmp.EventMReboot + "[b]", cwmp.EventValueChange, cwmp.EventMDownload + "[a]"}
	if got := codes(d.events); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d.running {
		t.Error("a device not started started a session")
	}
}
