// Command gatewayload measures the test-runner gateway (issue 8): the
// latency it adds in front of a worker, what its token check costs, and
// how many logins per second it accepts.
//
//	go run ./bench/gatewayload                           # everything, defaults
//	go run ./bench/gatewayload -phases proxy -cpuprofile gw.prof
//	go run ./bench/gatewayload -phases login -c 4,1 -d 5s
//
// Gateway and workers run in this process, each behind its own
// 127.0.0.1 TCP listener and http.Server, with the gateway's store in a
// SQLite file in a temporary folder; clients are keep-alive
// http.Clients. Logs are discarded.
//
// Phases:
//   - proxy: GET /api/settings (routed through httputil.ReverseProxy) and
//     GET /api/runs/active (fanned out to every stand and merged), each
//     measured directly at the worker, through a bare ReverseProxy that
//     only signs (the hop alone) and through the gateway, request by
//     request in turn; then the fan-out again with two stands. The
//     direct request is signed before its clock starts: a real client
//     could not sign, so signing is not part of the baseline, while the
//     gateway's own signing is part of what it adds.
//   - auth: a no-op handler on an open path, the same handler behind the
//     token check, GET /api/auth/me and GET /api/gateway/stands, all on
//     the gateway's server; plus the in-process cost of identity.Sign and
//     of Authenticate.
//   - flood (issue 18 item 8): `cpesuite up --only acs,gateway` in this
//     process; CPE sessions (Inform, empty POST) from 4 clients for
//     -flood-d alone, then again while -flood-c clients send bogus logins
//     without pause, each from its own loopback address (127.1.x.y), so
//     that the per-address limit does not hide the bound on hashing; the
//     process's RSS is sampled every 50 ms.
//   - login: POST /api/auth/login with C concurrent clients for D, with
//     the right password, with a wrong one from a fresh address each time
//     (a full argon2 verification) and from a rate-limited pair (429,
//     no argon2).
//
// It prints every round and the medians, then one JSON line with all
// figures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	n, warm, rounds int
	clients         []int
	dur             time.Duration
	phases          []string
	argon2          int
	floodClients    int
	floodDur        time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 2000, "measured requests per probe and round")
	flag.IntVar(&o.warm, "warm", 200, "warm-up requests per probe before the rounds")
	flag.IntVar(&o.rounds, "r", 5, "rounds")
	clients := flag.String("c", "4,1", "comma-separated concurrent login clients, one load per value")
	flag.DurationVar(&o.dur, "d", 5*time.Second, "duration of each login load")
	phases := flag.String("phases", "proxy,auth,login", "comma-separated phases to run: proxy, auth, login, flood")
	flag.IntVar(&o.floodClients, "flood-c", 256, "bogus login clients of the flood phase")
	flag.DurationVar(&o.floodDur, "flood-d", 10*time.Second, "duration of each half of the flood phase")
	flag.IntVar(&o.argon2, "argon2", 20, "in-process argon2 verifications timed for the login floor")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured phases here")
	flag.Parse()
	var err error
	if o.clients, err = parseClients(*clients); err != nil {
		fail(err)
	}
	if o.phases, err = parsePhases(*phases); err != nil {
		fail(err)
	}
	if o.n < 100 || o.warm < 0 || o.rounds < 1 || o.dur < time.Second || o.argon2 < 1 {
		fail(fmt.Errorf("need -n >= 100, -warm >= 0, -r >= 1, -d >= 1s, -argon2 >= 1"))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
	}
	rep, err := run(context.Background(), o)
	pprof.StopCPUProfile()
	if err != nil {
		fail(err)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(line))
}

func fail(err error) {
	pprof.StopCPUProfile()
	fmt.Fprintln(os.Stderr, "gatewayload:", err)
	os.Exit(1)
}

func parseClients(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > 256 {
			return nil, fmt.Errorf("-c: %q is not a client count from 1 to 256", f)
		}
		out = append(out, c)
	}
	return out, nil
}

func parsePhases(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains([]string{"proxy", "auth", "login", "flood"}, f) {
			return nil, fmt.Errorf("-phases: unknown phase %q (proxy, auth, login, flood)", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// report is the JSON line; latencies in microseconds.
type report struct {
	GOMAXPROCS     int           `json:"gomaxprocs"`
	LoadBefore     string        `json:"loadavg_before"`
	LoadAfter      string        `json:"loadavg_after"`
	N              int           `json:"n"`
	Rounds         int           `json:"rounds"`
	Proxy          []comparison  `json:"proxy,omitempty"`
	Auth           *comparison   `json:"auth,omitempty"`
	SignUS         float64       `json:"sign_p50_us,omitempty"`
	AuthenticateUS float64       `json:"authenticate_p50_us,omitempty"`
	Argon2MS       float64       `json:"argon2_verify_p50_ms,omitempty"`
	Logins         []loginResult `json:"logins,omitempty"`
	DBBytes        int64         `json:"gateway_db_bytes,omitempty"`
	Flood          *floodResult  `json:"flood,omitempty"`
}

// loadavg is the first three fields of /proc/loadavg: the machine is
// shared, so every run says how busy it was.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func run(ctx context.Context, o options) (*report, error) {
	rep := &report{GOMAXPROCS: runtime.GOMAXPROCS(0), LoadBefore: loadavg(), N: o.n, Rounds: o.rounds}
	fmt.Printf("gatewayload: GOMAXPROCS %d, load average %s, n %d, warm-up %d, rounds %d\n",
		rep.GOMAXPROCS, rep.LoadBefore, o.n, o.warm, o.rounds)
	e, err := newEnv(ctx)
	if err != nil {
		return nil, err
	}
	defer e.close()
	for _, ph := range o.phases {
		switch ph {
		case "proxy":
			if rep.Proxy, err = proxyPhase(e, o); err != nil {
				return nil, err
			}
		case "auth":
			c, err := authPhase(ctx, e, o)
			if err != nil {
				return nil, err
			}
			rep.Auth = &c
			if rep.SignUS, rep.AuthenticateUS, err = inProcess(ctx, e, o.n); err != nil {
				return nil, err
			}
		case "flood":
			fmt.Println("login flood against `cpesuite up --only acs,gateway` in this process:")
			f, err := floodPhase(ctx, o.floodClients, o.floodDur)
			if err != nil {
				return nil, err
			}
			f.print()
			rep.Flood = &f
		case "login":
			fmt.Println("login throughput:")
			if rep.Argon2MS, err = argon2Verify(o.argon2); err != nil {
				return nil, err
			}
			fmt.Printf("  argon2id verification alone (in-process, p50 of %d): %.1f ms = %.1f /s per core\n",
				o.argon2, rep.Argon2MS, 1000/rep.Argon2MS)
			if rep.Logins, err = loginPhases(e, o.clients, o.dur); err != nil {
				return nil, err
			}
			rep.DBBytes = e.dbBytes()
			fmt.Printf("  gateway.db with its WAL after the login loads: %.1f MiB\n", float64(rep.DBBytes)/(1<<20))
		}
	}
	rep.LoadAfter = loadavg()
	fmt.Printf("load average after: %s\n", rep.LoadAfter)
	return rep, nil
}
