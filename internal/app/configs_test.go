package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/testutil"
)

// TestConfigsRunAloneDualMode runs `cpesuite run configs` as its own
// service: SERVER_PORT names its HTTPS port (SERVER_SSL_ENABLED) and
// SERVER_HTTP_PORT a plain HTTP port with the same routes.
func TestConfigsRunAloneDualMode(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeSelfSigned(t, dir)
	_, httpsPort, _ := net.SplitHostPort(testutil.FreeAddr(t))
	_, httpPort, _ := net.SplitHostPort(testutil.FreeAddr(t))
	env := map[string]string{"CPESUITE_DATA_DIR": dir, "CPESUITE_LOG_FORMAT": "json",
		"SERVER_PORT": httpsPort, "SERVER_HTTP_PORT": httpPort, "SERVER_SSL_ENABLED": "true",
		"SERVER_SSL_CERTIFICATE": cert, "SERVER_SSL_CERTIFICATE_PRIVATE_KEY": key,
		"CFG_BOOTSTRAP_ADMIN_PASSWORD": "Bootstrap-Passw0rd!", "LOGGING_LEVEL": "WARN"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errb testutil.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- CLI(ctx, []string{"run", "configs"}, io.Discard, &errb, envMap(env)) }()

	client := &http.Client{Timeout: testutil.MinDeadline, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(url string) int {
		resp, err := client.Get(url)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	testutil.Eventually(t, testutil.MinDeadline, "HTTPS on SERVER_PORT", func() bool {
		return get("https://127.0.0.1:"+httpsPort+"/configs-service/environment/snapshot") == 200
	})
	if code := get("http://127.0.0.1:" + httpPort + "/configs-service/actuator/health/liveness"); code != 200 {
		t.Fatalf("plain HTTP on SERVER_HTTP_PORT: %d", code)
	}
	if code := get("http://127.0.0.1:" + httpsPort + "/configs-service/environment/snapshot"); code == 200 {
		t.Fatal("SERVER_PORT answered plain HTTP with SSL enabled")
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, errb.String())
	}
	logs := errb.String()
	if strings.Contains(logs, `"level":"INFO","msg":"cache snapshots published"`) {
		t.Error("LOGGING_LEVEL=WARN let the service's INFO lines through")
	}
	if strings.Contains(logs, "Bootstrap-Passw0rd!") {
		t.Error("the bootstrap password is in the log")
	}
	if _, err := os.Stat(filepath.Join(dir, "configs.db")); err != nil {
		t.Errorf("local profile did not use the data dir: %v", err)
	}
}

// TestConfigsRefusesBadJWTSecret: a short or non-base64 JWT_SECRET stops
// start-up with a message naming the variable, not the value.
func TestConfigsRefusesBadJWTSecret(t *testing.T) {
	for _, secret := range []string{"dG9vLXNob3J0", "%%%not-base64%%%"} {
		code, _, stderr := runCLI(context.Background(), []string{"run", "configs"}, map[string]string{"CPESUITE_DATA_DIR": t.TempDir(), "JWT_SECRET": secret})
		if code != 2 || !strings.Contains(stderr, "JWT_SECRET") || strings.Contains(stderr, secret) {
			t.Errorf("JWT_SECRET=%q: exit %d, stderr %q", secret, code, stderr)
		}
	}
}

func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestConfigsFirstAdminUnderUp: `cpesuite up` on a fresh data dir creates
// the configuration service's first administrator with a generated
// password in <data-dir>/configs-admin-password (0600, named in the log,
// never printed), keeps using it on the next start, and `run configs`
// keeps the spec's rule: no password, no account, no file.
func TestConfigsFirstAdminUnderUp(t *testing.T) {
	start := func(t *testing.T, dir string, args ...string) (stop func() string, addr string) {
		addr = testutil.FreeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		env := map[string]string{"CPESUITE_DATA_DIR": dir, "CPESUITE_LOG_FORMAT": "json", "CPESUITE_CONFIGS_ADDR": addr, "SERVER_PORT": port,
			"CPESUITE_STOP_TIMEOUT": stopTimeout}
		ctx, cancel := context.WithCancel(context.Background())
		var errb testutil.SyncBuffer
		done := make(chan int, 1)
		go func() { done <- CLI(ctx, args, io.Discard, &errb, envMap(env)) }()
		testutil.Eventually(t, platformDeadline, "configs ready", func() bool { return strings.Contains(errb.String(), `"all modules ready"`) })
		return func() string {
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d; log:\n%s", code, errb.String())
			}
			return errb.String()
		}, addr
	}
	login := func(addr, pw string) (int, string) {
		resp, err := http.Post("http://"+addr+"/configs-service/auth/login", "application/json",
			strings.NewReader(`{"username":"admin","password":"`+pw+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, ConfigsAdminPasswordFile)

	stop, addr := start(t, dir, "up", "--only", "configs")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(file)
	pw := strings.TrimSpace(string(b))
	// The temporary password is right: the service asks for a new one.
	if code, body := login(addr, pw); code != 403 || !strings.Contains(body, "PASSWORD_CHANGE_REQUIRED") {
		t.Fatalf("login with the generated password: %d %s", code, body)
	}
	if code, _ := login(addr, pw+"x"); code != 401 {
		t.Fatalf("login with a wrong password: %d", code)
	}
	logs := stop()
	if strings.Contains(logs, pw) || !strings.Contains(logs, file) {
		t.Fatalf("the log must name the file and never the password:\n%s", logs)
	}

	// Second start: same file, same account, nothing regenerated.
	stop, _ = start(t, dir, "up", "--only", "configs")
	logs = stop()
	if b2, _ := os.ReadFile(file); string(b2) != string(b) {
		t.Fatal("the password file changed on the second start")
	}
	if strings.Contains(logs, "temporary password") {
		t.Fatal("a second start claimed to create the administrator again")
	}

	// run configs: the spec's rule.
	alone := t.TempDir()
	stop, addr = start(t, alone, "run", "configs")
	if code, _ := login(addr, "anything"); code != 401 {
		t.Fatalf("run configs without CFG_BOOTSTRAP_ADMIN_PASSWORD has an account: %d", code)
	}
	stop()
	if _, err := os.Stat(filepath.Join(alone, ConfigsAdminPasswordFile)); err == nil {
		t.Fatal("run configs generated a password file")
	}
}
