package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The streams under testdata were recorded with Go 1.26 from the module in
// testdata/rec:
//
//	cd testdata/rec && for p in pass fail skip buildfail panic timeout exitnoevents exitafter notests; do
//	  go test -json -count=1 -timeout 3s ./$p > ../$p.jsonl 2>&1; done
//	go test -json -count=1 -timeout 3s ./... > ../all.jsonl 2>&1
func TestSummarizeRecordedStreams(t *testing.T) {
	tests := []struct {
		stream  string
		require bool
		code    int
		summary string
		// lines that must appear in the output, in this order
		want []string
		// text that must not appear anywhere
		absent []string
	}{
		{
			stream: "pass", code: 0, summary: "4 passed, 0 failed, 0 skipped",
			want:   []string{"ok  \trec/pass\t"},
			absent: []string{"quiet log of a passing test", "=== RUN", "PASS\n", "FAIL"},
		},
		{
			stream: "fail", code: 1, summary: "2 passed, 3 failed, 0 skipped",
			want: []string{
				"    f_test.go:8: context before the failure",
				"    f_test.go:9: want 2, got 3",
				"--- FAIL: TestBad",
				"--- FAIL: TestSub (",
				"    f_test.go:14: sub failed",
				"--- FAIL: TestSub/broken",
				"FAIL\trec/fail\t",
				"2 passed, 3 failed, 0 skipped",
				"FAIL rec/fail TestBad",
				"FAIL rec/fail TestSub/broken",
				"FAIL rec/fail TestSub",
			},
			absent: []string{"TestGood", "TestSub/ok", "=== RUN"},
		},
		{
			stream: "skip", code: 0, summary: "3 passed, 0 failed, 2 skipped",
			want: []string{
				"ok  \trec/skip\t",
				"3 passed, 0 failed, 2 skipped",
				"SKIP rec/skip TestService: s_test.go:7: SKIPPED, NOT TESTED: PostgreSQL is not reachable at 127.0.0.1:5432",
				"SKIP rec/skip TestDialects/mariadb: s_test.go:14: the store supports SQLite and PostgreSQL",
			},
			absent: []string{"probing", "CPESUITE_REQUIRE_SERVICES"},
		},
		{
			stream: "skip", require: true, code: 1, summary: "3 passed, 0 failed, 2 skipped",
			want: []string{
				"SKIP rec/skip TestService: s_test.go:7: SKIPPED, NOT TESTED",
				"SKIP rec/skip TestDialects/mariadb: ",
				"CPESUITE_REQUIRE_SERVICES=1: 2 skipped test(s) above make this run fail",
			},
		},
		{
			stream: "pass", require: true, code: 0, summary: "4 passed, 0 failed, 0 skipped",
			absent: []string{"CPESUITE_REQUIRE_SERVICES"},
		},
		{
			stream: "buildfail", code: 1, summary: "0 passed, 1 failed, 0 skipped",
			want: []string{
				"# rec/buildfail [rec/buildfail.test]",
				`buildfail/b_test.go:5:40: cannot use "s"`,
				"FAIL\trec/buildfail [build failed]",
				"FAIL rec/buildfail [build failed]",
			},
		},
		{
			stream: "panic", code: 1, summary: "1 passed, 1 failed, 0 skipped",
			want: []string{
				"--- FAIL: TestPanics",
				"panic: assignment to entry in nil map",
				"/tmp/tsrec/panic/p_test.go:9",
				"FAIL\trec/panic\t",
				"FAIL rec/panic TestPanics",
			},
			absent: []string{"TestNeverRuns", "TestFine"},
		},
		{
			stream: "timeout", code: 1, summary: "1 passed, 1 failed, 0 skipped",
			want: []string{
				"    t_test.go:11: waiting forever",
				"panic: test timed out after 3s",
				"TestHangs (3s)",
				"FAIL\trec/timeout\t",
				"FAIL rec/timeout TestHangs [did not finish]",
			},
		},
		{
			stream: "exitnoevents", code: 1, summary: "0 passed, 1 failed, 0 skipped",
			want: []string{
				"setup failed: no database",
				"FAIL\trec/exitnoevents\t",
				"FAIL rec/exitnoevents [exited without test results]",
			},
		},
		{
			stream: "exitafter", code: 1, summary: "1 passed, 1 failed, 0 skipped",
			want: []string{
				"leaked goroutines found after the tests",
				"FAIL rec/exitafter [failed outside any test]",
			},
		},
		{
			stream: "notests", code: 0, summary: "0 passed, 0 failed, 0 skipped",
			want: []string{"?   \trec/notests\t[no test files]"},
		},
		{
			stream: "all", code: 1, summary: "12 passed, 8 failed, 2 skipped",
			want: []string{
				"FAIL rec/buildfail [build failed]",
				"FAIL rec/exitafter [failed outside any test]",
				"FAIL rec/exitnoevents [exited without test results]",
				"FAIL rec/fail TestBad",
				"FAIL rec/panic TestPanics",
				"FAIL rec/timeout TestHangs [did not finish]",
				"SKIP rec/skip TestService: ",
			},
		},
	}
	for _, tc := range tests {
		name := tc.stream
		if tc.require {
			name += "/require-services"
		}
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tc.stream+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			out, code := summarize(t, string(in), tc.require)
			check(t, out, code, tc.code, tc.summary, tc.want, tc.absent)
		})
	}
}

