package accounts

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// Actions this package records. The gateway records its own (for example
// profile_upsert, stand_upsert, run_dispatch) through Record.
const (
	ActionLogin             = "login"
	ActionLoginFailed       = "login_failed"
	ActionLoginRateLimited  = "login_rate_limited"
	ActionLogout            = "logout"
	ActionUserCreate        = "user_create"
	ActionUserDelete        = "user_delete"
	ActionUserResetPassword = "user_reset_password"
)

// Activity list bounds.
const (
	DefaultActivityLimit = 200
	MaxActivityLimit     = 1000
)

// Field bounds of stored entries. Names match the column sizes; target and
// detail are free text kept short enough to read in a table.
const (
	maxNameField = 64
	maxTextField = 1024
)

// recordTimeout bounds an audit write that outlives its request.
const recordTimeout = 5 * time.Second

// Entry is one row of the audit log. Username is the actor; for a failed
// login it is the name that was tried.
type Entry struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Username   string    `json:"username"`
	Action     string    `json:"action"`
	Target     string    `json:"target"`
	Detail     string    `json:"detail"`
	ClientAddr string    `json:"client_addr"`
	Success    bool      `json:"success"`
}

// Record appends e to the audit log; ID is ignored and a zero At means
// now. It never fails the caller: the action it records has already
// happened, so a write error is logged instead. Fields are cleaned and
// bounded, because the gateway records values that come from requests.
// Callers must not put passwords or tokens in any field.
func (s *Service) Record(ctx context.Context, e Entry) {
	if e.At.IsZero() {
		e.At = s.now()
	}
	// A client that hangs up must not erase the trace of what it did.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	_, err := s.db.ExecContext(ctx, s.db.Rebind(
		`INSERT INTO gw_activity (at, username, action, target, detail, client_addr, success)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`),
		millis(e.At), clean(e.Username, maxNameField), clean(e.Action, maxNameField),
		clean(e.Target, maxTextField), clean(e.Detail, maxTextField), clean(e.ClientAddr, maxNameField), e.Success)
	if err != nil {
		s.log.ErrorContext(ctx, "writing the gateway audit log failed",
			"action", clean(e.Action, maxNameField), "username", clean(e.Username, maxNameField), "error", err)
	}
}

// clean makes s storable in every dialect (valid UTF-8, no NUL, which
// PostgreSQL refuses in text) and cuts it to at most n characters.
func clean(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Filter selects audit entries. Empty strings match everything; Limit 0
// means DefaultActivityLimit.
type Filter struct {
	Username, Action string
	Limit, Offset    int
}

// Activity returns the entries matching f, newest first.
func (s *Service) Activity(ctx context.Context, f Filter) ([]Entry, error) {
	if f.Limit == 0 {
		f.Limit = DefaultActivityLimit
	}
	if f.Limit < 1 || f.Limit > MaxActivityLimit {
		return nil, apperr.Invalid("INVALID_LIMIT", "limit must be between 1 and %d", MaxActivityLimit)
	}
	if f.Offset < 0 {
		return nil, apperr.Invalid("INVALID_OFFSET", "offset must not be negative")
	}
	var (
		where []string
		args  []any
	)
	if f.Username != "" {
		where, args = append(where, "username = ?"), append(args, f.Username)
	}
	if f.Action != "" {
		where, args = append(where, "action = ?"), append(args, f.Action)
	}
	q := "SELECT id, at, username, action, target, detail, client_addr, success FROM gw_activity"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// The id breaks ties between entries of the same millisecond.
	q += " ORDER BY at DESC, id DESC LIMIT ? OFFSET ?"
	args = append(args, f.Limit, f.Offset)
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("listing activity: %w", err)
	}
	defer rows.Close()
	entries := []Entry{}
	for rows.Next() {
		var (
			e  Entry
			at int64
		)
		if err := rows.Scan(&e.ID, &at, &e.Username, &e.Action, &e.Target, &e.Detail, &e.ClientAddr, &e.Success); err != nil {
			return nil, fmt.Errorf("listing activity: %w", err)
		}
		e.At = fromMillis(at)
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing activity: %w", err)
	}
	return entries, nil
}
