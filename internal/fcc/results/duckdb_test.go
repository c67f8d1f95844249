package results_test

import (
	"path/filepath"
	"testing"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/fcc/results/storetest"
)

func newDuckDB(t *testing.T) results.Store {
	s, err := results.OpenDuckDB(filepath.Join(t.TempDir(), results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDuckDBConformance(t *testing.T) {
	storetest.Run(t, newDuckDB)
}
