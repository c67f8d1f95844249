// Command startup measures how long `cpesuite up` takes from exec to
// ready (readiness endpoint answers 200) and from SIGTERM to exit, over
// several runs, and prints the medians.
//
//	go run ./bench/startup -bin bin/cpesuite -runs 15
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/cpesuite", "cpesuite binary")
	runs := flag.Int("runs", 15, "number of runs")
	args := flag.String("args", "up", "arguments (space-separated is not supported: one subcommand)")
	flag.Parse()

	var ready, stop []time.Duration
	for i := 0; i < *runs; i++ {
		r, s, err := once(*bin, *args)
		if err != nil {
			fmt.Fprintf(os.Stderr, "run %d: %v\n", i+1, err)
			os.Exit(1)
		}
		ready, stop = append(ready, r), append(stop, s)
	}
	fmt.Printf("runs=%d start-to-ready median=%s min=%s max=%s | sigterm-to-exit median=%s max=%s\n",
		*runs, median(ready), slices.Min(ready), slices.Max(ready), median(stop), slices.Max(stop))
}

func once(bin, sub string) (time.Duration, time.Duration, error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, 0, err
	}
	acsAddr, _ := freeAddr()
	apiAddr, _ := freeAddr()
	emuAddr, _ := freeAddr()
	dir, err := os.MkdirTemp("", "cpesuite-startup-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)

	cmd := exec.Command(bin, sub)
	cmd.Env = append(os.Environ(), "CPESUITE_SPEEDTEST_ADDR="+addr, "CPESUITE_DATA_DIR="+dir, "CPESUITE_LOG_LEVEL=warn",
		"CPESUITE_ACS_ADDR="+acsAddr, "CPESUITE_ACS_API_ADDR="+apiAddr, "CPESUITE_TR069_EMULATOR_ADDR="+emuAddr)
	client := &http.Client{Timeout: time.Second}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	url := "http://" + addr + "/actuator/health/readiness"
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(began) > 30*time.Second {
			_ = cmd.Process.Kill()
			return 0, 0, fmt.Errorf("not ready after 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	ready := time.Since(began)
	stopAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	select {
	case err := <-exited:
		if err != nil {
			return 0, 0, fmt.Errorf("exit after SIGTERM: %w", err)
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		return 0, 0, fmt.Errorf("still running 15 s after SIGTERM")
	}
	return ready, time.Since(stopAt), nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
