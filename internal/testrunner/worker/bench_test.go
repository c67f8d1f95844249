package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
)

func benchWorker(b *testing.B, tools Tools) *Worker {
	w, err := New(Config{DataDir: b.TempDir(), Secret: testSecret, Tools: tools}, &mapCases{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		w.Shutdown(ctx)
	})
	return w
}

// BenchmarkDeterministicStep measures the engine's cost of one step with
// a tool that does nothing: step reports, the tool-log entry, the
// expectation check and the output line.
func BenchmarkDeterministicStep(b *testing.B) {
	w := benchWorker(b, newFakeTools())
	steps := make([]testcase.Step, b.N)
	for i := range steps {
		steps[i] = toolStep("noop", "fake", "noop", map[string]any{"n": i}, &testcase.Expectation{NotContains: "error"})
	}
	c := newCase("bench", steps...)
	w.mu.Lock()
	r := w.newRunLocked("bench", "bench.yaml", DeterministicModel, "", false)
	w.active = r
	w.mu.Unlock()
	r.loadCase(c)
	b.ReportAllocs()
	b.ResetTimer()
	w.execute(r, deterministic{}, c)
	b.StopTimer()
	if d := r.detail(time.Now()); d.Status != wire.StatusPassed {
		b.Fatalf("run %s: %.300s", d.Status, d.Output)
	}
}

// BenchmarkWSFanout100 measures how long one change of a run takes to
// reach 100 WebSocket watchers (loopback, JSON encoding and decoding
// included): each iteration changes a step's detail and waits until every
// watcher has decoded a message showing it.
func BenchmarkWSFanout100(b *testing.B) {
	const watchers = 100
	tools := newFakeTools()
	cases := &mapCases{}
	cases.put("fan.yaml", newCase("fan", gate(), echo("x", nil)))
	w, err := New(Config{DataDir: b.TempDir(), Secret: testSecret, Tools: tools}, cases, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	mux := httpx.NewMux()
	w.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	c, _ := cases.Get("fan.yaml")
	r, err := w.startRun("bench", "fan.yaml", DeterministicModel, deterministic{}, c, false)
	if err != nil {
		b.Fatal(err)
	}
	rc := &RunContext{w: w, r: r, RunID: r.id}

	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	seen := make([]int, watchers)
	path := "/ws/run/" + r.id
	var wg sync.WaitGroup
	for i := range watchers {
		h := http.Header{}
		h.Set(identity.Header, identity.Sign(testSecret, identity.Identity{Username: "bench", Role: identity.RoleEditor}, "GET", path, time.Now()))
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+path, &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for {
				_, msg, err := conn.Read(ctx)
				if err != nil {
					return
				}
				var d wire.RunDetail
				if json.Unmarshal(msg, &d) != nil || len(d.Steps) < 2 {
					continue
				}
				n, err := strconv.Atoi(d.Steps[1].Detail)
				if err != nil {
					continue
				}
				mu.Lock()
				seen[i] = n
				cond.Broadcast()
				mu.Unlock()
			}
		})
	}

	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		rc.StepDone(1, wire.StepSkipped, strconv.Itoa(i))
		mu.Lock()
		for !allAtLeast(seen, i) {
			cond.Wait()
		}
		mu.Unlock()
	}
	b.StopTimer()

	tools.gate <- struct{}{}
	<-r.done
	sctx, scancel := context.WithTimeout(context.Background(), waitFor)
	defer scancel()
	w.Shutdown(sctx)
	wg.Wait()
}

func allAtLeast(xs []int, n int) bool {
	for _, x := range xs {
		if x < n {
			return false
		}
	}
	return true
}
