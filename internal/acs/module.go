package acs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"cpesuite/internal/platform/sqlstore"
)

// OpenDB opens the configured device store: PostgreSQL when configured,
// otherwise a SQLite file in dataDir.
func OpenDB(ctx context.Context, cfg Config, dataDir string) (*sqlstore.DB, error) {
	return sqlstore.OpenService(ctx, cfg.DBDialect, cfg.DBDSN, filepath.Join(dataDir, "acs.db"))
}

// PasswordFileName is the file in the data dir that keeps the generated CPE
// password; the TR-069 emulator of the same platform reads it.
const PasswordFileName = "acs-cpe-password"

// EnsurePassword returns the configured CPE password, or the one kept in
// dataDir, generating and storing it on first start. An ACS must not run
// with a guessable default password, and must not forget it on restart.
func EnsurePassword(configured, dataDir string) (password, source string, err error) {
	if configured != "" {
		return configured, "CPESUITE_ACS_PASSWORD", nil
	}
	path := filepath.Join(dataDir, PasswordFileName)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		pw := strings.TrimSpace(string(b))
		if pw == "" {
			return "", "", fmt.Errorf("%s is empty; delete it to generate a new password", path)
		}
		return pw, path, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	}
	pw := rand.Text()
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("storing the generated CPE password: %w", err)
	}
	return pw, path, nil
}
