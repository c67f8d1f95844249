package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/app"
	"cpesuite/internal/cwmp"
)

// floodResult is the login-flood phase (issue 18 item 8): the ACS's
// Inform latency and the process's RSS without and with bogus logins
// hammering the gateway in the same process.
type floodResult struct {
	Logins           int            `json:"flood_clients"`
	Seconds          float64        `json:"seconds"`
	RSSBeforeMB      float64        `json:"rss_before_mb"`
	RSSMaxMB         float64        `json:"rss_max_during_flood_mb"`
	InformBaseP50MS  float64        `json:"inform_baseline_p50_ms"`
	InformBaseP99MS  float64        `json:"inform_baseline_p99_ms"`
	InformFloodP50MS float64        `json:"inform_flood_p50_ms"`
	InformFloodP99MS float64        `json:"inform_flood_p99_ms"`
	InformErrors     int64          `json:"inform_errors"`
	LoginAnswers     map[string]int `json:"login_answers"`
	LoginTimeouts    int64          `json:"login_client_timeouts"`
	LoginP99MS       float64        `json:"login_p99_ms"`
}

const (
	floodACSPassword = "bench-cpe-password"
	floodInformers   = 4
)

// floodPhase starts `cpesuite up --only acs,gateway` in this process (the
// production wiring, shared passwd limiter included), measures CPE
// sessions (Inform, empty POST) alone for d, then again while clients
// bogus logins each, from as many loopback source addresses
// (127.1.x.y), hammer POST /api/auth/login; RSS is sampled throughout.
func floodPhase(ctx context.Context, clients int, d time.Duration) (floodResult, error) {
	res := floodResult{Logins: clients, Seconds: d.Seconds(), LoginAnswers: map[string]int{}}
	dir, err := os.MkdirTemp("", "gatewayload-flood-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	addrs := make([]string, 3)
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			return res, err
		}
	}
	env := map[string]string{
		"CPESUITE_DATA_DIR": dir, "CPESUITE_LOG_LEVEL": "error",
		"CPESUITE_ACS_ADDR": addrs[0], "CPESUITE_ACS_API_ADDR": addrs[1], "CPESUITE_GATEWAY_ADDR": addrs[2],
		"CPESUITE_ACS_PASSWORD": floodACSPassword, "CPESUITE_GATEWAY_ADMIN_PASSWORD": "Flood-Adm1n-Passw0rd!",
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	exited := make(chan int, 1)
	var logs bytes.Buffer
	var logMu sync.Mutex
	go func() {
		exited <- app.CLI(ctx, []string{"up", "--only", "acs,gateway"}, io.Discard, lockedWriter{&logs, &logMu},
			func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}()
	defer func() {
		cancel()
		<-exited
	}()
	gw, acsURL := "http://"+addrs[2], "http://"+addrs[0]+"/"
	ready := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(gw + "/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case code := <-exited:
			logMu.Lock()
			defer logMu.Unlock()
			return res, fmt.Errorf("cpesuite up exited with %d: %s", code, logs.String())
		default:
		}
		if time.Now().After(ready) {
			return res, fmt.Errorf("gateway not up within 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	informs := make([][]byte, 200)
	for i := range informs {
		if informs[i], err = floodInform(i); err != nil {
			return res, err
		}
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("cpe:"+floodACSPassword))
	// Warm-up: the first sessions create the devices.
	if _, _, err := informLoad(acsURL, auth, informs, 3*time.Second); err != nil {
		return res, err
	}
	rss0, err := rssMB()
	if err != nil {
		return res, err
	}
	res.RSSBeforeMB = round1(rss0)
	base, errs, err := informLoad(acsURL, auth, informs, d)
	if err != nil {
		return res, err
	}
	res.InformBaseP50MS, res.InformBaseP99MS = msAt(base, 50), msAt(base, 99)
	res.InformErrors += errs

	floodCtx, stopFlood := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var (
		mu        sync.Mutex
		loginLat  []time.Duration
		timeouts  atomic.Int64
		rssMax    = rss0
		samplerWG sync.WaitGroup
	)
	samplerWG.Add(1)
	go func() {
		defer samplerWG.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-floodCtx.Done():
				return
			case <-t.C:
				if r, err := rssMB(); err == nil {
					mu.Lock()
					rssMax = max(rssMax, r)
					mu.Unlock()
				}
			}
		}
	}()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := &net.TCPAddr{IP: net.IPv4(127, 1, byte(c/250), byte(c%250+1))}
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				DialContext:         (&net.Dialer{LocalAddr: src}).DialContext,
				MaxIdleConnsPerHost: 1,
			}}
			defer client.CloseIdleConnections()
			for i := 0; floodCtx.Err() == nil; i++ {
				body := fmt.Sprintf(`{"username":"bogus-%d-%d","password":"Wrong-Passw0rd-%d"}`, c, i, i)
				req, _ := http.NewRequestWithContext(floodCtx, http.MethodPost, gw+"/api/auth/login", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				took := time.Since(t0)
				if err != nil {
					if floodCtx.Err() == nil {
						timeouts.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				res.LoginAnswers[strconv.Itoa(resp.StatusCode)]++
				loginLat = append(loginLat, took)
				mu.Unlock()
				if ra := resp.Header.Get("Retry-After"); ra != "" && resp.StatusCode == http.StatusServiceUnavailable {
					// A polite client would wait; a flood does not, but
					// a short pause keeps the clients from only
					// measuring themselves.
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	flood, errs, err := informLoad(acsURL, auth, informs, d)
	stopFlood()
	wg.Wait()
	samplerWG.Wait()
	if err != nil {
		return res, err
	}
	res.InformFloodP50MS, res.InformFloodP99MS = msAt(flood, 50), msAt(flood, 99)
	res.InformErrors += errs
	res.RSSMaxMB = round1(rssMax)
	res.LoginTimeouts = timeouts.Load()
	res.LoginP99MS = msAt(loginLat, 99)
	return res, nil
}

func (r floodResult) print() {
	b, _ := json.Marshal(r.LoginAnswers)
	fmt.Printf("  RSS %.0f MB before, max %.0f MB during the flood\n", r.RSSBeforeMB, r.RSSMaxMB)
	fmt.Printf("  Inform session p50/p99: %.1f / %.1f ms alone, %.1f / %.1f ms during the flood (%d errors)\n",
		r.InformBaseP50MS, r.InformBaseP99MS, r.InformFloodP50MS, r.InformFloodP99MS, r.InformErrors)
	fmt.Printf("  %d flood clients for %.0f s: answers %s, client time-outs %d, login p99 %.0f ms\n",
		r.Logins, r.Seconds, b, r.LoginTimeouts, r.LoginP99MS)
}

// informLoad runs floodInformers CPE sessions in a loop for d and returns
// each session's latency.
func informLoad(url, auth string, informs [][]byte, d time.Duration) ([]time.Duration, int64, error) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs atomic.Int64
		wg   sync.WaitGroup
	)
	end := time.Now().Add(d)
	for w := range floodInformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(1)
			for i := w; time.Now().Before(end); i += floodInformers {
				t0 := time.Now()
				if err := cpeSession(c, url, auth, informs[i%len(informs)]); err != nil {
					errs.Add(1)
					continue
				}
				took := time.Since(t0)
				mu.Lock()
				lat = append(lat, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(lat) == 0 {
		return nil, errs.Load(), fmt.Errorf("no CPE session succeeded (%d errors)", errs.Load())
	}
	return lat, errs.Load(), nil
}

// cpeSession is one CWMP session: Inform, then the empty POST that ends it.
func cpeSession(c *http.Client, url, auth string, inform []byte) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(inform))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "text/xml")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("inform: %s", resp.Status)
	}
	req, _ = http.NewRequest(http.MethodPost, url, nil)
	req.Header.Set("Authorization", auth)
	for _, ck := range resp.Cookies() {
		req.AddCookie(ck)
	}
	resp, err = c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("empty POST: %s", resp.Status)
	}
	return nil
}

