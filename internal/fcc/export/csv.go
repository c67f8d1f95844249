package export

import (
	"bufio"
	"bytes"
	"io"
	"unicode"
	"unicode/utf8"
)

// csvBuffer is the write buffer: about 200 rows of a speed export, so the
// writer below sees large writes and the memory stays fixed.
const csvBuffer = 64 << 10

// csvEncoder writes RFC 4180: comma separated, records ending in CRLF, a
// field quoted when it contains a comma, a quote, CR or LF (and, as
// encoding/csv does, when it starts with white space or is `\.`), quotes
// doubled inside. One difference from encoding/csv with UseCRLF: line
// breaks inside a field are kept byte for byte (encoding/csv would write
// LF as CRLF and drop a lone CR), so a strict reader gets the stored text
// back unchanged.
type csvEncoder struct {
	w       *bufio.Writer
	header  bool
	scratch []byte
}

// CSV returns a writer of RFC 4180 CSV to w.
func CSV(w io.Writer) *Writer {
	return newWriter(&csvEncoder{w: bufio.NewWriterSize(w, csvBuffer)})
}

func (e *csvEncoder) row(cells []cell, buf []byte) error {
	if !e.header {
		e.header = true
		hc, hb := headerCells()
		e.record(hc, hb)
	}
	e.record(cells, buf)
	// bufio keeps the first error and hands it back on every later call.
	_, err := e.w.Write(nil)
	return err
}

// record lays the whole record out in scratch and hands it to the buffer
// in one call.
func (e *csvEncoder) record(cells []cell, buf []byte) {
	out := e.scratch[:0]
	for i, c := range cells {
		if i > 0 {
			out = append(out, ',')
		}
		f := buf[c.start:c.end]
		if c.kind != text || !needsQuotes(f) {
			out = append(out, f...)
			continue
		}
		out = append(out, '"')
		for len(f) > 0 {
			j := bytes.IndexByte(f, '"')
			if j < 0 {
				out = append(out, f...)
				break
			}
			out = append(out, f[:j+1]...)
			out = append(out, '"')
			f = f[j+1:]
		}
		out = append(out, '"')
	}
	out = append(out, '\r', '\n')
	_, _ = e.w.Write(out)
	e.scratch = out
}

func needsQuotes(f []byte) bool {
	if len(f) == 0 {
		return false
	}
	for _, c := range f {
		if c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	if f[0] < utf8.RuneSelf {
		return f[0] == ' ' || f[0] == '\t' || f[0] == '\v' || f[0] == '\f' || string(f) == `\.`
	}
	r, _ := utf8.DecodeRune(f)
	return unicode.IsSpace(r)
}

func (e *csvEncoder) end() error {
	if !e.header {
		e.header = true
		hc, hb := headerCells()
		e.record(hc, hb)
	}
	return e.w.Flush()
}
