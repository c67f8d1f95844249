// Package rule runs a device's JavaScript parameter rule: the body of
// function onParamUpdated(param, device, ctx), called whenever a parameter
// changes. The rule may return a new value for that parameter and, through
// ctx, set other parameters and freeze or unfreeze them. The package only
// computes what the rule asked for (a Result); the caller applies it.
//
// Rules run on goja under a time budget per call, so a runaway rule is
// interrupted and reported instead of hanging the device.
package rule

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// DefaultBudget is the time budget per call used when Compile is given a
// budget that is not positive.
const DefaultBudget = time.Second

// MaxCodeSize bounds the rule's source, in bytes: rules are small scripts
// and every pooled runtime holds a compiled copy.
const MaxCodeSize = 256 << 10

// Per-call caps. They keep a rule that loops within its time budget from
// handing the caller an unbounded Result (each entry costs memory and,
// once applied, a parameter write).
const (
	MaxLogLines    = 50
	MaxLogLineLen  = 1000 // characters (runes) per log line
	MaxActions     = 10000
	maxMessageLen  = 1000 // characters of an exception message we report
	maxCallStack   = 1000 // JS call depth, so deep recursion fails fast instead of eating memory
	funcName       = "onParamUpdated"
	fileName       = "rule.js"
	wrapperHeader  = "function " + funcName + "(param, device, ctx) {\n"
	wrapperTrailer = "\n}"
)

// ErrTimeout is wrapped by the error Run returns when a call exceeded the
// budget and was interrupted.
var ErrTimeout = errors.New("rule exceeded its time budget")

// CompileError is a rule that does not compile. Line and Column are 1-based
// and refer to the user's code (not the wrapper around it); Column counts
// bytes, as goja does. Line is 0 when the error has no position.
type CompileError struct {
	Line, Column int
	Msg          string
}

func (e *CompileError) Error() string {
	if e.Line <= 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d:%d %s", e.Line, e.Column, e.Msg)
}

// Engine is a compiled rule. It is safe for concurrent use (it keeps a pool
// of goja runtimes, since one goja.Runtime is not goroutine-safe).
type Engine struct {
	code   string
	budget time.Duration
	prg    *goja.Program // nil for an empty rule
	// idle holds runtimes ready for reuse. A buffered channel rather than
	// a sync.Pool: a runtime costs a few hundred microseconds to build, and
	// sync.Pool would drop them at every GC.
	idle chan *worker
}

// Compile compiles code, the BODY of
// `function onParamUpdated(param, device, ctx)`. Empty or whitespace-only
// code compiles to a rule that does nothing (Engine.Empty() true; Run is
// then free). Errors are *CompileError. budget is the time one Run may
// take; a budget that is not positive means DefaultBudget.
func Compile(code string, budget time.Duration) (*Engine, error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	e := &Engine{code: code, budget: budget}
	if strings.TrimSpace(code) == "" {
		return e, nil
	}
	if len(code) > MaxCodeSize {
		return nil, &CompileError{Msg: fmt.Sprintf("code is %d bytes long; the limit is %d", len(code), MaxCodeSize)}
	}
	if !utf8.ValidString(code) {
		// goja's parser expects UTF-8; report it rather than letting the
		// parser produce a confusing message about some odd token.
		return nil, &CompileError{Msg: "code is not valid UTF-8"}
	}
	prg, err := compileBody(code)
	if err != nil {
		return nil, err
	}
	e.prg = prg
	n := max(runtime.GOMAXPROCS(0), 8)
	e.idle = make(chan *worker, n)
	// Build one runtime now: it proves the program runs (declaring the
	// function) and spares the first Run the setup cost.
	w, err := e.newWorker()
	if err != nil {
		return nil, &CompileError{Msg: err.Error()}
	}
	e.idle <- w
	return e, nil
}

// compileBody wraps code in the function declaration, checks that the
// result is exactly that declaration and compiles it.
func compileBody(code string) (prg *goja.Program, err error) {
	defer func() {
		// goja's compiler reports syntax errors by panicking and recovers
		// only its own error type; anything else (from the parser or the
		// compiler) must not take the caller, an HTTP handler, down.
		if r := recover(); r != nil {
			prg, err = nil, &CompileError{Msg: fmt.Sprintf("internal compiler error: %v", r)}
		}
	}()
	src := wrapperHeader + code + wrapperTrailer
	// Positions in src are translated back to the user's code with the
	// same line counting goja uses (it knows \r, \u2028 and \u2029).
	f := file.NewFile(fileName, src, 1)
	userEnd := f.Position(len(wrapperHeader) + len(code))
	toUser := func(p file.Position, msg string) *CompileError {
		line, col := p.Line-1, p.Column
		switch {
		case line < 1:
			line, col = 1, 1
		case line > userEnd.Line-1 || (line == userEnd.Line-1 && col > userEnd.Column):
			// Errors found in the wrapper's closing line ("Unexpected
			// end of input" for an unclosed brace) belong at the end
			// of the user's code.
			line, col = userEnd.Line-1, userEnd.Column
		}
		return &CompileError{Line: line, Column: col, Msg: msg}
	}

	// Source maps are disabled: a "//# sourceMappingURL=" comment in a
	// rule must not make the parser read files.
	program, perr := parser.ParseFile(nil, fileName, src, 0, parser.WithDisableSourceMaps)
	if perr != nil {
		var list parser.ErrorList
		if errors.As(perr, &list) && len(list) > 0 {
			return nil, toUser(list[0].Position, list[0].Message)
		}
		return nil, &CompileError{Msg: perr.Error()}
	}
	if err := checkShape(program, src); err != nil {
		return nil, toUser(program.File.Position(err.offset), err.msg)
	}

	prg, cerr := goja.CompileAST(program, false)
	if cerr != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(cerr, &se) && se.File != nil {
			return nil, toUser(se.File.Position(se.Offset), se.Message)
		}
		return nil, &CompileError{Msg: cerr.Error()}
	}
	return prg, nil
}

type shapeError struct {
	offset int
	msg    string
}

// checkShape rejects a body that breaks out of the wrapper, e.g.
// "} foo(); function x() {": the program must be exactly the one
// declaration of onParamUpdated, closed by the wrapper's own brace.
// Otherwise top-level code would run once per runtime outside the budget
// and the function called might not be the one the user sees.
func checkShape(program *ast.Program, src string) *shapeError {
	const msg = "code must be a function body: it closes the onParamUpdated function early"
	if len(program.Body) == 0 {
		return &shapeError{0, msg}
	}
	decl, ok := program.Body[0].(*ast.FunctionDeclaration)
	if !ok || decl.Function == nil || decl.Function.Name == nil ||
		decl.Function.Name.Name != funcName || decl.Function.Body == nil {
		return &shapeError{0, msg}
	}
	// Idx is 1-based (the file's base is 1).
	closing := int(decl.Function.Body.RightBrace) - 1
	if len(program.Body) != 1 || closing != len(src)-1 {
		return &shapeError{max(closing, 0), msg}
	}
	return nil
}

// Code returns the rule's source as given to Compile.
func (e *Engine) Code() string { return e.code }

// Empty reports whether the rule does nothing (its code is blank).
func (e *Engine) Empty() bool { return e.prg == nil }

// Budget returns the time budget of one Run.
func (e *Engine) Budget() time.Duration { return e.budget }
