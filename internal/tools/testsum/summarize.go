package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent plus the
// build events of Go 1.24 and later).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

const (
	// maxKeptOutput bounds what is kept of one test's or package's output
	// while it runs: a chatty test must not exhaust memory, and the end of
	// its output is where the failure is.
	maxKeptOutput = 1 << 20
	// maxLine bounds one printed output line; a test that dumps a megabyte
	// body on one line still gets its failure shown, without the flood.
	maxLine = 16 << 10
	// maxReason bounds a skip reason on its summary line.
	maxReason = 400
)

type testState int

const (
	running testState = iota
	passed
	failed
	skipped
)

type test struct {
	name  string
	order int
	ran   bool
	state testState
	out   output
}

type pkg struct {
	name     string
	tests    map[string]*test
	order    int
	out      output
	failures int // failed tests in this package
}

// output keeps the tail of a stream of lines within maxKeptOutput bytes.
type output struct {
	lines   []string
	size    int
	dropped int
}

func (o *output) add(s string) {
	o.lines = append(o.lines, s)
	o.size += len(s)
	for o.size > maxKeptOutput && len(o.lines) > 1 {
		o.size -= len(o.lines[0])
		o.dropped += len(o.lines[0])
		o.lines = o.lines[1:]
	}
}

type failure struct {
	pkg, test, why string
}

type skip struct {
	pkg, test, reason string
}

type summarizer struct {
	w               io.Writer
	requireServices bool

	pkgs     map[string]*pkg
	pkgOrder int
	events   int
	passed   int
	failures []failure
	skips    []skip
}

func newSummarizer(w io.Writer, requireServices bool) *summarizer {
	return &summarizer{w: w, requireServices: requireServices, pkgs: map[string]*pkg{}}
}

// run consumes the whole stream and prints the summary; it returns the exit
// status the run deserves.
func (s *summarizer) run(r io.Reader) (int, error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.line(line)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 2, fmt.Errorf("reading the go test stream: %w", err)
		}
	}
	return s.finish(), nil
}

func (s *summarizer) line(line []byte) {
	trimmed := bytes.TrimSpace(line)
	var ev event
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &ev) != nil || ev.Action == "" {
		// Whatever the go command wrote outside the JSON stream (module
		// downloads, errors before any package ran) is shown as it came.
		s.print(string(line))
		return
	}
	s.events++
	switch ev.Action {
	case "build-output":
		s.print(ev.Output)
		return
	case "build-fail":
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.pkg(ev.Package)
	if ev.Test == "" {
		s.packageEvent(p, ev)
		return
	}
	s.testEvent(p, ev)
}

func (s *summarizer) pkg(name string) *pkg {
	p := s.pkgs[name]
	if p == nil {
		s.pkgOrder++
		p = &pkg{name: name, tests: map[string]*test{}, order: s.pkgOrder}
		s.pkgs[name] = p
	}
	return p
}

func (s *summarizer) testEvent(p *pkg, ev event) {
	t := p.tests[ev.Test]
	switch ev.Action {
	case "run":
		// A new record each run: -count=N runs a test N times.
		t = &test{name: ev.Test, order: len(p.tests), ran: true}
		p.tests[ev.Test] = t
		return
	case "output":
		if t == nil {
			t = &test{name: ev.Test, order: len(p.tests), state: running}
			p.tests[ev.Test] = t
		}
		if t.state == running || t.state == failed {
			t.out.add(ev.Output)
		}
		return
	case "pass", "fail", "skip":
	default: // pause, cont, bench, start: nothing to count
		return
	}
	if t == nil {
		t = &test{name: ev.Test, order: len(p.tests)}
		p.tests[ev.Test] = t
	}
	switch ev.Action {
	case "pass":
		s.passed++
		t.state = passed
		t.out = output{}
	case "skip":
		t.state = skipped
		s.skips = append(s.skips, skip{pkg: p.name, test: t.name, reason: skipReason(t.out.lines)})
		t.out = output{}
	case "fail":
		t.state = failed
		p.failures++
		s.failures = append(s.failures, failure{pkg: p.name, test: t.name})
		if !strings.Contains(t.name, "/") {
			s.printFailed(p, t.name)
		}
	}
}

// printFailed shows a failed top-level test and its failed subtests in the
// order they ran, once the top-level test is over, so that the output reads
// as it would under plain go test.
func (s *summarizer) printFailed(p *pkg, top string) {
	var shown []*test
	for name, t := range p.tests {
		if t.state == failed && (name == top || strings.HasPrefix(name, top+"/")) {
			shown = append(shown, t)
		}
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].order < shown[j].order })
	for _, t := range shown {
		s.printOutput(t.out, false)
		delete(p.tests, t.name)
	}
}

