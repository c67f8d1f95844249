package fccxml

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Writer states: the calls must come in the order
// Begin (BeginConfig Serials* EndConfig)* End.
const (
	writerNew = iota
	writerInTest
	writerInConfig
	writerDone
)

// Writer streams one campaign document. Usage: w := NewWriter(out);
// w.Begin(c) writes the header fields; for each config w.BeginConfig(cfg)
// writes the config fields and the settings block, then w.Serials(batch) any
// number of times (each call with a non-empty batch writes one
// <fleet page="N"> element holding the batch; the caller passes pages of
// 1000), then w.EndConfig(); finally w.End() closes the document and flushes.
//
// Output is produced incrementally through a small buffer, never the whole
// document, so an export of 200,000 serials streams. Text is escaped, and
// characters XML 1.0 forbids (most control characters, U+FFFE, U+FFFF,
// invalid UTF-8) are dropped, so the output is always well-formed.
//
// The first error (of the underlying writer, of a value the document cannot
// carry, or of a call out of order) is returned by that call and by every
// later one; the document is then incomplete and must be discarded.
type Writer struct {
	bw    *bufio.Writer
	state int
	page  int // fleet pages written in the current config
	err   error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 32<<10)}
}

// Begin writes the XML declaration, the root, formatVersion and the
// campaign's header fields, and opens the configs block. c.Configs is
// ignored here and c.FormatVersion too: the document is always of
// FormatVersion. c.Type must be SPEED or LATENCY, and Domain and
// ReactivationDays must not be negative, because the reader refuses
// anything else and an export must always be importable.
func (w *Writer) Begin(c Campaign) error {
	if err := w.expect(writerNew, "Begin"); err != nil {
		return err
	}
	switch {
	case c.Type != typeSpeed && c.Type != typeLatency:
		return w.fail(fmt.Errorf("fccxml: campaign type must be SPEED or LATENCY, not %s", quote(c.Type)))
	case c.Domain != nil && *c.Domain < 0:
		return w.fail(fmt.Errorf("fccxml: domain %d is negative", *c.Domain))
	case c.ReactivationDays != nil && *c.ReactivationDays < 0:
		return w.fail(fmt.Errorf("fccxml: reactivationDays %d is negative", *c.ReactivationDays))
	}
	w.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fccExport>\n")
	w.field("  ", "formatVersion", FormatVersion)
	w.raw("  <test>\n")
	w.field("    ", "name", c.Name)
	w.field("    ", "type", c.Type)
	if c.Domain != nil {
		w.field("    ", "domain", strconv.FormatInt(*c.Domain, 10))
	}
	if c.ReactivationDays != nil {
		w.field("    ", "reactivationDays", strconv.Itoa(*c.ReactivationDays))
	}
	w.raw("    <configs>\n")
	w.state = writerInTest
	return w.err
}

// BeginConfig opens a config and writes its fields and settings block.
// c.Serials is ignored here; pass them to Serials. The settings type must be
// empty, SPEED or LATENCY; settings need a settings type, and every setting
// name must be of the form [A-Za-z_][A-Za-z0-9_.-]* and appear once.
func (w *Writer) BeginConfig(c Config) error {
	if err := w.expect(writerInTest, "BeginConfig"); err != nil {
		return err
	}
	block, ok := settingsElement(c.SettingsType)
	switch {
	case c.SettingsType != "" && !ok:
		return w.fail(fmt.Errorf("fccxml: settings type must be SPEED, LATENCY or empty, not %s", quote(c.SettingsType)))
	case c.SettingsType == "" && len(c.Settings) > 0:
		return w.fail(errors.New("fccxml: settings given without a settings type"))
	case c.ConditionID != nil && *c.ConditionID < 0:
		return w.fail(fmt.Errorf("fccxml: conditionId %d is negative", *c.ConditionID))
	}
	seen := make(map[string]bool, len(c.Settings))
	for _, s := range c.Settings {
		if !validName(s.Name) {
			return w.fail(fmt.Errorf("fccxml: setting name %s is not of the form [A-Za-z_][A-Za-z0-9_.-]*", quote(s.Name)))
		}
		if seen[s.Name] {
			return w.fail(fmt.Errorf("fccxml: setting %s given twice", s.Name))
		}
		seen[s.Name] = true
	}

	w.raw("      <config>\n")
	w.field("        ", "manufacturer", c.Manufacturer)
	w.field("        ", "model", c.Model)
	w.field("        ", "sourceType", c.SourceType)
	if c.ConditionID != nil {
		w.field("        ", "conditionId", strconv.FormatInt(*c.ConditionID, 10))
	}
	if ok {
		w.raw("        <" + block + ">\n")
		for _, s := range c.Settings {
			w.field("          ", s.Name, s.Value)
		}
		w.raw("        </" + block + ">\n")
	}
	w.state = writerInConfig
	w.page = 0
	return w.err
}