func floodInform(i int) ([]byte, error) {
	inf := &cwmp.Inform{DeviceID: cwmp.DeviceID{Manufacturer: "Acme", OUI: "00D09E", ProductClass: "HG1", SerialNumber: fmt.Sprintf("FLOOD%05d", i)},
		Event: []cwmp.EventStruct{{EventCode: cwmp.EventPeriodic}}, MaxEnvelopes: 1, CurrentTime: time.Now().UTC().Truncate(time.Second),
		ParameterList: []cwmp.ParameterValueStruct{
			{Name: "InternetGatewayDevice.DeviceInfo.SoftwareVersion", Value: cwmp.String("V3.2.1")},
			{Name: "InternetGatewayDevice.ManagementServer.ConnectionRequestURL", Value: cwmp.String(fmt.Sprintf("http://127.0.0.1:9/cr/%d", i))},
			{Name: "InternetGatewayDevice.ManagementServer.PeriodicInformInterval", Value: cwmp.UnsignedInt(300)},
		}}
	return cwmp.Encode(cwmp.NewEnvelope(cwmp.CWMP12, "1", inf))
}

// rssMB is this process's resident set size.
func rssMB() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}

func msAt(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return round1(float64(s[min(len(s)-1, len(s)*p/100)]) / float64(time.Millisecond))
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
