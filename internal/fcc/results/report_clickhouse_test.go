package results_test

import (
	"testing"

	"cpesuite/internal/fcc/results/storetest"
)

func TestClickHouseReports(t *testing.T) {
	storetest.RunReports(t, newClickHouse)
}
