package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/platform/config"
	"cpesuite/internal/platform/httpx/openapitest"
	"cpesuite/internal/testutil"
)

// The README is what a new user trusts first, so these tests hold it to the
// code: every target, port, flag, environment variable and path it names
// exists, each target's health, metrics and API documents answer where its
// table says, and every command of the Quick start gives the answer its
// comment shows when run against `cpesuite up`.

func readREADME(t *testing.T) string {
	t.Helper()
	path := "../../README.md"
	// Lets a reviewer hold an older README to today's code.
	if p := os.Getenv("CPESUITE_TEST_README"); p != "" {
		path = p
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fenced = regexp.MustCompile("(?s)```.*?```")

// prose is the README without its fenced blocks, whose backticks would
// otherwise pair with those of code spans.
func prose(readme string) string { return fenced.ReplaceAllString(readme, "") }

// readmeSection returns the text from the heading to the next heading of the
// same level.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	rest := readme[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// tableRows returns the cells of the markdown table that starts with header.
func tableRows(t *testing.T, text, header string) [][]string {
	t.Helper()
	i := strings.Index(text, header)
	if i < 0 {
		t.Fatalf("README has no table %q", header)
	}
	var rows [][]string
	for n, line := range strings.Split(text[i:], "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if n < 2 { // header and separator
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		rows = append(rows, cells)
	}
	return rows
}

var backticked = regexp.MustCompile("`([^`]+)`")

func codeSpans(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// registeredVars is what `cpesuite help up` documents, hidden ones included.
func registeredVars() []config.Var {
	var cfg Config
	set := config.NewSet("readme", func(string) (string, bool) { return "", false })
	cfg.RegisterFlags(set, nil)
	var only []string
	set.List(&only, "only", "", "", "")
	return set.Vars()
}

// codeLiterals returns the string literals of every non-test Go file of the
// module: a name the README gives that the code never spells does not exist.
func codeLiterals(t *testing.T) map[string]bool {
	t.Helper()
	var dirs []string
	for _, root := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
				dirs = append(dirs, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return openapitest.StringLiterals(t, dirs...)
}

// listenerFor picks the listener a table row describes: the ACS has two.
func listenerFor(target, qualifier string) (Listener, bool) {
	key := "addr"
	if target == ACS && strings.Contains(qualifier, "management API") {
		key = "api-addr"
	}
	for _, l := range Listeners {
		if l.Target == target && l.Key == key {
			return l, true
		}
	}
	return Listener{}, false
}

func TestREADMETargetsAndPorts(t *testing.T) {
	readme := readREADME(t)
	built := newModules(nil, nil)
	rows := tableRows(t, readmeSection(t, readme, "## Targets and ports"), "| target | default address | base path | status |")
	seen := map[string]bool{}
	for _, row := range rows {
		spans := codeSpans(row[0])
		if len(spans) == 0 || len(row) < 4 {
			t.Errorf("row without a target: %v", row)
			continue
		}
		target := spans[0]
		l, ok := listenerFor(target, row[0])
		if !ok {
			t.Errorf("README names target %q, which has no listener", target)
			continue
		}
		seen[target] = true
		if addr := codeSpans(row[1]); len(addr) == 0 || addr[0] != l.Default {
			t.Errorf("README gives %s the address %v, the code %s", l.Flag(), addr, l.Default)
		}
		if planned := strings.HasPrefix(row[3], "planned"); planned == built.IsTarget(target) {
			t.Errorf("README says %s planned=%v, but built=%v", target, planned, built.IsTarget(target))
		}
	}
	for _, name := range built.Targets() {
		if !seen[name] {
			t.Errorf("target %s is built but missing from the README's table", name)
		}
	}
}

func TestREADMENamesExist(t *testing.T) {
	readme := readREADME(t)
	vars := registeredVars()
	lits := codeLiterals(t)
	envs, flags := map[string]bool{}, map[string]bool{}
	ports := map[string]bool{}
	portRE := regexp.MustCompile(`:(\d{4,5})\b`)
	for _, v := range vars {
		envs[v.Env], flags[v.Flag] = true, true
		for _, m := range portRE.FindAllStringSubmatch(v.Default, -1) {
			ports[m[1]] = true
		}
	}
	for lit := range lits {
		for _, m := range portRE.FindAllStringSubmatch(lit, -1) {
			ports[m[1]] = true
		}
	}

	envRE := regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	flagRE := regexp.MustCompile(`^--([a-z][a-z0-9.*-]*)$`)
	var nEnv, nFlag int
	for _, span := range codeSpans(prose(readme)) {
		switch {
		case envRE.MatchString(span):
			nEnv++
			if !envs[span] && !lits[span] {
				t.Errorf("README names environment variable %s, which no flag reads and no code spells", span)
			}
		case flagRE.MatchString(span):
			nFlag++
			name := flagRE.FindStringSubmatch(span)[1]
			if prefix, wild := strings.CutSuffix(name, "*"); wild {
				if !slices.ContainsFunc(vars, func(v config.Var) bool { return strings.HasPrefix(v.Flag, prefix) }) {
					t.Errorf("README names flags %s, and none exists", span)
				}
			} else if !flags[name] {
				t.Errorf("README names flag %s, which `cpesuite help up` does not know", span)
			}
		}
	}
	if nEnv < 50 || nFlag < 40 {
		t.Errorf("found only %d variables and %d flags: is the README parsed?", nEnv, nFlag)
	}
	// Addresses only: an example assignment (VAR=host:port) names a port
	// of the reader's choosing.
	addrRE := regexp.MustCompile("(?:^|[\\s(`'/,])(?:localhost|127\\.0\\.0\\.1)?:(\\d{4,5})\\b")
	for _, m := range addrRE.FindAllStringSubmatch(readme, -1) {
		if !ports[m[1]] {
			t.Errorf("README names port %s, which no default and no code has", m[1])
		}
	}
}

// readmeStack is `cpesuite up` started in-process on free ports, with the
// data directory at <dir>/data so that the README's `data/...` paths work
// from dir.
type readmeStack struct {
	dir   string
	addrs map[string]string // Listener.Flag() -> address
	token string
}

func startREADMEStack(t *testing.T) *readmeStack {
	t.Helper()
	built := newModules(nil, nil)
	s := &readmeStack{dir: t.TempDir(), addrs: map[string]string{}}
	env := map[string]string{
		"CPESUITE_DATA_DIR":                 filepath.Join(s.dir, "data"),
		"CPESUITE_LOG_FORMAT":               "json",
		"CPESUITE_IOT_EMULATOR_BROKER_ADDR": testutil.FreeAddr(t),
	}
	for _, l := range Listeners {
		if built.IsTarget(l.Target) {
			s.addrs[l.Flag()] = testutil.FreeAddr(t)
			env[l.Env()] = s.addrs[l.Flag()]
		}
	}
	// The defaults name the standard ports; here the emulator's devices and
	// the ACS's diagnostics must reach the ports of this stack.
	env["DEFAULT_ACS_URL"] = "http://" + s.addrs["acs.addr"] + "/"
	env["CPESUITE_ACS_SPEEDTEST_URL"] = "http://" + s.addrs["speedtest.addr"]

	ctx, cancel := context.WithCancel(context.Background())
	var logs testutil.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- CLI(ctx, []string{"up"}, io.Discard, &logs, envMap(env)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(platformDeadline):
			t.Error("cpesuite up did not stop")
		}
	})
	testutil.Eventually(t, platformDeadline, "cpesuite up ready", func() bool {
		select {
		case code := <-done:
			t.Fatalf("cpesuite up exited with %d:\n%s", code, logs.String())
		default:
		}
		return strings.Contains(logs.String(), `"all modules ready"`)
	})

	pw, err := os.ReadFile(filepath.Join(s.dir, "data", AdminPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"username":"admin","password":%q}`, strings.TrimSpace(string(pw)))
	resp, err := http.Post("http://"+s.addrs["gateway.addr"]+"/api/auth/login", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var login struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&login); err != nil || login.Token == "" {
		t.Fatalf("gateway login: %d %v", resp.StatusCode, err)
	}
	s.token = login.Token
	return s
}

type probeResult struct {
	status int
	ctype  string
	body   string
}

// get fetches a path, reading at most 64 KiB: enough to judge the answer,
// and a bare /download must not stream its default 10 MB into the test.
func (s *readmeStack) get(t *testing.T, addr, path string, withToken bool) probeResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	client := &http.Client{Timeout: testutil.MinDeadline}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return probeResult{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// routeMiss tells a request no route matched from a 404 for a missing
// object: the plain ServeMux text, or a service's route-miss body.
func (p probeResult) routeMiss() bool {
	if p.status != http.StatusNotFound {
		return false
	}
	for _, marker := range []string{"404 page not found", "no such resource", "NO_ROUTE", "no route for"} {
		if strings.Contains(p.body, marker) {
			return true
		}
	}
	return false
}

func (s *readmeStack) isGateway(addr string) bool { return addr == s.addrs["gateway.addr"] }

// TestREADMEServesWhatItPromises runs `cpesuite up` and checks the README's
// table of health, metrics and API documents, and that every path it names
// is served by some target (issue 19: the README promised endpoints that
// answered 404).
func TestREADMEServesWhatItPromises(t *testing.T) {
	readme := readREADME(t)
	s := startREADMEStack(t)
	section := readmeSection(t, readme, "## Targets and ports")

	t.Run("health metrics and documents", func(t *testing.T) {
		rows := tableRows(t, section, "| target | health | metrics | OpenAPI | Swagger UI |")
		if len(rows) < len(newModules(nil, nil).Targets()) {
			t.Fatalf("the table has %d rows, fewer than the built targets", len(rows))
		}
		columns := []struct {
			name  string
			check func(p probeResult) bool
		}{
			{"health", func(p probeResult) bool {
				var h struct{ Status string }
				return p.status == 200 && (json.Unmarshal([]byte(p.body), &h) == nil && h.Status != "" || strings.TrimSpace(p.body) != "")
			}},
			{"metrics", func(p probeResult) bool { return p.status == 200 && strings.Contains(p.body, "# HELP") }},
			{"OpenAPI", func(p probeResult) bool {
				return p.status == 200 && regexp.MustCompile(`^\{\s*"openapi":\s*"3\.`).MatchString(p.body)
			}},
			{"Swagger UI", func(p probeResult) bool { return p.status == 200 && strings.HasPrefix(p.ctype, "text/html") }},
		}
		for _, row := range rows {
			target := codeSpans(row[0])[0]
			l, ok := listenerFor(target, row[0])
			if !ok {
				t.Errorf("unknown target %q", target)
				continue
			}
			addr := s.addrs[l.Flag()]
			for i, col := range columns {
				cell := row[i+1]
				// Paths before a parenthesised remark are served; the remark
				// may name what is not.
				served, _, _ := strings.Cut(cell, " (")
				paths := codeSpans(served)
				if strings.HasPrefix(cell, "none") {
					continue
				}
				if len(paths) == 0 {
					t.Errorf("%s %s: cell %q names no path and does not say none", row[0], col.name, cell)
				}
				needsToken := strings.Contains(cell, "token")
				for _, p := range paths {
					if !strings.HasPrefix(p, "/") {
						continue
					}
					got := s.get(t, addr, p, needsToken)
					if !col.check(got) {
						t.Errorf("%s %s %s: %d %s %.200q", row[0], col.name, p, got.status, got.ctype, got.body)
					}
					if needsToken {
						if anon := s.get(t, addr, p, false); anon.status != 401 && anon.status != 403 {
							t.Errorf("%s %s %s: the README says a token is needed, but without one: %d", row[0], col.name, p, anon.status)
						}
					}
				}
			}
		}
	})

	t.Run("every path is served", func(t *testing.T) {
		pathRE := regexp.MustCompile(`^(?:(?:GET|POST|PUT|PATCH|DELETE) )?(/[A-Za-z0-9_{}./?=&-]*)`)
		var addrs []string
		for _, a := range s.addrs {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
		known := map[string]bool{}
		for _, l := range Listeners {
			for _, p := range strings.Split(l.Paths, ", ") {
				known[strings.Fields(p)[0]] = true
			}
		}
		checked := 0
		for _, span := range codeSpans(prose(readme)) {
			m := pathRE.FindStringSubmatch(span)
			if m == nil || strings.ContainsAny(span, "<") {
				continue
			}
			p := m[1]
			if strings.HasPrefix(p, "/etc/") || strings.HasPrefix(p, "/usr/") || known[p] {
				continue
			}
			probe := regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(p, "x")
			probe = strings.TrimSuffix(probe, "...")
			checked++
			served := false
			for _, a := range addrs {
				if !s.get(t, a, probe, s.isGateway(a)).routeMiss() {
					served = true
					break
				}
			}
			if !served {
				t.Errorf("README names %s (%q), which no target serves", p, span)
			}
		}
		if checked < 20 {
			t.Errorf("only %d paths checked: is the README parsed?", checked)
		}
	})

	t.Run("quick start", func(t *testing.T) { runQuickStart(t, s, readme) })
}

