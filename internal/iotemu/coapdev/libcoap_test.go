package coapdev

// Tests against libcoap's coap-client, a real CoAP peer (libcoap3-bin
// 4.3.1 on the reference machine). Its output: the payload of a 2.xx
// response as is (no newline), an error response as "<code> <diagnostic
// payload>", nothing for an empty 2.04; with -v 6 it also prints every
// message as "v:1 t:CON c:2.05 i:35c3 {01} [ Observe:2, ... ] :: '30'".

import (
	"context"
	"encoding/hex"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/testutil"
)

// breakAfter is coap-client's -B, how long it waits for an answer. It is a
// safety net: an answered request ends coap-client at once, so only a hang
// waits it out.
var breakAfter = strconv.Itoa(int(testutil.MinDeadline / time.Second))

// clientDeadline outlives coap-client's own -B, so coap-client reports a
// missing answer itself before the test kills it.
const clientDeadline = testutil.MinDeadline + 30*time.Second

// coapClient runs a coap-client binary and returns its combined output.
func coapClient(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// requireBinary finds one of libcoap's DTLS builds of coap-client; like
// testutil.Require it skips, or fails when CI demands every service.
func requireBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := name + " (libcoap3-bin) is not installed: " + err.Error()
		if testutil.ServicesRequired() {
			t.Fatalf("CPESUITE_REQUIRE_SERVICES=1: %s", msg)
		}
		t.Skipf("SKIPPED, NOT TESTED: %s", msg)
	}
	return p
}

func TestLibcoapRequests(t *testing.T) {
	bin := testutil.RequireCoAPClient(t)
	h := newFakeHost()
	h.Freeze("Pressure")
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	base := "coap://" + d.Addr().String()
	tests := []struct {
		name     string
		args     []string
		path     string
		want     string // exact output; with contains, a substring
		contains bool
		param    string // parameter to check afterwards
		value    string
	}{
		{name: "get text", args: []string{"-m", "get"}, path: "/params/Temperature", want: "21.5"},
		{name: "get json", args: []string{"-m", "get", "-A", "50"}, path: "/params/Temperature",
			want: `{"name":"Temperature","value":"21.5","type":"FLOAT"}`},
		{name: "get text explicitly", args: []string{"-m", "get", "-A", "0"}, path: "/params/SerialNumber", want: "SN-1"},
		{name: "get unacceptable", args: []string{"-m", "get", "-A", "41"}, path: "/params/Temperature", want: "4.06 text/plain or application/json only"},
		{name: "get unknown", args: []string{"-m", "get"}, path: "/params/Nope", want: "4.04 unknown parameter"},
		{name: "well-known core", args: []string{"-m", "get"}, path: "/.well-known/core", contains: true,
			want: `</params/Temperature>;rt="FLOAT";if="sensor";obs,</params/Humidity>;rt="FLOAT";if="sensor";obs`},
		{name: "well-known lists device", args: []string{"-m", "get"}, path: "/.well-known/core", contains: true,
			want: `,</device>;ct=50`},
		{name: "device", args: []string{"-m", "get"}, path: "/device", contains: true,
			want: `{"name":"ModelName","value":"Sensor-9","type":"STRING","writable":false}`},
		{name: "put text", args: []string{"-m", "put", "-e", "23.5"}, path: "/params/Temperature", want: "",
			param: "Temperature", value: "23.5"},
		{name: "put json", args: []string{"-m", "put", "-t", "50", "-e", `{"value":61}`}, path: "/params/Humidity", want: "",
			param: "Humidity", value: "61"},
		{name: "put bad value", args: []string{"-m", "put", "-e", "hot"}, path: "/params/Temperature",
			want: `4.00 invalid value: "hot" is not a number`, param: "Temperature", value: "23.5"},
		{name: "put read-only", args: []string{"-m", "put", "-e", "X"}, path: "/params/SerialNumber",
			want: "4.05 SerialNumber: parameter is not writable", param: "SerialNumber", value: "SN-1"},
		{name: "put frozen", args: []string{"-m", "put", "-e", "1"}, path: "/params/Pressure",
			want: "4.05 Pressure: parameter is frozen by a rule", param: "Pressure", value: "1013.25"},
		{name: "put unknown", args: []string{"-m", "put", "-e", "1"}, path: "/params/Nope", want: "4.04 unknown parameter"},
		{name: "put xml", args: []string{"-m", "put", "-t", "41", "-e", "<v/>"}, path: "/params/Temperature",
			want: "4.15 text/plain or application/json only"},
		{name: "post", args: []string{"-m", "post", "-e", "1"}, path: "/params/Temperature", want: "4.05 GET or PUT only"},
		{name: "delete", args: []string{"-m", "delete"}, path: "/params/Temperature", want: "4.05 GET or PUT only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(slices.Clone(tt.args), "-B", breakAfter, base+tt.path)
			out := strings.TrimSpace(coapClient(t, bin, args...))
			if tt.contains && !strings.Contains(out, tt.want) || !tt.contains && out != tt.want {
				t.Errorf("coap-client %s\n got: %q\nwant: %q", strings.Join(args, " "), out, tt.want)
			}
			if tt.param != "" {
				if v := h.Params().Value(tt.param); v != tt.value {
					t.Errorf("%s = %q, want %q", tt.param, v, tt.value)
				}
			}
		})
	}
	if !h.logged("IN", "PUT", "path=/params/Temperature", "23.5") || !h.logged("OUT", "GET", "code=2.05", "cf=40") {
		t.Errorf("log lacks the exchanges: %+v", h.Entries())
	}
}

