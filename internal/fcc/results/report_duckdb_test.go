package results_test

import (
	"testing"

	"cpesuite/internal/fcc/results/storetest"
)

func TestDuckDBReports(t *testing.T) {
	storetest.RunReports(t, newDuckDB)
}
