package worker

import (
	"reflect"
	"testing"
	"unicode/utf8"
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
