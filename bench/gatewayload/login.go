package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/platform/passwd"
	"cpesuite/internal/testrunner/gateway/accounts"
)

// loginResult is one login load: C clients posting logins back to back
// for a while.
type loginResult struct {
	Name    string  `json:"name"`
	Clients int     `json:"clients"`
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"per_sec"`
	P50ms   float64 `json:"p50_ms"`
	P99ms   float64 `json:"p99_ms"`
	// AuditRows is how many audit-log rows the load wrote.
	AuditRows int `json:"audit_rows"`
}

// loginLoad runs conc clients for dur, each posting password for the admin
// from the address addr(client) (sent as X-Forwarded-For; loopback is a
// trusted proxy) until the time is up; every answer must have status want.
func loginLoad(e *env, name, password string, want int, addr func(client int) string, conc int, dur time.Duration) (loginResult, error) {
	body, err := json.Marshal(map[string]string{"username": adminName, "password": password})
	if err != nil {
		return loginResult{}, err
	}
	rows0, err := e.auditRows()
	if err != nil {
		return loginResult{}, err
	}
	took := make([][]time.Duration, conc)
	errs := make([]error, conc)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for c := range conc {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				d, status, err := loginOnce(e, body, addr(c))
				if err != nil {
					errs[c] = err
					return
				}
				took[c] = append(took[c], d)
				if status != want {
					errs[c] = fmt.Errorf("%s: status %d, want %d", name, status, want)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for c := range conc {
		if errs[c] != nil {
			return loginResult{}, errs[c]
		}
		all = append(all, took[c]...)
	}
	rows1, err := e.auditRows()
	if err != nil {
		return loginResult{}, err
	}
	r := loginResult{Name: name, Clients: conc, Count: len(all), Seconds: round1(elapsed.Seconds()), AuditRows: rows1 - rows0}
	r.PerSec = round1(float64(len(all)) / elapsed.Seconds())
	r.P50ms = round3(percentile(all, 50) / 1000)
	r.P99ms = round3(percentile(all, 99) / 1000)
	fmt.Printf("  %-34s C=%d: %6d in %4.1f s = %8.1f /s, p50 %7.3f ms, p99 %7.3f ms, %6d audit rows\n",
		r.Name, r.Clients, r.Count, elapsed.Seconds(), r.PerSec, r.P50ms, r.P99ms, r.AuditRows)
	return r, nil
}

// auditRows counts the gateway's audit log: every login outcome,
// including a refusal by the rate limit, is one row.
func (e *env) auditRows() (int, error) {
	var n int
	err := e.db.QueryRow("SELECT count(*) FROM gw_activity").Scan(&n)
	return n, err
}

// loginOnce posts one login from addr and returns its latency and status.
func loginOnce(e *env, body []byte, addr string) (time.Duration, int, error) {
	req, err := http.NewRequest(http.MethodPost, e.gwURL+"/api/auth/login", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	t0 := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode, err
}

// fixedAddr gives every client its own address, so that concurrent
// successful logins never share a rate-limit slot.
func fixedAddr(c int) string { return fmt.Sprintf("10.0.%d.%d", c/250, c%250+1) }

// freshAddrs gives every attempt an address never used before: each
// rejected login is then the first failure of its pair, which costs a full
// argon2 verification.
func freshAddrs() func(int) string {
	var n atomic.Uint32
	return func(int) string {
		i := n.Add(1)
		return fmt.Sprintf("10.%d.%d.%d", 1+(i>>16)&0xff, (i>>8)&0xff, i&0xff)
	}
}

// limitedPhaseMax keeps a rate-limited load inside the failure window
// its seeding opened: later, the seeded failures expire and attempts
// would reach argon2 again.
const limitedPhaseMax = accounts.FailureWindow - 10*time.Second

// loginPhases runs the successful, rejected and rate-limited loads with
// every client count.
func loginPhases(e *env, clients []int, dur time.Duration) ([]loginResult, error) {
	var out []loginResult
	fresh := freshAddrs()
	for k, c := range clients {
		ok, err := loginLoad(e, "login ok (200)", adminPW, http.StatusOK, fixedAddr, c, dur)
		if err != nil {
			return nil, err
		}
		rejected, err := loginLoad(e, "wrong password, fresh pair (401)", wrongPW, http.StatusUnauthorized, fresh, c, dur)
		if err != nil {
			return nil, err
		}
		limitedAddr := fmt.Sprintf("10.255.0.%d", k+1)
		if err := seedFailures(e, limitedAddr); err != nil {
			return nil, err
		}
		limited, err := loginLoad(e, "over the limit (429)", wrongPW, http.StatusTooManyRequests,
			func(int) string { return limitedAddr }, c, min(dur, limitedPhaseMax))
		if err != nil {
			return nil, err
		}
		out = append(out, ok, rejected, limited)
	}
	return out, nil
}

const wrongPW = "Wrong-Passw0rd!!"

// seedFailures makes the pair (admin, addr) reach the failure limit, so
// that its next attempts are refused before argon2.
func seedFailures(e *env, addr string) error {
	body, err := json.Marshal(map[string]string{"username": adminName, "password": wrongPW})
	if err != nil {
		return err
	}
	for range accounts.MaxFailures {
		if _, status, err := loginOnce(e, body, addr); err != nil || status != http.StatusUnauthorized {
			return fmt.Errorf("seeding the rate limit: status %d, %v", status, err)
		}
	}
	return nil
}

// argon2Verify is the median time of one passwd.Verify with the
// production parameters, in milliseconds: the floor of a login.
func argon2Verify(times int) (float64, error) {
	h, err := passwd.Hash(adminPW)
	if err != nil {
		return 0, err
	}
	ds := make([]time.Duration, times)
	for i := range ds {
		t0 := time.Now()
		if ok, err := passwd.Verify(h, adminPW); err != nil || !ok {
			return 0, fmt.Errorf("verify: %v %v", ok, err)
		}
		ds[i] = time.Since(t0)
	}
	return round1(percentile(ds, 50) / 1000), nil
}