func (s *summarizer) packageEvent(p *pkg, ev event) {
	switch ev.Action {
	case "output":
		p.out.add(ev.Output)
		return
	case "pass", "skip":
		s.printOutput(p.out, true)
	case "fail":
		why := ""
		if ev.FailedBuild != "" {
			why = "build failed"
		}
		s.packageFailed(p, why)
	default: // start
		return
	}
	delete(s.pkgs, p.name)
}

// packageFailed shows why a package failed: tests still running when the
// binary died (a timeout or a panic in a goroutine names them here), failed
// subtests whose parent never finished, then the package's own output.
//
// why names the package's failure when no test failed; empty means it is
// inferred from what the package printed.
func (s *summarizer) packageFailed(p *pkg, why string) {
	var left []*test
	for _, t := range p.tests {
		if t.state == failed || (t.state == running && t.ran) {
			left = append(left, t)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].order < left[j].order })
	for _, t := range left {
		if t.state == running {
			t.state = failed
			p.failures++
			s.failures = append(s.failures, failure{pkg: p.name, test: t.name, why: "did not finish"})
		}
		s.printOutput(t.out, false)
	}
	s.printOutput(p.out, false)
	if p.failures > 0 {
		return
	}
	switch {
	case why != "":
	case len(p.tests) == 0 && !hasTestResults(p):
		why = "exited without test results"
	default:
		why = "failed outside any test"
	}
	s.failures = append(s.failures, failure{pkg: p.name, why: why})
}

func hasTestResults(p *pkg) bool {
	for _, l := range p.out.lines {
		if strings.HasPrefix(l, "PASS") {
			return true
		}
	}
	return false
}

// printOutput writes kept output lines without the framing go test -json
// adds (=== RUN and friends, and the PASS line of a passing package, which
// plain go test does not show).
func (s *summarizer) printOutput(o output, passing bool) {
	if o.dropped > 0 {
		s.print(fmt.Sprintf("[... %d bytes of earlier output not kept ...]\n", o.dropped))
	}
	for _, l := range o.lines {
		if isFraming(l) || (passing && l == "PASS\n") {
			continue
		}
		s.print(l)
	}
}

func isFraming(l string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func (s *summarizer) print(l string) {
	if len(l) > maxLine {
		l = fmt.Sprintf("%s ... [%d bytes cut]\n", l[:maxLine], len(l)-maxLine)
	}
	io.WriteString(s.w, l)
}

// skipReason is the last message the test logged: t.Skip's own message,
// with its continuation lines folded onto one line.
func skipReason(lines []string) string {
	var block []string
	for _, l := range lines {
		if isFraming(l) || strings.HasPrefix(strings.TrimSpace(l), "--- SKIP") {
			continue
		}
		text := strings.TrimRight(l, "\r\n")
		if strings.TrimSpace(text) == "" {
			continue
		}
		// A message starts at the test's own indentation; deeper lines
		// continue the message before them.
		if !strings.HasPrefix(text, "        ") || block == nil {
			block = block[:0]
		}
		block = append(block, strings.TrimSpace(text))
	}
	if len(block) == 0 {
		return "(no reason given)"
	}
	r := strings.Join(block, " ")
	if len(r) > maxReason {
		r = r[:maxReason] + " ..."
	}
	return r
}

// finish reports tests left without a result when the stream ended, prints
// the summary and returns the exit status.
func (s *summarizer) finish() int {
	names := make([]string, 0, len(s.pkgs))
	for name := range s.pkgs {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return s.pkgs[names[i]].order < s.pkgs[names[j]].order })
	for _, name := range names {
		p := s.pkgs[name]
		s.packageFailed(p, "the stream ended before the package finished")
		s.print(fmt.Sprintf("FAIL\t%s\t[no result: the stream ended before the package finished]\n", name))
	}

	s.print("\n")
	s.print(fmt.Sprintf("%d passed, %d failed, %d skipped\n", s.passed, len(s.failures), len(s.skips)))
	for _, f := range s.failures {
		switch {
		case f.test == "":
			s.print(fmt.Sprintf("FAIL %s [%s]\n", f.pkg, f.why))
		case f.why != "":
			s.print(fmt.Sprintf("FAIL %s %s [%s]\n", f.pkg, f.test, f.why))
		default:
			s.print(fmt.Sprintf("FAIL %s %s\n", f.pkg, f.test))
		}
	}
	for _, sk := range s.skips {
		s.print(fmt.Sprintf("SKIP %s %s: %s\n", sk.pkg, sk.test, sk.reason))
	}

	code := 0
	if len(s.failures) > 0 {
		code = 1
	}
	if s.events == 0 {
		s.print("testsum: no go test -json events in the input: nothing was tested\n")
		code = 1
	}
	if s.requireServices && len(s.skips) > 0 {
		s.print(fmt.Sprintf("CPESUITE_REQUIRE_SERVICES=1: %d skipped test(s) above make this run fail; every test must run in CI\n", len(s.skips)))
		code = 1
	}
	return code
}
