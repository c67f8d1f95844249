package browsertools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/testutil"
)

const formPage = `<!doctype html>
<html><head><title>Form page</title></head>
<body>
<h1>Greeter</h1>
<form onsubmit="return false">
  <input id="name" name="name" value="">
  <button id="go" type="button" onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value + '!'">Greet</button>
  <input id="upload" type="file">
</form>
<p id="out">waiting</p>
</body></html>`

// pageServer serves the pages the tests drive.
func pageServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, formPage)
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusFound)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Big</title><body><p id=big>%s</p></body>", strings.Repeat("0123456789abcdef", 6<<10)) // 96 KiB
	})
	mux.HandleFunc("GET /set-cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Cookie set</title><body>set</body>")
	})
	mux.HandleFunc("GET /cookie", func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("who")
		v := "none"
		if c != nil {
			v = c.Value
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Cookie</title><body><p id=c>cookie=%s</p></body>", v)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// connect opens an MCP client session to s over in-memory transports.
func connect(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "browsertools-test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callOK calls a tool that must succeed and decodes its structured output
// into out (when out is not nil).
func callOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error %q", tool, args, text(res))
	}
	if out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatalf("%s: marshal structured content: %v", tool, err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, raw, err)
		}
	}
	return res
}

// callErr calls a tool that must fail with a tool error (not a protocol
// error) and returns its message.
func callErr(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v, want a tool error", tool, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded with %q, want a tool error", tool, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.MinDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBrowserTools(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	ts := pageServer(t)
	s, err := New(Config{
		ChromiumPath: chromium,
		// A safety net for a local page on a busy two-core machine; the
		// case that waits the time-out out has a server of its own.
		Timeout:     testutil.MinDeadline,
		MaxSessions: 2,
		// Warnings and errors only: the tab goroutines outlive the test.
		Log: quietLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	a := connect(t, s)

	t.Run("a selector that never appears ends with ELEMENT_NOT_FOUND at the time-out", func(t *testing.T) {
		// Waiting out the time-out is the behaviour here, so it is short;
		// the call only opens a blank tab and looks for the element.
		short, err := New(Config{ChromiumPath: chromium, Timeout: 8 * time.Second, Log: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = short.Close() })
		msg := callErr(t, connect(t, short), ToolClick, map[string]any{"selector": "#nope"})
		for _, w := range []string{"ELEMENT_NOT_FOUND", `"#nope"`, "within 8s"} {
			if !strings.Contains(msg, w) {
				t.Errorf("click #nope: %q does not contain %q", msg, w)
			}
		}
	})

	t.Run("list tools with schemas, browser not started yet", func(t *testing.T) {
		res, err := a.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{ // tool -> required arguments
			ToolNavigate:    {"url"},
			ToolClick:       {"selector"},
			ToolType:        {"selector", "text"},
			ToolReadText:    nil,
			ToolScreenshot:  nil,
			ToolCurrentPage: nil,
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schema, _ := tool.InputSchema.(map[string]any)
			if schema["type"] != "object" {
				t.Errorf("%s: input schema %v is not an object schema", tool.Name, tool.InputSchema)
			}
			var required []string
			if r, ok := schema["required"].([]any); ok {
				for _, v := range r {
					required = append(required, v.(string))
				}
			}
			slices.Sort(required)
			if !slices.Equal(required, want[tool.Name]) {
				t.Errorf("%s: required = %v, want %v", tool.Name, required, want[tool.Name])
			}
			props, _ := schema["properties"].(map[string]any)
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s.%s has no description", tool.Name, name)
				}
			}
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
		}
		slices.Sort(names)
		wantNames := []string{"click", "current_page", "navigate", "read_text", "screenshot", "type"}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("tools = %v, want %v", names, wantNames)
		}
		for _, tool := range res.Tools {
			if tool.Name == ToolType {
				props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
				if _, ok := props["clear"]; !ok {
					t.Errorf("type has no clear argument: %v", props)
				}
			}
		}
		s.mu.Lock()
		started := s.browser != nil
		s.mu.Unlock()
		if started {
			t.Fatal("the browser started before the first tool call")
		}
	})

	t.Run("navigate, type, click, read_text", func(t *testing.T) {
		var nav navigateOutput
		callOK(t, a, ToolNavigate, map[string]any{"url": ts.URL + "/redirect"}, &nav)
		if nav.URL != ts.URL+"/" || nav.Title != "Form page" || nav.Status != http.StatusOK {
			t.Fatalf("navigate = %+v, want the form page after the redirect, status 200", nav)
		}
		var typed typeOutput
		callOK(t, a, ToolType, map[string]any{"selector": "#name", "text": "Ada"}, &typed)
		if typed.Typed != 3 || typed.Selector != "#name" {
			t.Fatalf("type = %+v", typed)
		}
		callOK(t, a, ToolClick, map[string]any{"selector": "#go"}, nil)
		var rt readTextOutput
		res := callOK(t, a, ToolReadText, map[string]any{"selector": "#out"}, &rt)
		if rt.Text != "Hello, Ada!" || rt.Truncated || text(res) != "Hello, Ada!" {
			t.Fatalf("read_text = %+v, content %q; want the text the click's script wrote", rt, text(res))
		}

		// Without clear, typing appends; with clear it replaces.
		callOK(t, a, ToolType, map[string]any{"selector": "#name", "text": " L."}, nil)
		callOK(t, a, ToolClick, map[string]any{"selector": "#go"}, nil)
		callOK(t, a, ToolReadText, map[string]any{"selector": "#out"}, &rt)
		if rt.Text != "Hello, Ada L.!" {
			t.Fatalf("after appending: %q", rt.Text)
		}
		callOK(t, a, ToolType, map[string]any{"selector": "#name", "text": "Bob", "clear": true}, nil)
		callOK(t, a, ToolClick, map[string]any{"selector": "#go"}, nil)
		callOK(t, a, ToolReadText, map[string]any{"selector": "#out"}, &rt)
		if rt.Text != "Hello, Bob!" {
			t.Fatalf("after clear: %q", rt.Text)
		}

		callOK(t, a, ToolReadText, nil, &rt)
		if rt.Selector != "body" || !strings.Contains(rt.Text, "Greeter") || !strings.Contains(rt.Text, "Hello, Bob!") {
			t.Fatalf("read_text of the body = %+v", rt)
		}
		var cur pageOutput
		callOK(t, a, ToolCurrentPage, nil, &cur)
		if cur.URL != ts.URL+"/" || cur.Title != "Form page" {
			t.Fatalf("current_page = %+v", cur)
		}
	})

	t.Run("read_text is capped at 64 KiB and says so", func(t *testing.T) {
		callOK(t, a, ToolNavigate, map[string]any{"url": ts.URL + "/big"}, nil)
		var rt readTextOutput
		res := callOK(t, a, ToolReadText, map[string]any{"selector": "#big"}, &rt)
		if !rt.Truncated || len(rt.Text) != maxTextBytes || rt.Bytes != 96<<10 {
			t.Fatalf("read_text: truncated=%v len=%d bytes=%d; want true, %d, %d", rt.Truncated, len(rt.Text), rt.Bytes, maxTextBytes, 96<<10)
		}
		if !strings.Contains(text(res), "[truncated: showing the first 65536 of 98304 bytes]") {
			t.Fatalf("content does not say it is truncated: ...%s", text(res)[len(text(res))-80:])
		}
	})

	t.Run("screenshot returns PNG images", func(t *testing.T) {
		callOK(t, a, ToolNavigate, map[string]any{"url": ts.URL + "/"}, nil)
		decode := func(res *mcp.CallToolResult) (w, h int) {
			t.Helper()
			for _, c := range res.Content {
				if img, ok := c.(*mcp.ImageContent); ok {
					if img.MIMEType != "image/png" {
						t.Fatalf("MIME type %q", img.MIMEType)
					}
					m, err := png.Decode(bytes.NewReader(img.Data))
					if err != nil {
						t.Fatalf("not a PNG: %v", err)
					}
					return m.Bounds().Dx(), m.Bounds().Dy()
				}
			}
			t.Fatalf("no image content in %v", res.Content)
			return 0, 0
		}
		fw, fh := decode(callOK(t, a, ToolScreenshot, nil, nil))
		ew, eh := decode(callOK(t, a, ToolScreenshot, map[string]any{"selector": "#go"}, nil))
		if fw < 100 || fh < 100 || ew <= 0 || eh <= 0 || ew >= fw || eh >= fh {
			t.Fatalf("full page %dx%d, button %dx%d: the button must be a smaller, non-empty image", fw, fh, ew, eh)
		}
	})

	t.Run("refused and bad arguments", func(t *testing.T) {
		for _, u := range []string{"file:///etc/passwd", "chrome://version", "data:text/html,<b>x</b>", "javascript:alert(1)", "about:blank", "ftp://example.test/", "/relative"} {
			msg := callErr(t, a, ToolNavigate, map[string]any{"url": u})
			if !strings.Contains(msg, "URL_SCHEME_REFUSED") && !strings.Contains(msg, "INVALID_URL") {
				t.Errorf("navigate %q: %q does not name the refusal", u, msg)
			}
		}
		var cur pageOutput
		callOK(t, a, ToolCurrentPage, nil, &cur)
		if cur.URL != ts.URL+"/" {
			t.Fatalf("a refused URL moved the tab to %q", cur.URL)
		}
		tests := []struct {
			tool string
			args map[string]any
			want []string
		}{
			{ToolClick, map[string]any{"selector": "##bad"}, []string{"INVALID_SELECTOR", `"##bad"`}},
			{ToolClick, map[string]any{}, []string{"selector"}},
			{ToolType, map[string]any{"selector": "#upload", "text": "/etc/passwd"}, []string{"FILE_INPUT_REFUSED"}},
			{ToolType, map[string]any{"selector": "#name", "text": strings.Repeat("x", maxTypeRunes+1)}, []string{"TEXT_TOO_LONG"}},
			{ToolNavigate, map[string]any{"url": 42}, []string{"url"}},
		}
		for _, tt := range tests {
			msg := callErr(t, a, tt.tool, tt.args)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s(%v): %q does not contain %q", tt.tool, tt.args, msg, w)
				}
			}
		}
	})

	t.Run("a page that cannot load is a tool error", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		msg := callErr(t, a, ToolNavigate, map[string]any{"url": "http://" + addr + "/"})
		if !strings.Contains(msg, "NAVIGATION_FAILED") || !strings.Contains(msg, "ERR_CONNECTION_REFUSED") {
			t.Fatalf("navigate to a closed port: %q", msg)
		}
	})

	t.Run("sessions get separate tabs and cookies, over streamable HTTP too", func(t *testing.T) {
		hs := httptest.NewServer(s.Handler())
		defer hs.Close()
		b, err := mcp.NewClient(&mcp.Implementation{Name: "browsertools-http-test", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatalf("streamable HTTP connect: %v", err)
		}
		defer b.Close()

		callOK(t, a, ToolNavigate, map[string]any{"url": ts.URL + "/set-cookie?v=alice"}, nil)
		var nav navigateOutput
		callOK(t, b, ToolNavigate, map[string]any{"url": ts.URL + "/cookie"}, &nav)
		if nav.Title != "Cookie" {
			t.Fatalf("session b navigate = %+v", nav)
		}
		var rt readTextOutput
		callOK(t, b, ToolReadText, map[string]any{"selector": "#c"}, &rt)
		if rt.Text != "cookie=none" {
			t.Fatalf("session b sees %q: cookies leak between sessions", rt.Text)
		}
		var ca, cb pageOutput
		callOK(t, a, ToolCurrentPage, nil, &ca)
		callOK(t, b, ToolCurrentPage, nil, &cb)
		if ca.URL != ts.URL+"/set-cookie?v=alice" || cb.URL != ts.URL+"/cookie" {
			t.Fatalf("current pages a=%q b=%q: the sessions share a tab", ca.URL, cb.URL)
		}
		if n := s.openTabs(); n != 2 {
			t.Fatalf("open tabs = %d, want 2", n)
		}

		// MaxSessions is 2: a third session is refused until one ends.
		c := connect(t, s)
		msg := callErr(t, c, ToolCurrentPage, nil)
		if !strings.Contains(msg, "TOO_MANY_SESSIONS") {
			t.Fatalf("third session: %q", msg)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("closing the HTTP session: %v", err)
		}
		eventually(t, "the ended session's tab is closed", func() bool { return s.openTabs() == 1 })
		callOK(t, c, ToolCurrentPage, nil, &cb)
		if cb.URL != "about:blank" {
			t.Fatalf("a new session's tab shows %q, want about:blank", cb.URL)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the third session's tab is closed", func() bool { return s.openTabs() == 1 })
	})

	t.Run("an idle tab is closed and reopened fresh", func(t *testing.T) {
		s.mu.Lock()
		var tb *tab
		for _, x := range s.tabs {
			tb = x
		}
		s.mu.Unlock()
		if tb == nil {
			t.Fatal("session a has no tab")
		}
		tb.mu.Lock()
		tb.lastUsed = time.Now().Add(-2 * s.cfg.IdleTimeout)
		tb.mu.Unlock()
		s.closeIdle(tb)
		if s.openTabs() != 0 {
			t.Fatal("the idle tab is still open")
		}
		var cur pageOutput
		callOK(t, a, ToolCurrentPage, nil, &cur)
		if cur.URL != "about:blank" {
			t.Fatalf("after idling the session's tab shows %q, want a fresh about:blank", cur.URL)
		}
	})

	t.Run("a browser that died is started again", func(t *testing.T) {
		s.mu.Lock()
		old := s.browser
		s.mu.Unlock()
		if old == nil {
			t.Fatal("no browser is running")
		}
		if err := chromedp.FromContext(old.ctx).Browser.Process().Kill(); err != nil {
			t.Fatalf("killing chromium: %v", err)
		}
		eventually(t, "chromedp notices the dead browser", func() bool { return !old.alive() })
		var nav navigateOutput
		callOK(t, a, ToolNavigate, map[string]any{"url": ts.URL + "/"}, &nav)
		if nav.Title != "Form page" {
			t.Fatalf("navigate after the crash = %+v", nav)
		}
		s.mu.Lock()
		restarted := s.browser != nil && s.browser != old
		s.mu.Unlock()
		if !restarted {
			t.Fatal("the tool call did not run in a new browser")
		}
		if _, err := os.Stat(old.dir); !os.IsNotExist(err) {
			t.Fatalf("the dead browser's profile %s is still there (%v)", old.dir, err)
		}
	})

	t.Run("Close ends the browser, is idempotent, and later calls fail", func(t *testing.T) {
		s.mu.Lock()
		b := s.browser
		s.mu.Unlock()
		if b == nil {
			t.Fatal("no browser is running")
		}
		dir := b.dir
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("profile dir: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the profile dir %s is still there (%v)", dir, err)
		}
		msg := callErr(t, a, ToolCurrentPage, nil)
		if !strings.Contains(msg, "BROWSER_CLOSED") {
			t.Fatalf("call after Close: %q", msg)
		}
	})
}

func TestMissingChromiumIsAToolError(t *testing.T) {
	s, err := New(Config{ChromiumPath: "/nonexistent/chromium"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := callErr(t, connect(t, s), ToolNavigate, map[string]any{"url": "http://127.0.0.1:1/"})
	if !strings.Contains(msg, "BROWSER_UNAVAILABLE") || !strings.Contains(msg, "/nonexistent/chromium") {
		t.Fatalf("message %q does not say that the browser is missing", msg)
	}
	if s.openTabs() != 0 {
		t.Fatal("a failed open left a tab behind")
	}
}
