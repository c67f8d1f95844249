package skip

import "testing"

func TestService(t *testing.T) {
	t.Log("probing")
	t.Skipf("SKIPPED, NOT TESTED: %s", "PostgreSQL is not reachable at 127.0.0.1:5432")
}

func TestRuns(t *testing.T) {}

func TestDialects(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {})
	t.Run("mariadb", func(t *testing.T) { t.Skip("the store supports SQLite and PostgreSQL") })
}