// quickCommand is one command of the Quick start and the answer its
// comment promises.
type quickCommand struct {
	cmd, want string
}

func parseQuickStart(t *testing.T, readme string) []quickCommand {
	t.Helper()
	section := readmeSection(t, readme, "## Quick start")
	i := strings.Index(section, "Then, for example:\n\n```sh\n")
	if i < 0 {
		t.Fatal("Quick start has no example block")
	}
	block := section[i+len("Then, for example:\n\n```sh\n"):]
	block = block[:strings.Index(block, "```")]
	commentRE := regexp.MustCompile(`\s{2,}#\s(.*)$`)
	var out []quickCommand
	var cur string
	for _, line := range strings.Split(block, "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "# ") && len(out) > 0 && cur == "" {
			out[len(out)-1].want = strings.TrimPrefix(trimmed, "# ")
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if c, ok := strings.CutSuffix(line, "\\"); ok {
			cur += c
			continue
		}
		cur += line
		qc := quickCommand{cmd: cur}
		if m := commentRE.FindStringSubmatchIndex(cur); m != nil {
			qc.cmd, qc.want = cur[:m[0]], cur[m[2]:m[3]]
		}
		out = append(out, qc)
		cur = ""
	}
	return out
}

// answerPattern turns a comment such as `{"bytes":...,"durationMs":...}
// (what it shows)` into an anchored pattern: the text before the
// parenthesised description, with `...` standing for anything.
func answerPattern(comment string) *regexp.Regexp {
	if i := strings.Index(comment, " ("); i >= 0 {
		comment = comment[:i]
	}
	parts := strings.Split(strings.TrimSpace(comment), "...")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^(?s)` + strings.Join(parts, ".*") + `$`)
}

func TestAnswerPattern(t *testing.T) {
	for _, tc := range []struct {
		comment, output string
		want            bool
	}{
		{"1000", "1000", true},
		{"1000", "10000", false},
		{`{"bytes":...,"durationMs":...}`, `{"bytes":3,"durationMs":0.2}`, true},
		{"Stopped (the TR-069 emulator's load test)", "Stopped", true},
		{"[] (runs are per caller)", "[]", true},
		{"[] (runs are per caller)", `[{"run_id":"r"}]`, false},
		{`{"status":"UP"}`, `{"status":"DOWN"}`, false},
	} {
		if got := answerPattern(tc.comment).MatchString(tc.output); got != tc.want {
			t.Errorf("%q against %q = %v, want %v", tc.comment, tc.output, got, tc.want)
		}
	}
}

func runQuickStart(t *testing.T, s *readmeStack, readme string) {
	for _, tool := range []string{"bash", "curl", "wc", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testutil.ServicesRequired() {
				t.Fatalf("%s is needed to run the README's commands: %v", tool, err)
			}
			t.Skipf("SKIPPED, NOT TESTED: %s not found, the README's commands cannot run", tool)
		}
	}
	byPort := map[string]string{}
	for _, l := range Listeners {
		if a, ok := s.addrs[l.Flag()]; ok {
			_, port, _ := net.SplitHostPort(l.Default)
			byPort[port] = a
		}
	}
	hostRE := regexp.MustCompile(`localhost:(\d+)`)
	assignRE := regexp.MustCompile(`^([A-Z_]+)=\$\(`)
	vars := map[string]string{}
	cmds := parseQuickStart(t, readme)
	if len(cmds) < 8 {
		t.Fatalf("only %d commands parsed from the Quick start", len(cmds))
	}
	for _, qc := range cmds {
		cmd := hostRE.ReplaceAllStringFunc(qc.cmd, func(h string) string {
			port := h[len("localhost:"):]
			a, ok := byPort[port]
			if !ok {
				t.Fatalf("the Quick start uses port %s, which no running target has", port)
			}
			return a
		})
		assign := assignRE.FindStringSubmatch(cmd)
		if assign != nil {
			cmd += `; printf %s "$` + assign[1] + `"`
		} else if qc.want == "" {
			t.Errorf("Quick start command without the answer it gives: %s", qc.cmd)
			continue
		}
		// Reads are retried: a device informs the ACS a moment after the
		// emulator starts it. Writes run once.
		retry := assign == nil && !strings.Contains(cmd, "-XPOST") && !strings.Contains(cmd, " -d ") && !strings.Contains(cmd, "--data")
		var out string
		match := func() bool {
			out = runShell(t, s.dir, cmd, vars)
			return assign != nil || answerPattern(qc.want).MatchString(strings.TrimSpace(out))
		}
		switch {
		case retry:
			testutil.Eventually(t, platformDeadline, fmt.Sprintf("%s to answer %s", qc.cmd, qc.want), match)
		case !match():
			t.Errorf("%s\n  README says: %s\n  answer:     %.400s", qc.cmd, qc.want, out)
		}
		if assign != nil {
			if strings.TrimSpace(out) == "" {
				t.Errorf("%s set %s to nothing", qc.cmd, assign[1])
			}
			vars[assign[1]] = out
		}
	}
}

func runShell(t *testing.T, dir, cmd string, vars map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = dir
	c.Env = os.Environ()
	for k, v := range vars {
		c.Env = append(c.Env, k+"="+v)
	}
	out, err := c.Output()
	if err != nil {
		t.Logf("%s: %v", cmd, err)
	}
	return string(out)
}

// TestDocsNamesExist holds the pages under docs/ to the code the same way:
// their configuration tables were read from `cpesuite help up`, and must
// not drift from it; every relative link of the README and the pages leads
// to a file.
func TestDocsNamesExist(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 10 {
		t.Fatalf("docs/ has %d pages (%v), want one per service plus architecture and operations", len(pages), err)
	}
	vars := registeredVars()
	lits := codeLiterals(t)
	byFlag := map[string]config.Var{}
	envs := map[string]bool{}
	for _, v := range vars {
		byFlag[v.Flag], envs[v.Env] = v, true
	}
	rowRE := regexp.MustCompile("^\\| `--([^`]+)` \\| `([^`]*)` \\|")
	envRE := regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	linkRE := regexp.MustCompile(`\]\(([^)#:]+)(?:#[^)]*)?\)`)
	rows := 0
	for _, page := range append(pages, "../../README.md") {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, line := range strings.Split(text, "\n") {
			m := rowRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			rows++
			v, ok := byFlag[m[1]]
			switch {
			case !ok:
				t.Errorf("%s: flag --%s does not exist", page, m[1])
			case v.Env != m[2]:
				t.Errorf("%s: flag --%s reads %s, the page says %s", page, m[1], v.Env, m[2])
			}
		}
		for _, span := range codeSpans(prose(text)) {
			if envRE.MatchString(span) && !envs[span] && !lits[span] {
				t.Errorf("%s: environment variable %s is read by no flag and spelled by no code", page, span)
			}
		}
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), m[1])); err != nil {
				t.Errorf("%s: link %s leads nowhere", page, m[1])
			}
		}
	}
	if rows < 100 {
		t.Errorf("only %d configuration rows found in docs/: are the tables parsed?", rows)
	}
}
