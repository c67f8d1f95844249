package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/testutil"
)

// buildCpesuite compiles the real command into dir: the fault tests kill
// and restart it as a subprocess, which an in-process `up` cannot model.
// CPESUITE_E2E_BINARY names a binary built beforehand instead, to run the
// tests against another tree (for example a clean checkout of a commit
// while the working tree holds someone's unfinished change).
func buildCpesuite(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("CPESUITE_E2E_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "cpesuite")
	out, err := exec.Command("go", "build", "-o", bin, "cpesuite/cmd/cpesuite").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is one `cpesuite` subprocess that a test may kill and start again
// with the same arguments and environment.
type proc struct {
	t      *testing.T
	name   string
	bin    string
	args   []string
	env    []string
	logs   *testutil.SyncBuffer // every incarnation's stderr, in order
	cmd    *exec.Cmd
	exited chan error
	starts int
}

// newProc prepares a subprocess; it is stopped (SIGTERM) when the test
// ends, and its logs are printed when the test failed.
func newProc(t *testing.T, name, bin string, env map[string]string, args ...string) *proc {
	p := &proc{t: t, name: name, bin: bin, args: args, logs: &testutil.SyncBuffer{}}
	// The process environment first, ours after it: exec keeps the last
	// value of a repeated name, so a GRID_MEMBERS or data dir of the
	// caller's shell cannot leak in.
	p.env = append([]string{}, os.Environ()...)
	for k, v := range env {
		p.env = append(p.env, k+"="+v)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- %s logs (last 8000 bytes) ---\n%s", p.name, tail(p.logs.String(), 8000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func (p *proc) start() {
	p.t.Helper()
	p.starts++
	_, _ = p.logs.Write([]byte("=== start " + p.name + " #" + strconv.Itoa(p.starts) + "\n"))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting %s: %v", p.name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p.cmd, p.exited = cmd, exited
}

// running fails the test when the process has exited on its own.
func (p *proc) running() bool {
	p.t.Helper()
	select {
	case err := <-p.exited:
		p.exited = nil
		p.t.Fatalf("%s exited on its own (%v):\n%s", p.name, err, tail(p.logs.String(), 8000))
	default:
	}
	return true
}

// kill is the fault: SIGKILL, no clean-up of any kind in the process.
func (p *proc) kill() {
	p.t.Helper()
	if p.cmd == nil || p.exited == nil {
		p.t.Fatalf("%s is not running", p.name)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(platformDeadline):
		p.t.Fatalf("%s did not die after SIGKILL", p.name)
	}
	p.exited = nil
}

// stop ends the process cleanly if it still runs.
func (p *proc) stop() {
	if p.cmd == nil || p.exited == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(platformDeadline):
		p.t.Errorf("%s did not stop within %s after SIGTERM; killing it", p.name, platformDeadline)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.exited = nil
}

// answers polls url until the process answers it at all: a listening
// server is what the callers need; they wait for their own conditions
// after this.
func (p *proc) answers(url string) {
	p.t.Helper()
	testutil.Eventually(p.t, platformDeadline, p.name+" answering "+url, func() bool {
		p.running()
		resp, err := http.Get(url)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a poll interval, not a wait for time
			return false
		}
		resp.Body.Close()
		return true
	})
}

// gridServer is the test's own NATS server, reached by the processes over
// TCP: the queue names are the contract's, so a shared server would mix
// this test's messages with another test's.
type gridServer struct {
	t    *testing.T
	addr string
	dir  string
	emb  *grid.Embedded
}

func startGridServer(t *testing.T) *gridServer {
	t.Helper()
	g := &gridServer{t: t, addr: testutil.FreeAddr(t), dir: t.TempDir()}
	g.start()
	t.Cleanup(func() {
		if g.emb != nil {
			g.emb.Shutdown()
		}
	})
	return g
}

func (g *gridServer) start() {
	g.t.Helper()
	cfg := grid.DefaultConfig()
	cfg.StoreDir, cfg.Listen = g.dir, g.addr
	// The port was ours a moment ago; a restart may find it briefly busy.
	var err error
	testutil.Eventually(g.t, platformDeadline, "the grid server listening on "+g.addr, func() bool {
		g.emb, err = grid.StartEmbedded(cfg)
		return err == nil
	})
}

// restart shuts the server down, keeps it down for outage (long enough for
// every client to notice and enter its reconnect loop), and starts it again
// on the same port and store directory: streams, consumers and maps come
// back from disk, connections do not.
func (g *gridServer) restart(outage time.Duration) {
	g.t.Helper()
	g.shutdown()
	time.Sleep(outage)
	g.start()
}

// shutdown stops the server until the next start.
func (g *gridServer) shutdown() {
	g.emb.Shutdown()
	g.emb = nil
}

// gridTap counts what the processes publish to the result and finished
// queues, on a plain subscription: it sees every publish that reaches the
// server, including re-publishes the queue's duplicate window drops.
type gridTap struct {
	mu          sync.Mutex
	published   map[string]int   // RESULT publishes by natural key (message id)
	resultsSent map[int64]int64  // ACTIVATION_FINISHED resultsSent by run
	finished    map[int64]string // ACTIVATION_FINISHED reason by run
}

func tapGrid(t *testing.T, addr string) *gridTap {
	t.Helper()
	tap := &gridTap{published: map[string]int{}, resultsSent: map[int64]int64{}, finished: map[int64]string{}}
	nc, err := nats.Connect("nats://"+addr, nats.Name("e2e-tap"), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatalf("tap: %v", err)
	}
	t.Cleanup(nc.Close)
	if _, err := nc.Subscribe("grid.q."+fccwire.QueueResults, func(m *nats.Msg) {
		tap.mu.Lock()
		tap.published[m.Header.Get(nats.MsgIdHdr)]++
		tap.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("grid.q."+fccwire.QueueActivationFinished, func(m *nats.Msg) {
		var f fccwire.ActivationFinished
		if json.Unmarshal(m.Data, &f) == nil {
			tap.mu.Lock()
			tap.resultsSent[f.ActivationID] = f.ResultsSent
			tap.finished[f.ActivationID] = string(f.Reason)
			tap.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), platformDeadline)
	defer cancel()
	if err := nc.FlushWithContext(ctx); err != nil {
		t.Fatalf("tap: %v", err)
	}
	return tap
}

// publishes returns the RESULT publishes seen: distinct keys and the total.
func (tap *gridTap) publishes() (keys, total int) {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for _, n := range tap.published {
		total += n
	}
	return len(tap.published), total
}

func (tap *gridTap) finishedRun(id int64) (resultsSent int64, reason string, ok bool) {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	reason, ok = tap.finished[id]
	return tap.resultsSent[id], reason, ok
}
