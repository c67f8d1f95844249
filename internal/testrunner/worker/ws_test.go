package worker

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/wire"
	"cpesuite/internal/testutil"
)

// dialRun opens the run's WebSocket as id.
func (e *env) dialRun(ctx context.Context, id identity.Identity, runID string, header http.Header) (*websocket.Conn, error) {
	path := "/ws/run/" + runID
	if header == nil {
		header = http.Header{}
	}
	header.Set(identity.Header, identity.Sign(testSecret, id, "GET", path, time.Now()))
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+path, &websocket.DialOptions{HTTPHeader: header})
	if err == nil {
		c.SetReadLimit(16 << 20)
	}
	return c, err
}

// readAll reads messages until the server closes the socket and returns
// them with the close status.
func readAll(ctx context.Context, c *websocket.Conn) ([]wire.RunDetail, websocket.StatusCode, error) {
	var msgs []wire.RunDetail
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return msgs, websocket.CloseStatus(err), err
		}
		var d wire.RunDetail
		if err := json.Unmarshal(b, &d); err != nil {
			return msgs, -1, err
		}
		msgs = append(msgs, d)
	}
}

func TestWebSocketStreamsDeltas(t *testing.T) {
	e := newEnv(t)
	e.cases.put("ws.yaml", newCase("ws", gate(), gate(), echo("last", nil)))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	id := e.startRun(alice, "ws.yaml", "")
	c, err := e.dialRun(ctx, alice, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		msgs   []wire.RunDetail
		status websocket.StatusCode
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	var seen []wire.RunDetail
	go func() {
		var r result
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				r.status = websocket.CloseStatus(err)
				break
			}
			var d wire.RunDetail
			_ = json.Unmarshal(b, &d)
			r.msgs = append(r.msgs, d)
			mu.Lock()
			seen = append(seen, d)
			mu.Unlock()
		}
		done <- r
	}()
	stepSeen := func(i int, status string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) > 0 && seen[len(seen)-1].Steps[i].Status == status
		}
	}
	testutil.Eventually(t, waitFor, "step 1 running on the socket", stepSeen(0, wire.StepRunning))
	e.tools.open(t)
	testutil.Eventually(t, waitFor, "step 2 running on the socket", stepSeen(1, wire.StepRunning))
	e.tools.open(t)
	res := <-done

	if res.status != websocket.StatusNormalClosure {
		t.Fatalf("close status %d, want 1000", res.status)
	}
	msgs := res.msgs
	first, last := msgs[0], msgs[len(msgs)-1]
	if first.Delta || first.RunID != id || first.Status != wire.StatusRunning || len(first.Steps) != 3 || first.MCPLog == nil {
		t.Fatalf("first message is not the whole detail: %+v", first)
	}
	if !last.Delta || last.Status != wire.StatusPassed || last.Phase != wire.PhaseDone || last.Report == nil {
		t.Fatalf("last message is not the final state: %+v", last)
	}
	final := e.run(alice, id)
	var output strings.Builder
	var seqs []int
	rank := map[string]int{wire.StepPending: 0, wire.StepRunning: 1, wire.StepPassed: 2}
	prev := make([]int, 3)
	for i, m := range msgs {
		if i > 0 && !m.Delta {
			t.Fatalf("message %d is not a delta", i)
		}
		output.WriteString(m.Output)
		for _, call := range m.MCPLog {
			seqs = append(seqs, call.Seq)
		}
		for j, s := range m.Steps {
			r, ok := rank[s.Status]
			if !ok || r < prev[j] {
				t.Fatalf("message %d: step %d went from rank %d to %q", i, j+1, prev[j], s.Status)
			}
			prev[j] = r
		}
	}
	if output.String() != final.Output {
		t.Fatalf("deltas add up to %q, the run's output is %q", output.String(), final.Output)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
		t.Fatalf("tool-log entries over the socket: %v, want each once in order", seqs)
	}

	// A finished run: one whole message, then a normal close.
	c, err = e.dialRun(ctx, alice, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, status, _ := readAll(ctx, c)
	if status != websocket.StatusNormalClosure || len(msgs) != 1 || msgs[0].Delta || msgs[0].Output != final.Output {
		t.Fatalf("finished run: %d messages, status %d", len(msgs), status)
	}
}

