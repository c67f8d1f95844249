// Package logx builds the process logger: log/slog, JSON in production and
// text on a terminal.
package logx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// New returns a logger writing to w. format is "json", "text" or "auto"
// (text when w is a terminal); level is debug, info, warn or error.
func New(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "auto", "":
		if isTerminal(w) {
			return slog.New(slog.NewTextHandler(w, opts)), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("log format %q: want json, text or auto", format)
	}
}

// Discard returns a logger that drops everything, for tests.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// AtLeast returns a logger that drops records below level, for a module
// with its own level variable. It can only narrow: records the process
// handler drops stay dropped.
func AtLeast(log *slog.Logger, level slog.Level) *slog.Logger {
	return slog.New(minLevel{inner: log.Handler(), min: level})
}

type minLevel struct {
	inner slog.Handler
	min   slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.inner.Enabled(ctx, l)
}

func (h minLevel) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{inner: h.inner.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{inner: h.inner.WithGroup(name), min: h.min}
}
