package rule

import (
	"errors"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// FuzzCompile checks that Compile never panics, reports only
// *CompileError with a position inside the user's code, and agrees with
// goja on what compiles (apart from our own limits and the wrapper check).
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"",
		"return param.value;",
		"ctx.set('a', param.number + 1);\nreturn 1;",
		"} foo(); function x() {",
		"if (x) {\n  y();",
		"let a = 1;\nlet a = 2;",
		"return 1; /*",
		"return `a${1}b`;",
		"'use strict';\nwith (a) {}",
		"return 1; //# sourceMappingURL=/etc/passwd",
		"\u2028return 1;\r\n)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		e, err := Compile(code, tinyBudget)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) error %v is %T, want *CompileError", code, err, err)
			}
			if ce.Line < 0 || (ce.Line > 0 && ce.Column < 1) {
				t.Fatalf("Compile(%q): bad position in %v", code, ce)
			}
			// goja counts \n, \r, \r\n, \u2028 and \u2029 as line
			// breaks; counting each rune separately over-estimates, which
			// is fine for an upper bound.
			lines := 1 + strings.Count(code, "\n") + strings.Count(code, "\r") +
				strings.Count(code, "\u2028") + strings.Count(code, "\u2029")
			if ce.Line > lines {
				t.Fatalf("Compile(%q): line %d beyond the code's %d lines (%v)", code, ce.Line, lines, ce)
			}
			return
		}
		if e.Code() != code {
			t.Fatalf("Code() = %q, want %q", e.Code(), code)
		}
		if e.Empty() != (strings.TrimSpace(code) == "") {
			t.Fatalf("Compile(%q): Empty() = %v", code, e.Empty())
		}
		if e.Empty() {
			return
		}
		// What we accept, goja accepts as the wrapped program.
		if _, gerr := goja.Compile(fileName, wrapperHeader+code+wrapperTrailer, false); gerr != nil {
			t.Fatalf("Compile(%q) succeeded but goja rejects the wrapped source: %v", code, gerr)
		}
	})
}