// Streams that go test does not record on demand: a run cut short, the go
// command's own messages, oversized output and empty input.
func TestSummarizeEdgeStreams(t *testing.T) {
	huge := strings.Repeat("x", 3*maxLine)
	tests := []struct {
		name    string
		in      string
		code    int
		summary string
		want    []string
		absent  []string
	}{
		{
			name: "stream cut while a test runs",
			in: `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: still working\n"}
`,
			code: 1, summary: "1 passed, 1 failed, 0 skipped",
			want: []string{
				"    b_test.go:3: still working",
				"FAIL\tp\t[no result: the stream ended before the package finished]",
				"FAIL p TestB [did not finish]",
			},
		},
		{
			name: "stream cut before any test",
			in:   `{"Action":"start","Package":"p"}` + "\n",
			code: 1, summary: "0 passed, 1 failed, 0 skipped",
			want: []string{"FAIL p [the stream ended before the package finished]"},
		},
		{
			name: "go command messages pass through",
			in: "go: downloading example.com/m v1.0.0\n" +
				`{"Action":"start","Package":"p"}` + "\n" +
				`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"pass","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}` + "\n" +
				`{"Action":"pass","Package":"p"}` + "\n",
			code: 0, summary: "1 passed, 0 failed, 0 skipped",
			want: []string{"go: downloading example.com/m v1.0.0", "ok  \tp\t0.1s"},
		},
		{
			name: "no events at all",
			in:   "go: cannot find main module\n",
			code: 1, summary: "0 passed, 0 failed, 0 skipped",
			want: []string{"go: cannot find main module", "no go test -json events in the input"},
		},
		{
			name: "empty input",
			in:   "",
			code: 1, summary: "0 passed, 0 failed, 0 skipped",
		},
		{
			name: "oversized line of a failed test is cut",
			in: `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"` + huge + `\n"}` + "\n" +
				`{"Action":"fail","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"fail","Package":"p"}` + "\n",
			code: 1, summary: "0 passed, 1 failed, 0 skipped",
			want:   []string{"bytes cut]", "FAIL p TestA"},
			absent: []string{huge},
		},
		{
			name: "skip without a message",
			in: `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}` + "\n" +
				`{"Action":"skip","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"pass","Package":"p"}` + "\n",
			code: 0, summary: "0 passed, 0 failed, 1 skipped",
			want: []string{"SKIP p TestA: (no reason given)"},
		},
		{
			name: "multi-line skip message on one line",
			in: `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:5: earlier log\n"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: Chromium missing\n"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"        install chromium\n"}` + "\n" +
				`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}` + "\n" +
				`{"Action":"skip","Package":"p","Test":"TestA"}` + "\n" +
				`{"Action":"pass","Package":"p"}` + "\n",
			code: 0, summary: "0 passed, 0 failed, 1 skipped",
			want:   []string{"SKIP p TestA: a_test.go:9: Chromium missing install chromium"},
			absent: []string{"earlier log"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := summarize(t, tc.in, false)
			check(t, out, code, tc.code, tc.summary, tc.want, tc.absent)
		})
	}
}

func summarize(t *testing.T, in string, require bool) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code, err := newSummarizer(&out, require).run(strings.NewReader(in))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.String(), code
}

func check(t *testing.T, out string, code, wantCode int, summary string, want, absent []string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit status %d, want %d\n%s", code, wantCode, out)
	}
	// The summary line must stand alone so that CI tools can match it.
	found := false
	for _, l := range strings.Split(out, "\n") {
		if l == summary {
			found = true
		}
	}
	if !found {
		t.Errorf("no line %q in the output:\n%s", summary, out)
	}
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("missing (or out of order) %q in the output:\n%s", w, out)
			return
		}
		rest = rest[i+len(w):]
	}
	for _, a := range absent {
		if strings.Contains(out, a) {
			t.Errorf("output shows %q, which it should not:\n%s", a, out)
		}
	}
}
