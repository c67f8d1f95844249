package results_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
	"cpesuite/internal/testutil"
)

// clickHouseDB creates a database of its own for the test on the local
// server and returns a DSN naming it; the database is dropped at cleanup.
func clickHouseDB(t testing.TB) string {
	addr := testutil.RequireClickHouse(t)
	admin, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, ReadTimeout: time.Minute, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	db := "cpesuite_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
	defer cancel()
	if err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.MinDeadline)
		defer cancel()
		if err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Errorf("dropping database %s: %v", db, err)
		}
	})
	return "clickhouse://" + addr + "/" + db
}

func newClickHouse(t *testing.T) results.Store {
	s, err := results.OpenClickHouse(clickHouseDB(t), results.ClickHouseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestClickHouseConformance(t *testing.T) {
	storetest.Run(t, newClickHouse)
}

func TestClickHouseUnreachable(t *testing.T) {
	// Nothing listens on a fresh FreeAddr port.
	const password = "s3cret-pw"
	dsn := "clickhouse://default:" + password + "@" + testutil.FreeAddr(t) + "/default"
	s, err := results.OpenClickHouse(dsn, results.ClickHouseOptions{DialTimeout: time.Second})
	if err != nil {
		t.Fatalf("OpenClickHouse must not need the server: %v", err)
	}
	defer s.Close()
	st := s.Check(context.Background())
	if strings.Contains(st.Reason, password) || strings.Contains(st.Reason, dsn) {
		t.Errorf("reason %q names the DSN or password", st.Reason)
	}
	storetest.RunUnavailable(t, s)
}

func TestOpenClickHouseRefuses(t *testing.T) {
	for _, dsn := range []string{"http://127.0.0.1:8123/default", "clickhouse://u:pw@[::1/x"} {
		_, err := results.OpenClickHouse(dsn, results.ClickHouseOptions{})
		if err == nil {
			t.Errorf("%s: want an error", dsn)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: error %q names the password", dsn, err)
		}
	}
}

// Two processes writing the same keys at once may both find them absent;
// ReplacingMergeTree and FINAL still read each key once.
func TestClickHouseTwoWritersReadOnce(t *testing.T) {
	dsn := clickHouseDB(t)
	var stores [2]*results.ClickHouse
	for i := range stores {
		s, err := results.OpenClickHouse(dsn, results.ClickHouseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	ctx := context.Background()
	if err := stores[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	batch := storetest.Batch(42, 2000, 0)
	errs := make(chan error, len(stores))
	for _, s := range stores {
		go func() {
			_, err := s.Insert(ctx, batch)
			errs <- err
		}()
	}
	for range stores {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range stores {
		rows, err := s.Rows(ctx, 42)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(batch) {
			t.Errorf("store %d: %d rows, want %d", i, len(rows), len(batch))
		}
	}
	if st := stores[1].Check(ctx); st.State != results.StateUp {
		t.Errorf("Check of the second writer = %+v, want UP", st)
	}
}
