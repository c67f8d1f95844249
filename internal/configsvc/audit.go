package configsvc

import (
	"context"
	"log/slog"
	"strings"
	"time"
)

// builtinRedacted are the 18 field names whose values never reach the
// audit store, compared case-insensitively at any depth of the details.
// They cover what this service handles (passwords, tokens, one-time
// passwords) and the usual secret-bearing names of configuration payloads.
var builtinRedacted = []string{
	"password", "newPassword", "currentPassword", "oldPassword", "temporaryPassword", "passwd",
	"secret", "clientSecret", "token", "accessToken", "refreshToken", "idToken",
	"otp", "oneTimePassword", "apiKey", "authorization", "cookie", "privateKey",
}

// redactedValue replaces a redacted field's value.
const redactedValue = "******"

// auditor records audit events. A failure to record is logged and never
// fails the operation that was audited: the operation already happened.
type auditor struct {
	st     *store
	log    *slog.Logger
	redact map[string]bool
	now    func() time.Time
}

func newAuditor(st *store, extra []string, log *slog.Logger) *auditor {
	a := &auditor{st: st, log: log, redact: map[string]bool{}, now: time.Now}
	for _, f := range append(append([]string{}, builtinRedacted...), extra...) {
		if f = strings.TrimSpace(f); f != "" {
			a.redact[strings.ToLower(f)] = true
		}
	}
	return a
}

// record stores one event; details are redacted first.
func (a *auditor) record(ctx context.Context, actor Principal, action, target, outcome string, details map[string]any) {
	name := actor.Username
	if name == "" {
		name = "anonymous"
	}
	e := AuditEvent{OccurredAt: a.now(), Actor: name, Action: action, Target: target, Outcome: outcome,
		Details: a.redactMap(details), ClientIP: actor.ClientIP, RequestID: actor.Request}
	// The caller's request may be cancelled right after it answers; the
	// event must still be written.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.st.insertAudit(ctx, e); err != nil {
		a.log.Error("recording audit event", "action", action, "err", err)
	}
}

func (a *auditor) redactMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if a.redact[strings.ToLower(k)] {
			out[k] = redactedValue
			continue
		}
		out[k] = a.redactValue(v)
	}
	return out
}

func (a *auditor) redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return a.redactMap(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = a.redactValue(x)
		}
		return out
	}
	return v
}

// nextCleanup is the first 03:00 in loc strictly after now. On a day when
// 03:00 does not exist (a DST jump) time.Date normalises it forward.
func nextCleanup(now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	next := time.Date(l.Year(), l.Month(), l.Day(), 3, 0, 0, 0, loc)
	if !next.After(now) {
		next = time.Date(l.Year(), l.Month(), l.Day()+1, 3, 0, 0, 0, loc)
	}
	return next
}

// CleanupAudit deletes audit events older than the retention period and
// rows whose lifetime is over. It returns the audit events deleted.
func (s *Service) CleanupAudit(ctx context.Context) (int64, error) {
	now := s.now()
	if err := s.st.purgeExpired(ctx, now); err != nil {
		return 0, err
	}
	days := s.retentionDays
	if days == 0 {
		return 0, nil
	}
	n, err := s.st.deleteAuditBefore(ctx, now.AddDate(0, 0, -days))
	if err != nil {
		return 0, err
	}
	s.log.Info("audit clean-up", "deleted", n, "retention_days", days)
	return n, nil
}

// RunCleanup runs the clean-up daily at 03:00 in TZ until ctx ends.
func (s *Service) RunCleanup(ctx context.Context) error {
	if s.retentionDays == 0 {
		s.log.Info("audit retention disabled (AUDIT_RETENTION_DAYS=0); expired tokens are still purged daily")
	}
	for {
		next := nextCleanup(s.now(), s.location)
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if _, err := s.CleanupAudit(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("audit clean-up", "err", err)
		}
	}
}

// Page is one page of a list, in the shape of Spring Data's Page.
type Page[T any] struct {
	Content       []T   `json:"content"`
	Page          int   `json:"page"`
	Size          int   `json:"size"`
	TotalElements int64 `json:"totalElements"`
	TotalPages    int64 `json:"totalPages"`
}

func newPage[T any](content []T, page, size int, total int64) Page[T] {
	return Page[T]{Content: content, Page: page, Size: size, TotalElements: total, TotalPages: (total + int64(size) - 1) / int64(size)}
}

// ListAudit reads a page of audit events, newest first.
func (s *Service) ListAudit(ctx context.Context, f AuditFilter, page, size int) (Page[AuditEvent], error) {
	list, total, err := s.st.listAudit(ctx, f, page*size, size)
	if err != nil {
		return Page[AuditEvent]{}, err
	}
	return newPage(list, page, size, total), nil
}
