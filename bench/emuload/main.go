// Command emuload runs the TR-069 emulator against the ACS as two separate
// processes of the cpesuite binary and measures what the issue asks for:
// end-to-end Inform sessions per second, each process's CPU time over the
// same window (so the emulator's share of the work), and the emulator's
// memory per device.
//
//	make build
//	go run ./bench/emuload -devices 10000 -periodic 1 -measure 30s     # saturating load
//	go run ./bench/emuload -devices 10000 -periodic 600 -measure 20s   # idle fleet: memory
//
// The ACS uses SQLite in a fresh data dir and its default authentication
// (Digest offered first, so every session costs a 401 round trip, as with
// real CPEs). Devices come from the TR-181 base tree with task delays off.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/cpesuite", "cpesuite binary")
	devices := flag.Int("devices", 10000, "emulated devices (groups x concurrent)")
	periodic := flag.Int("periodic", 1, "periodic inform interval in seconds")
	measure := flag.Duration("measure", 30*time.Second, "measuring window after all devices registered")
	settle := flag.Duration("settle", 5*time.Second, "wait after registration before measuring")
	flag.Parse()
	if err := run(*bin, *devices, *periodic, *measure, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "emuload:", err)
		os.Exit(1)
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type proc struct {
	name string
	cmd  *exec.Cmd
}

func start(bin, name string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{name: name, cmd: cmd}, nil
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// cpuSeconds is utime+stime of the process from /proc.
func (p *proc) cpuSeconds() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+2:])
	f := strings.Fields(rest)
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ is 100 on Linux
}

// rssBytes is VmRSS from /proc.
func (p *proc) rssBytes() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

// metric reads one unlabelled sample from a Prometheus endpoint.
func metric(url, name string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+" ") {
			return strconv.ParseFloat(strings.TrimSpace(line[len(name)+1:]), 64)
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

func waitHTTP(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %s", url, within)
}

func post(url string, body any) error {
	data, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return nil
}

func run(bin string, devices, periodic int, measure, settle time.Duration) error {
	dir, err := os.MkdirTemp("", "cpesuite-emuload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	acsAddr, apiAddr, emuAddr := freeAddr(), freeAddr(), freeAddr()
	common := []string{"CPESUITE_LOG_LEVEL=warn", "CPESUITE_LOG_FORMAT=json"}
	acsP, err := start(bin, "acs", append(common, "CPESUITE_DATA_DIR="+dir+"/acs", "CPESUITE_ACS_ADDR="+acsAddr,
		"CPESUITE_ACS_API_ADDR="+apiAddr, "CPESUITE_ACS_PASSWORD=bench-secret", "CPESUITE_ACS_MAX_SESSIONS=20000"), "run", "acs")
	if err != nil {
		return err
	}
	defer acsP.stop()
	emuP, err := start(bin, "tr069-emulator", append(common, "CPESUITE_DATA_DIR="+dir+"/emu", "CPESUITE_TR069_EMULATOR_ADDR="+emuAddr,
		"CPESUITE_TR069_EMULATOR_ACS_PASSWORD=bench-secret", "CPESUITE_TR069_EMULATOR_MAX_DEVICES="+strconv.Itoa(max(devices, 1))), "run", "tr069-emulator")
	if err != nil {
		return err
	}
	defer emuP.stop()
	emu := "http://" + emuAddr
	if err := waitHTTP(emu+"/api/status", 20*time.Second); err != nil {
		return err
	}
	if err := waitHTTP("http://"+apiAddr+"/metrics", 20*time.Second); err != nil {
		return err
	}
	baseRSS, _ := emuP.rssBytes()
	baseHeap, _ := metric(emu+"/metrics", "go_memstats_heap_inuse_bytes")

	host, port, _ := net.SplitHostPort(acsAddr)
	portN, _ := strconv.Atoi(port)
	var props map[string]any
	resp, err := http.Get(emu + "/api/properties")
	if err != nil {
		return err
	}
	_ = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	groups := max(devices/1000, 1)
	props["host"], props["port"], props["url"] = host, portN, "/"
	props["groups"], props["concurrent"], props["registrationGroup"], props["delay"] = groups, devices/groups, 500, 50
	props["spread"], props["periodicInformEnabled"] = periodic, true
	for k := range props {
		if strings.HasPrefix(k, "taskDelay") {
			props[k] = 0
		}
	}
	if err := post(emu+"/api/properties", props); err != nil {
		return err
	}
	if err := post(emu+"/api/periodic", map[string]int{"periodic": periodic}); err != nil {
		return err
	}
	began := time.Now()
	if err := post(emu+"/api/start", nil); err != nil {
		return err
	}
	total := groups * (devices / groups)
	// Registered: every device delivered its BOOTSTRAP (sessions >= total).
	for {
		s, err := metric(emu+"/metrics", "tr069emu_sessions_total")
		if err == nil && int(s) >= total {
			break
		}
		if time.Since(began) > 10*time.Minute {
			return fmt.Errorf("only %.0f of %d devices registered after 10 minutes", s, total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	regTime := time.Since(began)
	time.Sleep(settle)

	st0, _ := metric(emu+"/metrics", "tr069emu_session_seconds_total")
	s0, _ := metric(emu+"/metrics", "tr069emu_sessions_total")
	f0, _ := metric(emu+"/metrics", "tr069emu_session_failures_total")
	ec0, _ := emuP.cpuSeconds()
	ac0, _ := acsP.cpuSeconds()
	t0 := time.Now()
	time.Sleep(measure)
	s1, _ := metric(emu+"/metrics", "tr069emu_sessions_total")
	st1, _ := metric(emu+"/metrics", "tr069emu_session_seconds_total")
	f1, _ := metric(emu+"/metrics", "tr069emu_session_failures_total")
	ec1, _ := emuP.cpuSeconds()
	ac1, _ := acsP.cpuSeconds()
	win := time.Since(t0).Seconds()
	rss, _ := emuP.rssBytes()
	heap, _ := metric(emu+"/metrics", "go_memstats_heap_inuse_bytes")
	acsRSS, _ := acsP.rssBytes()

	sessions := (s1 - s0) / win
	emuCPU, acsCPU := (ec1-ec0)/win, (ac1-ac0)/win
	fmt.Printf("devices=%d periodic=%ds registration=%s window=%.1fs\n", total, periodic, regTime.Round(time.Millisecond), win)
	fmt.Printf("sessions/s=%.0f failures/s=%.1f demanded/s=%.0f mean-session=%.1fms\n", sessions, (f1-f0)/win, float64(total)/float64(periodic), 1000*(st1-st0)/(s1-s0))
	fmt.Printf("cpu cores: emulator=%.2f acs=%.2f emulator-share=%.1f%% emulator-cpu-us/session=%.0f\n",
		emuCPU, acsCPU, 100*emuCPU/(emuCPU+acsCPU), 1e6*emuCPU/sessions)
	fmt.Printf("emulator memory: rss=%.1f MiB (%.1f KiB/device over the idle process) heap-inuse=%.1f MiB (%.1f KiB/device) | acs rss=%.1f MiB\n",
		float64(rss)/(1<<20), float64(rss-baseRSS)/1024/float64(total), heap/(1<<20), (heap-baseHeap)/1024/float64(total), float64(acsRSS)/(1<<20))
	return nil
}