func TestLibcoapFailResponse(t *testing.T) {
	bin := testutil.RequireCoAPClient(t)
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	base := "coap://" + d.Addr().String()
	h.SetFail(true)
	for _, args := range [][]string{
		{"-m", "get", base + "/params/Temperature"},
		{"-m", "get", base + "/.well-known/core"},
		{"-m", "put", "-e", "1", base + "/params/Temperature"},
	} {
		if out := coapClient(t, bin, append(args, "-B", breakAfter)...); !strings.HasPrefix(out, "5.00") {
			t.Errorf("%v under failResponse: %q", args, out)
		}
	}
	h.SetFail(false)
	if out := strings.TrimSpace(coapClient(t, bin, "-B", breakAfter, base+"/params/Temperature")); out != "21.5" {
		t.Errorf("after failResponse off: %q", out)
	}
}

var notification = regexp.MustCompile(`c:2\.05 i:[0-9a-f]+ \{[0-9a-f]*\} \[ Observe:(\d+), Content-Format:text/plain \] :: '([^']*)'`)

func TestLibcoapObserve(t *testing.T) {
	bin := testutil.RequireCoAPClient(t)
	h := newFakeHost()
	d := startDevice(t, &Protocol{}, proto.Config{}, h)
	var out testutil.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), clientDeadline)
	defer cancel()
	// Observe for 10 s, then coap-client deregisters and exits on its own.
	// coap-client cannot be told to deregister earlier, so its window has to
	// hold the three notifications below: 10 s is room for a loaded machine
	// to deliver three datagrams, at the price of 10 s of test time.
	cmd := exec.CommandContext(ctx, bin, "-v", "6", "-s", "10", "-B", breakAfter, "coap://"+d.Addr().String()+"/params/Temperature")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	seen := func(v string) func() bool {
		return func() bool {
			for _, m := range notification.FindAllStringSubmatch(out.String(), -1) {
				if m[2] == v {
					return true
				}
			}
			return false
		}
	}
	testutil.Eventually(t, testutil.MinDeadline, "the registration response", seen("21.5"))
	for _, v := range []string{"30.5", "31", "-2.25"} {
		d.Changed("Temperature", v)
		testutil.Eventually(t, testutil.MinDeadline, "coap-client to print notification "+v, seen(v))
	}
	if err := <-exited; err != nil {
		t.Fatalf("coap-client: %v\n%s", err, out.String())
	}

	var values []string
	var last uint64
	for i, m := range notification.FindAllStringSubmatch(out.String(), -1) {
		seq, _ := strconv.ParseUint(m[1], 10, 32)
		if i > 0 && seq <= last {
			t.Errorf("Observe %d after %d", seq, last)
		}
		last = seq
		values = append(values, m[2])
	}
	// The last line is the answer to the deregistering GET, without Observe.
	if want := []string{"21.5", "30.5", "31", "-2.25"}; !slices.Equal(values, want) {
		t.Errorf("coap-client saw %q, want %q\n%s", values, want, out.String())
	}
	testutil.Eventually(t, testutil.MinDeadline, "the observation to end", func() bool { return observers(d) == 0 })
	if !h.logged("IN", "CANCEL", "observe=1") {
		t.Errorf("no deregistration logged: %+v", h.Entries())
	}
}

