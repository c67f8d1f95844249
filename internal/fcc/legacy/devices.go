package legacy

import (
	"context"
	"strings"

	"cpesuite/internal/platform/sqlstore"
)

// ACSDevices resolves serials against the ACS device tables the campaign
// service reads (acs_devices), case-insensitively as the fleet resolver
// matches serials; 500 serials per statement.
func ACSDevices(db *sqlstore.DB) DeviceLookup {
	return func(ctx context.Context, serials []string) (map[string]int64, error) {
		byUpper := make(map[string][]string, len(serials))
		for _, s := range serials {
			u := strings.ToUpper(s)
			byUpper[u] = append(byUpper[u], s)
		}
		keys := make([]string, 0, len(byUpper))
		for u := range byUpper {
			keys = append(keys, u)
		}
		out := make(map[string]int64, len(serials))
		for start := 0; start < len(keys); start += 500 {
			part := keys[start:min(start+500, len(keys))]
			args := make([]any, len(part))
			for i, k := range part {
				args[i] = k
			}
			rows, err := db.QueryContext(ctx, db.Rebind(`SELECT id, serial FROM acs_devices WHERE UPPER(serial) IN (`+
				strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`), args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var id int64
				var serial string
				if err := rows.Scan(&id, &serial); err != nil {
					rows.Close()
					return nil, err
				}
				for _, s := range byUpper[strings.ToUpper(serial)] {
					out[s] = id
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}
