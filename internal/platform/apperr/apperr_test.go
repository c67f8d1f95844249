package apperr_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cpesuite/internal/platform/apperr"
)

var sentinels = []struct {
	kind   error
	status int
	code   string
}{
	{apperr.ErrInvalid, http.StatusBadRequest, "INVALID"},
	{apperr.ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"},
	{apperr.ErrForbidden, http.StatusForbidden, "FORBIDDEN"},
	{apperr.ErrNotFound, http.StatusNotFound, "NOT_FOUND"},
	{apperr.ErrConflict, http.StatusConflict, "CONFLICT"},
	{apperr.ErrTooLarge, http.StatusRequestEntityTooLarge, "TOO_LARGE"},
	{apperr.ErrUnsupportedMedia, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA"},
	{apperr.ErrUnprocessable, http.StatusUnprocessableEntity, "UNPROCESSABLE"},
	{apperr.ErrTooManyRequests, http.StatusTooManyRequests, "TOO_MANY_REQUESTS"},
	{apperr.ErrInternal, http.StatusInternalServerError, "INTERNAL"},
	{apperr.ErrUpstream, http.StatusBadGateway, "UPSTREAM"},
	{apperr.ErrUnavailable, http.StatusServiceUnavailable, "UNAVAILABLE"},
}

func TestStatusOfEachSentinel(t *testing.T) {
	for _, s := range sentinels {
		t.Run(s.code, func(t *testing.T) {
			forms := map[string]error{
				"bare":    s.kind,
				"fmt":     fmt.Errorf("loading thing 42: %w", s.kind),
				"New":     apperr.New(s.kind, "X", "msg"),
				"Wrap":    apperr.Wrap(s.kind, errors.New("cause"), "X", "msg"),
				"wrapped": fmt.Errorf("outer: %w", apperr.New(s.kind, "X", "msg")),
			}
			for form, err := range forms {
				if got := apperr.Status(err); got != s.status {
					t.Errorf("%s: Status = %d, want %d", form, got, s.status)
				}
				if !errors.Is(err, s.kind) {
					t.Errorf("%s: errors.Is(err, kind) = false", form)
				}
			}
			if got := apperr.Code(s.kind); got != s.code {
				t.Errorf("Code(bare) = %q, want %q", got, s.code)
			}
		})
	}
}

func TestStatusUnknownAndNil(t *testing.T) {
	if got := apperr.Status(errors.New("boom")); got != http.StatusInternalServerError {
		t.Fatalf("unknown error: Status = %d, want 500", got)
	}
	if got := apperr.Status(&apperr.Error{Message: "no kind"}); got != http.StatusInternalServerError {
		t.Fatalf("kind-less *Error: Status = %d, want 500", got)
	}
	if got := apperr.Status(nil); got != http.StatusOK {
		t.Fatalf("nil: Status = %d, want 200", got)
	}
}

func TestOutermostKindWins(t *testing.T) {
	inner := apperr.NotFound("DEVICE_NOT_FOUND", "device %s not found", "abc")
	err := apperr.Wrap(apperr.ErrUpstream, inner, "ACS_FAILED", "the ACS failed")
	if got := apperr.Status(err); got != http.StatusBadGateway {
		t.Fatalf("Status = %d, want 502 from the outer kind", got)
	}
	if !errors.Is(err, apperr.ErrNotFound) {
		t.Fatal("errors.Is must still see the inner kind through the cause")
	}
	if got := apperr.Code(err); got != "ACS_FAILED" {
		t.Fatalf("Code = %q, want ACS_FAILED", got)
	}
}

func TestUnwrapReachesCause(t *testing.T) {
	cause := errors.New("sql: no rows")
	err := apperr.Wrap(apperr.ErrNotFound, cause, "", "campaign not found")
	if !errors.Is(err, cause) || !errors.Is(err, apperr.ErrNotFound) {
		t.Fatal("errors.Is must match both the kind and the cause")
	}
	e, ok := apperr.As(fmt.Errorf("ctx: %w", err))
	if !ok || e != err {
		t.Fatal("As must find the *Error through fmt wrapping")
	}
}

func TestErrorTextIsForLogs(t *testing.T) {
	tests := []struct {
		name string
		err  *apperr.Error
		want string
	}{
		{"message and cause", apperr.Wrap(apperr.ErrConflict, errors.New("duplicate key"), "", "name taken"), "name taken: duplicate key"},
		{"message only", apperr.Invalid("", "bad id"), "bad id"},
		{"kind text when no message", &apperr.Error{Kind: apperr.ErrNotFound}, "not found"},
		{"internal with cause", apperr.Internal(errors.New("disk full")), "internal server error: disk full"},
		{"cause only", &apperr.Error{Err: errors.New("x")}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPublicNeverLeaksInternals(t *testing.T) {
	const secret = "postgres://admin:hunter2@db"
	tests := []struct {
		name        string
		err         error
		wantCode    string
		wantMessage string
	}{
		{"unknown error", errors.New("dial " + secret), "INTERNAL", "internal server error"},
		{"fmt-wrapped sentinel", fmt.Errorf("user %s: %w", secret, apperr.ErrNotFound), "NOT_FOUND", "not found"},
		{"wrapped cause", apperr.Wrap(apperr.ErrUnavailable, errors.New(secret), "DB_DOWN", "database unavailable"), "DB_DOWN", "database unavailable"},
		{"internal", apperr.Internal(errors.New(secret)), "INTERNAL", "internal server error"},
		{"kind-less *Error", &apperr.Error{Message: secret, Err: errors.New(secret)}, "INTERNAL", "internal server error"},
		{"default code and message", &apperr.Error{Kind: apperr.ErrForbidden}, "FORBIDDEN", "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := apperr.Public(tt.err)
			if pub.Code != tt.wantCode || pub.Message != tt.wantMessage {
				t.Fatalf("Public = {%q, %q}, want {%q, %q}", pub.Code, pub.Message, tt.wantCode, tt.wantMessage)
			}
			if pub.Err != nil || strings.Contains(pub.Error(), "hunter2") {
				t.Fatalf("Public leaks the cause: %q", pub.Error())
			}
			if got := apperr.PublicMessage(tt.err); got != tt.wantMessage {
				t.Fatalf("PublicMessage = %q, want %q", got, tt.wantMessage)
			}
			if apperr.Status(pub) != apperr.Status(tt.err) {
				t.Fatalf("Public changed the status: %d vs %d", apperr.Status(pub), apperr.Status(tt.err))
			}
		})
	}
	if apperr.Public(nil) != nil || apperr.PublicMessage(nil) != "" || apperr.Code(nil) != "" {
		t.Fatal("nil must stay nil/empty")
	}
}

func TestDetailsSurvivePublicAndWithDetailsCopies(t *testing.T) {
	base := apperr.Invalid("BAD_FIELD", "bad field")
	withD := base.WithDetails(map[string]string{"field": "name"})
	if base.Details != nil {
		t.Fatal("WithDetails must not mutate the receiver")
	}
	pub := apperr.Public(withD)
	if d, ok := pub.Details.(map[string]string); !ok || d["field"] != "name" {
		t.Fatalf("Public dropped details: %#v", pub.Details)
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name string
		err  *apperr.Error
		kind error
		msg  string
	}{
		{"New formats", apperr.New(apperr.ErrTooManyRequests, "SLOW_DOWN", "retry in %ds", 5), apperr.ErrTooManyRequests, "retry in 5s"},
		{"escaped percent", apperr.Invalid("", "100%% wrong"), apperr.ErrInvalid, "100% wrong"},
		{"NotFound", apperr.NotFound("", "campaign %d not found", 7), apperr.ErrNotFound, "campaign 7 not found"},
		{"Conflict", apperr.Conflict("EMULATOR_NOT_STOPPED", "emulator is running"), apperr.ErrConflict, "emulator is running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Kind != tt.kind || tt.err.Message != tt.msg {
				t.Fatalf("got {%v, %q}, want {%v, %q}", tt.err.Kind, tt.err.Message, tt.kind, tt.msg)
			}
		})
	}
}
