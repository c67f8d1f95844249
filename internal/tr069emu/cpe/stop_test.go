package cpe

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/testutil"
	"cpesuite/internal/tr069emu/tree"
)

// TestStopLeavesNoGoroutines stops 100 devices in the middle of their
// retry back-off and 20 in the middle of an HTTP exchange, and waits for
// the goroutine count to come back to where it was. It does not run in
// parallel: it counts every goroutine of the process.
func TestStopLeavesNoGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusInternalServerError)
		}))
		defer failing.Close()
		var hanging atomic.Int64
		blackHole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Read the body first: only then does the server notice the
			// client going away and cancel r.Context().
			_, _ = io.Copy(io.Discard, r.Body)
			hanging.Add(1)
			<-r.Context().Done()
		}))
		defer blackHole.Close()
		env := &Env{MinRetry: 20 * time.Millisecond}
		tmpl := baseTemplate(t, tree.TR181)
		var devs []*Device
		for i := range 120 {
			url := failing.URL
			if i >= 100 {
				url = blackHole.URL
			}
			d := New(env, Options{Serial: "EMULEAK" + strconv.Itoa(i), ACSURL: url, Tree: tree.New(tmpl), Bootstrap: true,
				Updatable: []Updatable{{Name: "Device.DeviceInfo.ProcessStatus.CPUUsage", Max: 100}}, UpdateEvery: time.Millisecond})
			d.Start(context.Background())
			devs = append(devs, d)
		}
		eventually(t, "every failing device in its back-off", func() bool {
			for _, d := range devs[:100] {
				d.mu.Lock()
				retries := d.retries
				d.mu.Unlock()
				if retries < 2 {
					return false
				}
			}
			return true
		})
		eventually(t, "20 devices in an exchange", func() bool { return hanging.Load() >= 20 })
		if env.InSession.Load() < 20 {
			t.Errorf("InSession %d with 20 devices waiting for the ACS", env.InSession.Load())
		}
		var wg sync.WaitGroup
		for _, d := range devs {
			wg.Go(d.Stop)
		}
		wg.Wait()
		if n := env.InSession.Load(); n != 0 {
			t.Errorf("InSession %d after Stop", n)
		}
		for _, d := range devs {
			if d.InSession() {
				t.Errorf("%s in session after Stop", d.Serial())
			}
			d.Stop() // twice is fine
		}
	}()
	deadline := time.Now().Add(waitFor)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines after Stop, %d before:\n%s", runtime.NumGoroutine(), base, leaked(buf))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leaked keeps the stacks that mention this package.
func leaked(all []byte) []byte {
	var out [][]byte
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		if bytes.Contains(g, []byte("tr069emu/cpe")) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return all
	}
	return bytes.Join(out, []byte("\n\n"))
}

func TestStopBeforeStartAndTwice(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Settings{})
	d := New(env, Options{Serial: "EMUIDLE", ACSURL: "http://" + testutil.FreeAddr(t), Tree: tree.New(baseTemplate(t, tree.TR181))})
	d.Stop()
	d.Stop()
	if d.ConnectionRequest() {
		t.Error("a stopped device accepted a connection request")
	}
}

// A periodic timer that fired while the interval was being changed must not
// re-arm itself next to the new one (which would double the informs).
func TestStalePeriodicTimerDoesNotRearm(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	d := startDevice(t, newEnv(t, Settings{}), tree.TR181, a.url("EMUSTALE"), Options{Serial: "EMUSTALE", WithoutInitialInform: true})
	d.mu.Lock()
	stale := d.periodicGen
	d.mu.Unlock()
	d.SetPeriodic(2 * time.Hour)
	d.mu.Lock()
	current := d.periodicT
	d.mu.Unlock()
	d.periodicFire(stale) // what the old timer's goroutine does if it lost the race for d.mu
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.periodicT != current {
		t.Error("a stale periodic timer replaced the current one")
	}
	if len(d.events) != 0 {
		t.Errorf("a stale periodic timer queued %v", codes(d.events))
	}
}
