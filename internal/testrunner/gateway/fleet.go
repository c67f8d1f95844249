package gateway

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

//go:embed migrations
var migrations embed.FS

// Stand is a registered worker.
type Stand struct {
	Name      string    `json:"name"`
	BaseURL   string    `json:"base_url"`
	Display   string    `json:"display"`
	NoVNCURL  string    `json:"novnc_url"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Profile is an env profile: worker settings applied before a dispatch.
type Profile struct {
	Name      string            `json:"name"`
	Settings  map[string]string `json:"settings"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

var (
	// Names become Docker stack and host names (tr-worker-<name>,
	// mcp-tr-emul-<name>), hence lower case.
	nameRe       = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,50}$`)
	settingKeyRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	// stackNameRe is what Portainer and Docker Compose accept as names.
	stackNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
)

const (
	maxSettings     = 100
	maxSettingValue = 4096
	maxDisplay      = 200
)

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func checkName(n string) error {
	if !nameRe.MatchString(n) {
		return errf("must be 1-51 lower-case letters, digits, '-' or '_', starting with a letter or digit")
	}
	return nil
}

func invalidField(field string, err error) error {
	return apperr.Invalid("INVALID_"+strings.ToUpper(field), "%s: %v", field, err)
}

// validate checks a stand as it is about to be stored.
func (s *Stand) validate() error {
	if err := checkName(s.Name); err != nil {
		return invalidField("name", err)
	}
	if err := checkBaseURL(s.BaseURL); err != nil {
		return invalidField("base_url", err)
	}
	if s.NoVNCURL != "" {
		if err := checkBaseURL(s.NoVNCURL); err != nil {
			return invalidField("novnc_url", err)
		}
	}
	if len([]rune(s.Display)) > maxDisplay {
		return invalidField("display", errf("must be at most %d characters", maxDisplay))
	}
	return nil
}

func (p *Profile) validate() error {
	if err := checkName(p.Name); err != nil {
		return invalidField("name", err)
	}
	if p.Settings == nil {
		return invalidField("settings", errf("required (an object of string values)"))
	}
	if len(p.Settings) > maxSettings {
		return invalidField("settings", errf("at most %d keys", maxSettings))
	}
	for k, v := range p.Settings {
		if !settingKeyRe.MatchString(k) {
			return invalidField("settings", errf("key %q must be lower-case letters, digits and '_'", k))
		}
		if len(v) > maxSettingValue {
			return invalidField("settings", errf("value of %q longer than %d bytes", k, maxSettingValue))
		}
	}
	return nil
}

// fleet stores stands and profiles.
type fleet struct{ db *sqlstore.DB }

func openFleet(ctx context.Context, db *sqlstore.DB) (*fleet, error) {
	if err := sqlstore.Migrate(ctx, db, "gateway-fleet", migrations); err != nil {
		return nil, err
	}
	return &fleet{db: db}, nil
}

func standNotFound(name string) error {
	return apperr.NotFound("STAND_NOT_FOUND", "stand %q not found", name)
}

func profileNotFound(name string) error {
	return apperr.NotFound("PROFILE_NOT_FOUND", "env profile %q not found", name)
}

const standCols = `name, base_url, display, novnc_url, enabled, created_at, updated_at`

func scanStand(row interface{ Scan(...any) error }) (Stand, error) {
	var s Stand
	err := row.Scan(&s.Name, &s.BaseURL, &s.Display, &s.NoVNCURL, &s.Enabled, &s.CreatedAt, &s.UpdatedAt)
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, err
}

func (f *fleet) stands(ctx context.Context) ([]Stand, error) {
	rows, err := f.db.QueryContext(ctx, `SELECT `+standCols+` FROM gw_stands ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing stands: %w", err)
	}
	defer rows.Close()
	out := []Stand{}
	for rows.Next() {
		s, err := scanStand(rows)
		if err != nil {
			return nil, fmt.Errorf("listing stands: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (f *fleet) stand(ctx context.Context, name string) (Stand, error) {
	s, err := scanStand(f.db.QueryRowContext(ctx, f.db.Rebind(`SELECT `+standCols+` FROM gw_stands WHERE name = ?`), name))
	if errors.Is(err, sql.ErrNoRows) {
		return Stand{}, standNotFound(name)
	}
	if err != nil {
		return Stand{}, fmt.Errorf("reading stand %s: %w", name, err)
	}
	return s, nil
}

// upsertStand stores s and reports whether it was new.
func (f *fleet) upsertStand(ctx context.Context, s Stand, now time.Time) (Stand, bool, error) {
	if err := s.validate(); err != nil {
		return Stand{}, false, err
	}
	var created bool
	err := f.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, f.db.Rebind(`UPDATE gw_stands SET base_url = ?, display = ?, novnc_url = ?, enabled = ?, updated_at = ? WHERE name = ?`),
			s.BaseURL, s.Display, s.NoVNCURL, s.Enabled, now, s.Name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		created = true
		_, err = tx.ExecContext(ctx, f.db.Rebind(`INSERT INTO gw_stands (`+standCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			s.Name, s.BaseURL, s.Display, s.NoVNCURL, s.Enabled, now, now)
		return err
	})
	if sqlstore.IsUniqueViolation(err) {
		// A concurrent insert of the same name won; ours becomes an update.
		return f.upsertStand(ctx, s, now)
	}
	if err != nil {
		return Stand{}, false, fmt.Errorf("storing stand %s: %w", s.Name, err)
	}
	out, err := f.stand(ctx, s.Name)
	return out, created, err
}

func (f *fleet) deleteStand(ctx context.Context, name string) error {
	res, err := f.db.ExecContext(ctx, f.db.Rebind(`DELETE FROM gw_stands WHERE name = ?`), name)
	if err != nil {
		return fmt.Errorf("deleting stand %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return standNotFound(name)
	}
	return nil
}

func (f *fleet) profiles(ctx context.Context) ([]Profile, error) {
	rows, err := f.db.QueryContext(ctx, `SELECT name, settings, created_at, updated_at FROM gw_profiles ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing profiles: %w", err)
	}
	defer rows.Close()
	out := []Profile{}
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func scanProfile(row interface{ Scan(...any) error }) (Profile, error) {
	var p Profile
	var raw string
	if err := row.Scan(&p.Name, &raw, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(raw), &p.Settings); err != nil {
		return p, fmt.Errorf("profile %s: stored settings unreadable: %w", p.Name, err)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

func (f *fleet) profile(ctx context.Context, name string) (Profile, error) {
	p, err := scanProfile(f.db.QueryRowContext(ctx, f.db.Rebind(`SELECT name, settings, created_at, updated_at FROM gw_profiles WHERE name = ?`), name))
	if errors.Is(err, sql.ErrNoRows) {
		return Profile{}, profileNotFound(name)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("reading profile %s: %w", name, err)
	}
	return p, nil
}

// putProfile creates or replaces p and reports whether it was new.
func (f *fleet) putProfile(ctx context.Context, p Profile, now time.Time) (Profile, bool, error) {
	if err := p.validate(); err != nil {
		return Profile{}, false, err
	}
	raw, _ := json.Marshal(p.Settings)
	var created bool
	err := f.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, f.db.Rebind(`UPDATE gw_profiles SET settings = ?, updated_at = ? WHERE name = ?`), string(raw), now, p.Name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		created = true
		_, err = tx.ExecContext(ctx, f.db.Rebind(`INSERT INTO gw_profiles (name, settings, created_at, updated_at) VALUES (?, ?, ?, ?)`), p.Name, string(raw), now, now)
		return err
	})
	if sqlstore.IsUniqueViolation(err) {
		return f.putProfile(ctx, p, now)
	}
	if err != nil {
		return Profile{}, false, fmt.Errorf("storing profile %s: %w", p.Name, err)
	}
	out, err := f.profile(ctx, p.Name)
	return out, created, err
}

func (f *fleet) deleteProfile(ctx context.Context, name string) error {
	res, err := f.db.ExecContext(ctx, f.db.Rebind(`DELETE FROM gw_profiles WHERE name = ?`), name)
	if err != nil {
		return fmt.Errorf("deleting profile %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return profileNotFound(name)
	}
	return nil
}
