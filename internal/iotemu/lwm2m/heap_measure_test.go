//go:build measure

// The per-device heap measurement is a measurement, not a check: it is
// built only with -tags measure, so that a plain test run has no
// placeholder that skips.

package lwm2m

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cpesuite/internal/iotemu/lwm2m/lwm2mtest"
	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// TestHelperServer is not a test: TestHeapPerDevice runs it in a child
// process so that the server's memory is not counted as the devices'. It
// prints the server's address and serves until stdin closes.
func TestHelperServer(t *testing.T) {
	if os.Getenv("LWM2M_HELPER_SERVER") != "1" {
		return // run directly: nothing to serve
	}
	var opts []lwm2mtest.Option
	if os.Getenv("LWM2M_HEAP_DTLS") != "" {
		opts = append(opts, lwm2mtest.WithPSK(map[string][]byte{"heap": pskKey}))
	}
	srv := lwm2mtest.New(t, opts...)
	fmt.Printf("ADDR %s\n", srv.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

// helperServer starts TestHelperServer in a child process and returns its
// address.
func helperServer(t *testing.T) *net.UDPAddr {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	cmd.Env = append(os.Environ(), "LWM2M_HELPER_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			addr, err := net.ResolveUDPAddr("udp", a)
			if err != nil {
				t.Fatal(err)
			}
			return addr
		}
	}
	t.Fatal("helper server printed no address")
	return nil
}

// TestHeapPerDevice measures the heap and goroutines each running,
// registered device costs, with the server in another process, over
// LWM2M_HEAP_DEVICES devices (default 1000), over DTLS-PSK when
// LWM2M_HEAP_DTLS is set; run it without -race, which inflates both:
//
//	LWM2M_HEAP_DEVICES=1000 go test -tags measure -run TestHeapPerDevice -v ./internal/iotemu/lwm2m/
func TestHeapPerDevice(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LWM2M_HEAP_DEVICES"))
	if n <= 0 {
		n = 1000
	}
	addr := helperServer(t)
	var p Protocol
	opts := map[string]string{OptLifetime: "300", OptRequestTimeout: "5"}
	hosts := make([]*fakeHost, n)
	devs := make([]proto.Device, n)
	for i := range devs {
		cfg := proto.Config{
			ClientID: fmt.Sprintf("heap-%d", i), SerialNumber: strconv.Itoa(i), Manufacturer: "Acme", ModelName: "M1",
			ServerIP: addr.IP.String(), ServerPort: addr.Port, ClientIP: "127.0.0.1", SecurityMode: proto.SecurityNone, Options: opts,
		}
		if os.Getenv("LWM2M_HEAP_DTLS") != "" {
			cfg.SecurityMode, cfg.PSKID, cfg.PSKKey = proto.SecurityPSK, "heap", hex.EncodeToString(pskKey)
		}
		hosts[i] = newFakeHost(p.Params(cfg))
		d, err := p.New(cfg, hosts[i])
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = d
	}
	before, stack0 := heap()
	g0 := runtime.NumGoroutine()
	start := time.Now()
	startAll(t, devs, 16)
	elapsed := time.Since(start)
	testutil.Eventually(t, testutil.MinDeadline, "all connected", func() bool {
		for _, h := range hosts {
			if h.Connection() != proto.Connected {
				return false
			}
		}
		return true
	})
	// The log entries the fake host keeps are the session's business,
	// not the device's: drop them before measuring.
	for _, h := range hosts {
		h.ClearEntries()
	}
	after, stack1 := heap()
	g1 := runtime.NumGoroutine()
	t.Logf("%d devices registered in %s (%.0f registrations/s, 16 starting at a time)", n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())
	t.Logf("heap in use: %.1f KiB per running device (%.1f MiB total); goroutines: %.2f per device, stacks %.1f KiB per device",
		float64(after-before)/float64(n)/1024, float64(after-before)/(1<<20), float64(g1-g0)/float64(n),
		float64(stack1-stack0)/float64(n)/1024)

	start = time.Now()
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.(proto.Updater).Update(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent updates in %s", n, time.Since(start).Round(time.Millisecond))
	for _, d := range devs {
		_ = d.Stop(context.Background())
	}
}

// heap returns the heap and the goroutine stacks in use after a GC.
func heap() (heapInuse, stackInuse uint64) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse
}

// startAll starts devs with the given number of concurrent starts, as the
// session's concurrentClients does.
func startAll(t testing.TB, devs []proto.Device, parallel int) {
	t.Helper()
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := d.Start(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
