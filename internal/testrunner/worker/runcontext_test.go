package worker

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"cpesuite/internal/testrunner/wire"
)

func TestClipKeepsUTF8Whole(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"aé", 2, "a"}, // é is two bytes; half of it is dropped
		{"aé", 3, "aé"},
		{"日本", 4, "日"},
	}
	for _, tc := range tests {
		got := clip(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Fatalf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := capText("abcdef", 4); got != "abcd\n[truncated: 4 of 6 bytes shown]" {
		t.Fatalf("capText: %q", got)
	}
}

func TestRedactArgs(t *testing.T) {
	in := map[string]any{
		"url":     "http://acs/x",
		"headers": map[string]any{"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "json"},
		"nested":  []any{map[string]string{"password": "p", "user": "u"}},
		"apiKey":  "k2",
		"seconds": 3,
	}
	want := map[string]any{
		"url":     "http://acs/x",
		"headers": map[string]any{"Authorization": redactedValue, "X-Api-Key": redactedValue, "Accept": "json"},
		"nested":  []any{map[string]any{"password": redactedValue, "user": "u"}},
		"apiKey":  redactedValue,
		"seconds": 3,
	}
	if got := redactArgs(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("redactArgs = %#v", got)
	}
	if in["headers"].(map[string]any)["Authorization"] != "Bearer x" {
		t.Fatal("redactArgs changed its input")
	}
	if redactArgs(nil) != nil {
		t.Fatal("nil args became non-nil")
	}
}

func TestWatchersGetCoalescedDeltas(t *testing.T) {
	r := &run{id: "r-1", status: wire.StatusRunning, started: time.Now()}
	ch := r.subscribe()
	var cur cursor
	if d, final := r.full(&cur, time.Now()); d.Delta || final || d.Output != "" {
		t.Fatalf("first: %+v", d)
	}
	// A burst of changes never blocks and leaves one wake-up pending.
	for i := range 50 {
		r.appendOutput(fmt.Sprintf("line %d\n", i))
		r.appendLog(wire.ToolCall{Tool: "t"})
	}
	if len(ch) != 1 {
		t.Fatalf("%d wake-ups pending, want 1", len(ch))
	}
	<-ch
	d, _ := r.delta(&cur, time.Now())
	if !d.Delta || !strings.HasPrefix(d.Output, "line 0\n") || !strings.HasSuffix(d.Output, "line 49\n") || len(d.MCPLog) != 50 || d.MCPLog[49].Seq != 50 {
		t.Fatalf("coalesced delta: output %q, %d entries", d.Output, len(d.MCPLog))
	}
	r.appendOutput("tail\n")
	d, _ = r.delta(&cur, time.Now())
	if d.Output != "tail\n" || len(d.MCPLog) != 0 || d.MCPLog == nil {
		t.Fatalf("next delta: %q %v", d.Output, d.MCPLog)
	}
	<-ch
	r.unsubscribe(ch)
	r.appendOutput("more\n")
	if len(ch) != 0 {
		t.Fatal("an unsubscribed watcher was woken")
	}
}

func TestOutputIsBounded(t *testing.T) {
	r := &run{status: wire.StatusRunning}
	chunk := strings.Repeat("y", 64<<10)
	for range 40 {
		r.appendOutput(chunk)
	}
	if len(r.output) > maxOutputBytes+100 || !strings.HasSuffix(string(r.output), "[output truncated: the run printed more than 1 MiB]\n") {
		t.Fatalf("output of %d bytes, tail %q", len(r.output), r.output[len(r.output)-60:])
	}
	big := strings.Repeat("z", maxLogResult)
	for range 10 {
		r.appendLog(wire.ToolCall{Result: big})
	}
	if r.logBytes > maxLogBytes || !strings.Contains(r.mcpLog[9].Result, "not kept") || len(r.mcpLog) != 10 {
		t.Fatalf("tool log holds %d bytes", r.logBytes)
	}
}
