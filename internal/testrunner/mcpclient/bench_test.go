package mcpclient

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
	"cpesuite/internal/testrunner/testcase"
	"cpesuite/internal/testrunner/worker"
)

// benchServer serves one echo tool over streamable HTTP, stateless like
// the emulator tool server or with sessions like the browser one.
func benchServer(b *testing.B, stateless bool) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchModes(b *testing.B, f func(b *testing.B, url string)) {
	for _, m := range []struct {
		name      string
		stateless bool
	}{{"stateless", true}, {"session", false}} {
		b.Run(m.name, func(b *testing.B) { f(b, benchServer(b, m.stateless)) })
	}
}

// BenchmarkCall measures one tool call through the client on loopback:
// the MCP transport's share of a step.
func BenchmarkCall(b *testing.B) {
	benchModes(b, func(b *testing.B, url string) {
		c := New(Config{Setting: func(string) string { return "bench=" + url }, Log: slog.New(slog.DiscardHandler)})
		defer c.Close()
		ctx := context.Background()
		if _, _, err := c.Call(ctx, "bench", "echo", map[string]any{"text": "warm"}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if res, isErr, err := c.Call(ctx, "bench", "echo", map[string]any{"text": "x"}); err != nil || isErr || res != "x" {
				b.Fatalf("%q %v %v", res, isErr, err)
			}
		}
	})
}

// BenchmarkDeterministicStepOverMCP measures a whole deterministic step
// as a run makes it: engine, tool log, expectation check and the MCP call
// to a real tool server whose tool does nothing, so all of it is overhead.
// One iteration is one step of a run of b.N steps started over HTTP.
func BenchmarkDeterministicStepOverMCP(b *testing.B) {
	benchModes(b, func(b *testing.B, url string) {
		steps := make([]testcase.Step, b.N)
		for i := range steps {
			steps[i] = testcase.Step{Action: fmt.Sprint("step ", i), Tool: &testcase.ToolCall{Server: "bench", Name: "echo",
				Arguments: map[string]any{"text": fmt.Sprint("n", i)}, Expect: &testcase.Expectation{Equals: fmt.Sprint("n", i)}}}
		}
		cases := oneCase{"bench.yaml": {ID: "bench", Title: "bench", Steps: steps}}
		var w *worker.Worker
		c := New(Config{Setting: func(k string) string { return w.Setting(k) }, Log: slog.New(slog.DiscardHandler)})
		env := func(k string) (string, bool) {
			if k == "MCP_SERVERS" {
				return "bench=" + url, true
			}
			return "", false
		}
		w, err := worker.New(worker.Config{DataDir: b.TempDir(), Secret: testSecret, Tools: c, Env: env}, cases, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			w.Shutdown(ctx)
			_ = c.Close()
		}()
		if _, _, err := c.Call(context.Background(), "bench", "echo", map[string]any{"text": "warm"}); err != nil {
			b.Fatal(err)
		}
		mux := httpx.NewMux()
		w.Routes(mux)
		srv := httptest.NewServer(mux)
		defer srv.Close()
		do := func(method, path string) string {
			req, _ := http.NewRequest(method, srv.URL+path, nil)
			identity.SignRequest(testSecret, req, identity.Identity{Username: "bench", Role: identity.RoleEditor}, time.Now())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			return string(data)
		}
		b.ResetTimer()
		out := do("POST", "/api/run?test_file=bench.yaml")
		id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), `{"run_id":"`), `"}`)
		var detail string
		deadline := time.Now().Add(10 * time.Minute)
		for time.Now().Before(deadline) {
			detail = do("GET", "/api/runs/"+id)
			if !strings.Contains(detail, `"status":"running"`) {
				break
			}
			time.Sleep(time.Millisecond) // polling the run is the benchmark's own cost, not the step's
		}
		b.StopTimer()
		if !strings.Contains(detail, `"status":"passed"`) {
			b.Fatalf("run did not pass: %.500s", detail)
		}
	})
}
