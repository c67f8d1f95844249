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
	w      *bufio.Writer
	header bool
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

func (e *csvEncoder) record(cells []cell, buf []byte) {
	for i, c := range cells {
		if i > 0 {
			_ = e.w.WriteByte(',')
		}
		f := buf[c.start:c.end]
		if c.kind != text || !needsQuotes(f) {
			_, _ = e.w.Write(f)
			continue
		}
		_ = e.w.WriteByte('"')
		for len(f) > 0 {
			j := bytes.IndexByte(f, '"')
			if j < 0 {
				_, _ = e.w.Write(f)
				break
			}
			_, _ = e.w.Write(f[:j+1])
			_ = e.w.WriteByte('"')
			f = f[j+1:]
		}
		_ = e.w.WriteByte('"')
	}
	_, _ = e.w.WriteString("\r\n")
}

func needsQuotes(f []byte) bool {
	if len(f) == 0 {
		return false
	}
	if string(f) == `\.` || bytes.ContainsAny(f, ",\"\r\n") {
		return true
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
