// Package testutil gives tests access to the real backing services of the
// machine (PostgreSQL, MariaDB, NATS, Mosquitto, ClickHouse, Chromium,
// libcoap's coap-client).
//
// Each Require function returns the address to use. When the service is not
// reachable the test is skipped with a loud message, unless
// CPESUITE_REQUIRE_SERVICES=1 (CI sets it), in which case the test fails:
// CI must never go green because a service silently was not there.
package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Service describes one backing service and how tests reach it.
type Service struct {
	Name string
	// Env overrides the default address or DSN.
	Env string
	// Default is used when Env is unset.
	Default string
	// probe returns nil when the service answers.
	probe func(addr string) error
}

var (
	Postgres = Service{Name: "PostgreSQL", Env: "CPESUITE_TEST_POSTGRES_DSN",
		Default: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", probe: dialURLHost("127.0.0.1:5432")}
	MariaDB = Service{Name: "MariaDB", Env: "CPESUITE_TEST_MARIADB_DSN",
		Default: "root@tcp(127.0.0.1:3306)/test?parseTime=true&multiStatements=true", probe: dialMySQLHost}
	NATS = Service{Name: "NATS", Env: "CPESUITE_TEST_NATS_URL",
		Default: "nats://127.0.0.1:4222", probe: dialURLHost("127.0.0.1:4222")}
	Mosquitto = Service{Name: "Mosquitto", Env: "CPESUITE_TEST_MQTT_URL",
		Default: "tcp://127.0.0.1:1883", probe: dialURLHost("127.0.0.1:1883")}
	ClickHouse = Service{Name: "ClickHouse", Env: "CPESUITE_TEST_CLICKHOUSE_ADDR",
		Default: "127.0.0.1:9000", probe: dialTCP}
	Chromium = Service{Name: "Chromium", Env: "CPESUITE_TEST_CHROMIUM",
		Default: "chromium", probe: lookPath}
	CoAPClient = Service{Name: "coap-client (libcoap3-bin)", Env: "CPESUITE_TEST_COAP_CLIENT",
		Default: "coap-client-notls", probe: lookPath}
)

// RequirePostgres returns a DSN for the local PostgreSQL test database.
func RequirePostgres(t testing.TB) string { return Require(t, Postgres) }

// RequireMariaDB returns a go-sql-driver/mysql DSN for the local MariaDB test database.
func RequireMariaDB(t testing.TB) string { return Require(t, MariaDB) }

// RequireNATS returns the URL of the local nats-server (JetStream enabled).
func RequireNATS(t testing.TB) string { return Require(t, NATS) }

// RequireMosquitto returns the URL of the local MQTT broker.
func RequireMosquitto(t testing.TB) string { return Require(t, Mosquitto) }

// RequireClickHouse returns the native-protocol address of the local ClickHouse.
func RequireClickHouse(t testing.TB) string { return Require(t, ClickHouse) }

// RequireChromium returns the path of the Chromium binary.
func RequireChromium(t testing.TB) string {
	name := Require(t, Chromium)
	p, _ := exec.LookPath(name)
	return p
}

// RequireCoAPClient returns the path of libcoap's coap-client (no TLS build).
func RequireCoAPClient(t testing.TB) string {
	name := Require(t, CoAPClient)
	p, _ := exec.LookPath(name)
	return p
}

// ServicesRequired reports whether CI demands every backing service.
func ServicesRequired() bool { return os.Getenv("CPESUITE_REQUIRE_SERVICES") == "1" }

type probeResult struct {
	once sync.Once
	err  error
}

var probes sync.Map // Service.Name+addr -> *probeResult

// Require returns the service's address, or skips/fails the test when it is
// not reachable. The probe runs once per process and address.
func Require(t testing.TB, s Service) string {
	t.Helper()
	addr := s.Default
	if v := os.Getenv(s.Env); v != "" {
		addr = v
	}
	v, _ := probes.LoadOrStore(s.Name+"|"+addr, &probeResult{})
	pr := v.(*probeResult)
	pr.once.Do(func() { pr.err = s.probe(addr) })
	if pr.err != nil {
		msg := fmt.Sprintf("%s is not reachable at %s (%v); set %s or start it", s.Name, addr, pr.err, s.Env)
		if ServicesRequired() {
			t.Fatalf("CPESUITE_REQUIRE_SERVICES=1: %s", msg)
		}
		t.Skipf("SKIPPED, NOT TESTED: %s", msg)
	}
	return addr
}

func dialTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// dialURLHost dials the host:port of a URL-shaped address, falling back to
// def when the address has no recognisable host part.
func dialURLHost(def string) func(string) error {
	return func(addr string) error {
		host := def
		if i := strings.Index(addr, "://"); i >= 0 {
			rest := addr[i+3:]
			if at := strings.LastIndex(rest, "@"); at >= 0 {
				rest = rest[at+1:]
			}
			if j := strings.IndexAny(rest, "/?"); j >= 0 {
				rest = rest[:j]
			}
			if rest != "" {
				host = rest
			}
		}
		return dialTCP(host)
	}
}

// dialMySQLHost extracts the address from a go-sql-driver DSN: user@tcp(host:port)/db.
func dialMySQLHost(dsn string) error {
	host := "127.0.0.1:3306"
	if i := strings.Index(dsn, "tcp("); i >= 0 {
		if j := strings.Index(dsn[i:], ")"); j > 0 {
			host = dsn[i+4 : i+j]
		}
	}
	return dialTCP(host)
}

func lookPath(name string) error {
	_, err := exec.LookPath(name)
	return err
}
