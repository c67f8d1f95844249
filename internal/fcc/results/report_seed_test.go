package results

import (
	"context"
	"fmt"
)

// SeedReportRows fills both tables with n rows in total (half each) in the
// server with one INSERT ... SELECT per table, for the report benchmarks:
// 100 runs of 10 campaigns over 5 domains, 5,000 serials a run, 10
// iterations; every tenth row WAN_BUSY without a measurement, every tenth
// BELOW_TIER; every seventh latency row without an average.
func SeedReportRows(ctx context.Context, s Store, n int) error {
	half := n / 2
	perRun := max(half/100, 1)
	switch st := s.(type) {
	case *DuckDB:
		common := func(dir, typ string) string {
			return fmt.Sprintf(`'1.5', '%s', i // %d // 10 + 1, i // %d, CAST(i %% 10 + 1 AS INTEGER), i // %d %% 5, 1, i %% %d // 10,
				'SER-' || CAST(i %% %d // 10 AS VARCHAR), '', '%s', 'http://x', 100000, 1700000000000000 + i * 1000, 1700000000000000 + i * 1000 + 10000000,
				CASE i %% 10 WHEN 0 THEN 'WAN_BUSY' WHEN 1 THEN 'BELOW_TIER' ELSE 'OK' END, '', NULL, NULL, false, 1, 'ACS', NULL, NULL, 1700000000000000`,
				typ, perRun, perRun, perRun, perRun, perRun, dir)
		}
		if _, err := st.db.ExecContext(ctx, `INSERT INTO `+TableSpeed+` (`+columnList(TableSpeed)+`) SELECT `+common("DOWNLOAD", "SPEED")+`,
			CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 1000) * 100.0 END, 'FILE_BASED', NULL, 0, 0, 0, NULL, NULL, NULL, 1, NULL FROM range(?) t(i)`, half); err != nil {
			return err
		}
		_, err := st.db.ExecContext(ctx, `INSERT INTO `+TableLatency+` (`+columnList(TableLatency)+`) SELECT `+common("PING", "LATENCY")+`,
			CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 50) * 1.0 END, 1.0, 100.0, 10, 0 FROM range(?) t(i)`, n-half)
		return err
	case *ClickHouse:
		common := func(dir, typ string) string {
			return fmt.Sprintf(`'1.5', '%s', toInt64(intDiv(intDiv(number, %d), 10) + 1), toInt64(intDiv(number, %d)), toInt32(number %% 10 + 1),
				toInt64(intDiv(number, %d) %% 5), toInt64(1), toInt64(intDiv(number %% %d, 10)), concat('SER-', toString(intDiv(number %% %d, 10))), '', '%s', 'http://x',
				toNullable(toInt64(100000)), toInt64(1700000000000000 + number * 1000), toInt64(1700000000000000 + number * 1000 + 10000000),
				multiIf(number %% 10 = 0, 'WAN_BUSY', number %% 10 = 1, 'BELOW_TIER', 'OK'), '', CAST(NULL AS Nullable(Int64)), CAST(NULL AS Nullable(Int64)),
				toUInt8(0), toInt32(1), 'ACS', CAST(NULL AS Nullable(Int64)), CAST(NULL AS Nullable(Int64)), toInt64(1700000000000000)`,
				typ, perRun, perRun, perRun, perRun, perRun, dir)
		}
		if err := st.conn.Exec(ctx, `INSERT INTO `+TableSpeed+` (`+columnList(TableSpeed)+`) SELECT `+common("DOWNLOAD", "SPEED")+`,
			if(number % 10 = 0, CAST(NULL AS Nullable(Float64)), toNullable(toFloat64((number % 1000) * 100))), toNullable('FILE_BASED'),
			CAST(NULL AS Nullable(Int64)), toNullable(toInt64(0)), toNullable(toInt64(0)), toNullable(toInt64(0)), CAST(NULL AS Nullable(Int64)),
			CAST(NULL AS Nullable(Int64)), CAST(NULL AS Nullable(Int64)), toNullable(toInt32(1)), CAST(NULL AS Nullable(String))
			FROM system.numbers LIMIT `+fmt.Sprint(half)); err != nil {
			return err
		}
		return st.conn.Exec(ctx, `INSERT INTO `+TableLatency+` (`+columnList(TableLatency)+`) SELECT `+common("PING", "LATENCY")+`,
			if(number % 7 = 0, CAST(NULL AS Nullable(Float64)), toNullable(toFloat64(number % 50))), toNullable(toFloat64(1)), toNullable(toFloat64(100)),
			toNullable(toInt32(10)), toNullable(toInt32(0)) FROM system.numbers LIMIT `+fmt.Sprint(n-half))
	}
	return fmt.Errorf("SeedReportRows: %T is not an engine", s)
}
