// Package export writes report rows as a file, one row at a time and in
// constant memory: CSV (RFC 4180, UTF-8 without a byte order mark) and
// XLSX (a minimal SpreadsheetML package of its own, inline strings, rows
// streamed into a deflated zip entry). Both formats carry the same header
// (Columns) and the same cells for the same rows.
package export

import (
	"errors"
	"fmt"
	"io"

	"cpesuite/internal/fcc/results"
)

// Format is an export file format as the API names it.
type Format string

// The formats.
const (
	FormatCSV  Format = "CSV"
	FormatXLSX Format = "XLSX"
)

// ContentType is the standard media type of f.
func (f Format) ContentType() string {
	if f == FormatXLSX {
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "text/csv; charset=UTF-8"
}

// Ext is the file name extension of f, with its dot.
func (f Format) Ext() string {
	if f == FormatXLSX {
		return ".xlsx"
	}
	return ".csv"
}

// Valid reports whether f is a known format.
func (f Format) Valid() bool { return f == FormatCSV || f == FormatXLSX }

// encoder is one file format: row writes one row of cells (the header
// first), end what follows the rows.
type encoder interface {
	row(cells []cell, buf []byte) error
	end() error
}

// cell is a span of the writer's row buffer.
type cell struct {
	kind       kind
	start, end int
}

// Writer writes rows in one format. It is not safe for concurrent use.
// Nothing written is complete until Close returns nil: a caller that stops
// early (an error of its row source) leaves a truncated file, which for
// CSV ends at a record boundary and for XLSX is an unreadable package.
type Writer struct {
	enc   encoder
	cells []cell
	buf   []byte
	rows  int64
	err   error
}

// New returns a writer of f to w; the header row is written before the
// first row (or at Close for an empty export).
func New(f Format, w io.Writer) (*Writer, error) {
	switch f {
	case FormatCSV:
		return CSV(w), nil
	case FormatXLSX:
		return XLSX(w), nil
	}
	return nil, fmt.Errorf("export: unknown format %q", f)
}

func newWriter(enc encoder) *Writer {
	return &Writer{enc: enc, cells: make([]cell, len(columns)), buf: make([]byte, 0, 4096)}
}

// Write appends one row.
func (w *Writer) Write(r *results.Row) error {
	if w.err != nil {
		return w.err
	}
	buf := w.buf[:0]
	for i := range columns {
		start := len(buf)
		var k kind
		buf, k = columns[i].cell(buf, r)
		w.cells[i] = cell{kind: k, start: start, end: len(buf)}
	}
	w.buf = buf
	if err := w.enc.row(w.cells, buf); err != nil {
		w.err = err
		return err
	}
	w.rows++
	return nil
}

// Rows is the number of rows written so far, the header not counted.
func (w *Writer) Rows() int64 { return w.rows }

// Close completes the file and flushes it to the underlying writer; it
// does not close that writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.enc.end(); err != nil {
		w.err = err
		return err
	}
	w.err = errClosed
	return nil
}

var errClosed = errors.New("export: writer closed")

// headerCells lays out the header names in one buffer as cells.
func headerCells() ([]cell, []byte) {
	cells := make([]cell, len(columns))
	var buf []byte
	for i, c := range columns {
		start := len(buf)
		buf = append(buf, c.name...)
		cells[i] = cell{kind: plain, start: start, end: len(buf)}
	}
	return cells, buf
}