// Serials writes one fleet page holding page, numbered from 1 within the
// config. An empty page writes nothing and takes no number.
func (w *Writer) Serials(page []string) error {
	if err := w.expect(writerInConfig, "Serials"); err != nil {
		return err
	}
	if len(page) == 0 {
		return nil
	}
	w.page++
	w.raw("        <fleet page=\"" + strconv.Itoa(w.page) + "\">")
	for _, s := range page {
		w.raw("<serial>")
		w.text(s)
		w.raw("</serial>")
	}
	w.raw("</fleet>\n")
	return w.err
}

// EndConfig closes the config opened by BeginConfig.
func (w *Writer) EndConfig() error {
	if err := w.expect(writerInConfig, "EndConfig"); err != nil {
		return err
	}
	w.raw("      </config>\n")
	w.state = writerInTest
	return w.err
}

// End closes the document and flushes it to the underlying writer. It does
// not close the underlying writer.
func (w *Writer) End() error {
	if err := w.expect(writerInTest, "End"); err != nil {
		return err
	}
	w.raw("    </configs>\n  </test>\n</fccExport>\n")
	w.state = writerDone
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("fccxml: writing document: %w", err)
		}
	}
	return w.err
}

// expect checks the call order; a call out of order is a programming error
// that would produce a document the reader refuses, so it fails the Writer.
func (w *Writer) expect(state int, call string) error {
	if w.err != nil {
		return w.err
	}
	if w.state != state {
		return w.fail(fmt.Errorf("fccxml: %s called out of order (after %s)", call, stateName(w.state)))
	}
	return nil
}

func stateName(state int) string {
	switch state {
	case writerNew:
		return "nothing"
	case writerInTest:
		return "Begin or EndConfig"
	case writerInConfig:
		return "BeginConfig or Serials"
	}
	return "End"
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// raw writes markup. After the first error it writes nothing, so the
// callers can write a whole element and check w.err once.
func (w *Writer) raw(s string) {
	if w.err != nil {
		return
	}
	if _, err := w.bw.WriteString(s); err != nil {
		w.err = fmt.Errorf("fccxml: writing document: %w", err)
	}
}

// field writes one leaf element on a line of its own.
func (w *Writer) field(indent, name, value string) {
	w.raw(indent + "<" + name + ">")
	w.text(value)
	w.raw("</" + name + ">\n")
}

// text writes s as escaped character data.
func (w *Writer) text(s string) {
	if w.err != nil {
		return
	}
	last := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == '&':
			esc = "&amp;"
		case r == '<':
			esc = "&lt;"
		case r == '>':
			esc = "&gt;"
		case r == '"':
			esc = "&quot;"
		case r == '\'':
			esc = "&apos;"
		case r == '\r':
			// A literal CR would be read back as LF (XML end-of-line
			// handling); the reference survives.
			esc = "&#xD;"
		case r == utf8.RuneError && size == 1, !isXMLChar(r):
			esc = "" // dropped: XML 1.0 cannot carry it at all
		default:
			i += size
			continue
		}
		w.raw(s[last:i])
		w.raw(esc)
		i += size
		last = i
	}
	w.raw(s[last:])
}

// isXMLChar reports whether r is a Char of XML 1.0 (production [2]).
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