func TestWebSocketHundredWatchers(t *testing.T) {
	e := newEnv(t)
	e.cases.put("ws.yaml", newCase("ws", gate(), echo("x", nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitFor)
	defer cancel()
	id := e.startRun(alice, "ws.yaml", "")
	const n = 100
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		c, err := e.dialRun(ctx, alice, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	type result struct {
		last   wire.RunDetail
		output string
		status websocket.StatusCode
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			msgs, status, _ := readAll(ctx, c)
			var out strings.Builder
			for _, m := range msgs {
				out.WriteString(m.Output)
			}
			results[i] = result{msgs[len(msgs)-1], out.String(), status}
		})
	}
	e.tools.open(t)
	wg.Wait()
	final := e.run(alice, id)
	for i, r := range results {
		if r.status != websocket.StatusNormalClosure || r.last.Status != wire.StatusPassed || r.output != final.Output {
			t.Fatalf("watcher %d: status %d, last %s, output %q", i, r.status, r.last.Status, r.output)
		}
	}
}

func TestWebSocketRejections(t *testing.T) {
	e := newEnv(t)
	e.cases.put("a.yaml", newCase("a", echo("x", nil)))
	id := e.runCase(alice, "a.yaml", "").RunID
	e.errorCode(nil, "GET", "/ws/run/"+id, nil, 401)
	e.errorCode(&bob, "GET", "/ws/run/"+id, nil, 404)
	if code, _ := e.errorCode(&alice, "GET", "/ws/run/"+id, nil, 400); code != "WEBSOCKET_REQUIRED" {
		t.Fatalf("plain GET: %s", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	_, err := e.dialRun(ctx, alice, id, http.Header{"Origin": {"https://evil.example"}})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("foreign origin: %v", err)
	}
	host := strings.TrimPrefix(e.srv.URL, "http://")
	c, err := e.dialRun(ctx, alice, id, http.Header{"Origin": {"http://" + host}})
	if err != nil {
		t.Fatalf("same-host origin refused: %v", err)
	}
	if _, status, _ := readAll(ctx, c); status != websocket.StatusNormalClosure {
		t.Fatalf("close status %d", status)
	}
}

func TestWebSocketClosedOnShutdown(t *testing.T) {
	e := newEnv(t)
	e.cases.put("long.yaml", newCase("long", waitStep(600)))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	id := e.startRun(alice, "long.yaml", "")
	c, err := e.dialRun(ctx, alice, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []wire.RunDetail, 1)
	go func() {
		msgs, _, _ := readAll(ctx, c)
		got <- msgs
	}()
	testutil.Eventually(t, waitFor, "the wait step to start", func() bool {
		return e.run(alice, id).Steps[0].Status == wire.StepRunning
	})
	e.w.Shutdown(ctx)
	msgs := <-got
	last := msgs[len(msgs)-1]
	if last.Status != wire.StatusError || !strings.Contains(e.run(alice, id).Output, "worker shutting down") {
		t.Fatalf("last message after shutdown: %+v", last)
	}
	if _, err := e.dialRun(ctx, alice, id, nil); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial after shutdown: %v", err)
	}
}

func TestSlowWatcherDoesNotBlockTheRun(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", 32<<10)
	var steps []testcase.Step
	for range 16 {
		steps = append(steps, echo(big, nil))
	}
	e.cases.put("big.yaml", newCase("big", append([]testcase.Step{gate()}, steps...)...))
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitFor)
	defer cancel()
	id := e.startRun(alice, "big.yaml", "")
	c, err := e.dialRun(ctx, alice, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The watcher reads nothing while the run produces its tool log.
	e.tools.open(t)
	r, _ := e.w.ownedRun("alice", id)
	select {
	case <-r.done:
	case <-ctx.Done():
		t.Fatal("the run did not end while its watcher was not reading")
	}
	final := r.detail(time.Now())
	if final.Status != wire.StatusPassed || len(final.MCPLog) != 17 {
		t.Fatalf("run: %s with %d log entries", final.Status, len(final.MCPLog))
	}
	msgs, status, _ := readAll(ctx, c)
	var entries int
	for _, m := range msgs {
		entries += len(m.MCPLog)
	}
	if status != websocket.StatusNormalClosure || entries != 17 || msgs[len(msgs)-1].Status != wire.StatusPassed {
		t.Fatalf("slow watcher: %d messages, %d log entries, close %d", len(msgs), entries, status)
	}
}