func TestLibcoapDTLS(t *testing.T) {
	const identity, key = "sensor-17", "s3cret-psk-key"
	pki := newTestPKI(t)
	tests := []struct {
		name string
		bin  string
		cfg  proto.Config
		args []string
	}{
		{"psk openssl", "coap-client-openssl",
			proto.Config{SecurityMode: proto.SecurityPSK, PSKID: identity, PSKKey: hex.EncodeToString([]byte(key))},
			[]string{"-u", identity, "-k", key}},
		{"psk gnutls", "coap-client-gnutls",
			proto.Config{SecurityMode: proto.SecurityPSK, PSKID: identity, PSKKey: hex.EncodeToString([]byte(key))},
			[]string{"-u", identity, "-k", key}},
		{"x509 openssl", "coap-client-openssl",
			proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: pki.serverPEM},
			[]string{"-C", pki.caPEM}},
		{"x509 gnutls", "coap-client-gnutls",
			proto.Config{SecurityMode: proto.SecurityX509, AuthKeyStorePath: pki.serverPEM},
			[]string{"-C", pki.caPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := requireBinary(t, tt.bin)
			h := newFakeHost()
			d := startDevice(t, &Protocol{}, tt.cfg, h)
			base := "coaps://" + d.Addr().String()
			run := func(args ...string) string {
				return strings.TrimSpace(coapClient(t, bin, append(append(slices.Clone(tt.args), "-B", breakAfter), args...)...))
			}
			if out := run(base + "/params/Temperature"); out != "21.5" {
				t.Errorf("GET over DTLS: %q", out)
			}
			if out := run("-m", "put", "-e", "19.5", base+"/params/Temperature"); out != "" || h.Params().Value("Temperature") != "19.5" {
				t.Errorf("PUT over DTLS: %q, Temperature %s", out, h.Params().Value("Temperature"))
			}
			if out := run("-A", "50", base+"/params/Temperature"); !strings.Contains(out, `"value":"19.5"`) {
				t.Errorf("GET json over DTLS: %q", out)
			}
		})
	}

	t.Run("psk wrong key", func(t *testing.T) {
		bin := requireBinary(t, "coap-client-openssl")
		d := startDevice(t, &Protocol{}, proto.Config{SecurityMode: proto.SecurityPSK, PSKID: identity,
			PSKKey: hex.EncodeToString([]byte(key))}, newFakeHost())
		// Unanswered by design, so it ends by coap-client giving up: a short
		// -B is the case, and passing does not depend on speed.
		out := coapClient(t, bin, "-u", identity, "-k", "wrong-key", "-B", "3", "coaps://"+d.Addr().String()+"/params/Temperature")
		if strings.Contains(out, "21.5") {
			t.Errorf("a wrong key got an answer: %q", out)
		}
	})
}
