package export

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MaxSheetRows is the most rows a worksheet holds in Excel (1,048,576)
// less the header row. At that bound the writer starts the next sheet
// ("Report 2", ...) with the header again, so an export of any size opens.
const MaxSheetRows = 1<<20 - 1

// xlsxBuffer sits between the XML and the deflater so the deflater sees
// large writes.
const xlsxBuffer = 64 << 10

// xlsxEncoder writes a minimal SpreadsheetML package: content types,
// relationships, a workbook, a style sheet and one worksheet per
// MaxSheetRows rows. Cells are inline strings (no shared-string table,
// which would grow with the data) or numbers; every cell carries its
// reference; an absent value has no cell. The package parts whose content
// depends on the sheet count are written at the end, which a zip allows.
type xlsxEncoder struct {
	zw        *zip.Writer
	w         *bufio.Writer
	modified  time.Time
	sheets    int
	sheetRows int // rows of the current sheet, header included
	maxRows   int
	refs      [][]byte // column letters
	scratch   []byte
}

// XLSX returns a writer of an XLSX workbook to w.
func XLSX(w io.Writer) *Writer { return newWriter(newXLSX(w, MaxSheetRows)) }

func newXLSX(w io.Writer, maxRows int) *xlsxEncoder {
	zw := zip.NewWriter(w)
	// Level 1: the sheet XML is very repetitive, so the fastest level
	// already shrinks it about tenfold; higher levels cost several times
	// the CPU for a few percent.
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	e := &xlsxEncoder{zw: zw, modified: time.Now().UTC(), maxRows: maxRows}
	e.refs = make([][]byte, len(columns))
	for i := range columns {
		e.refs[i] = colName(i)
	}
	return e
}

// colName is the spreadsheet column name of index i (0 is A, 26 is AA).
func colName(i int) []byte {
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append([]byte{byte('A' + (i-1)%26)}, b...)
	}
	return b
}

func (e *xlsxEncoder) create(name string) (io.Writer, error) {
	return e.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: e.modified})
}

// startSheet ends the current sheet, if any, and begins the next one with
// the header row.
func (e *xlsxEncoder) startSheet() error {
	if err := e.endSheet(); err != nil {
		return err
	}
	e.sheets++
	part, err := e.create(fmt.Sprintf("xl/worksheets/sheet%d.xml", e.sheets))
	if err != nil {
		return err
	}
	if e.w == nil {
		e.w = bufio.NewWriterSize(part, xlsxBuffer)
	} else {
		e.w.Reset(part)
	}
	_, _ = e.w.WriteString(xml.Header + `<worksheet xmlns="` + nsMain + `"><sheetData>`)
	e.sheetRows = 0
	hc, hb := headerCells()
	e.record(hc, hb)
	return nil
}

func (e *xlsxEncoder) endSheet() error {
	if e.w == nil {
		return nil
	}
	_, _ = e.w.WriteString(`</sheetData></worksheet>`)
	return e.w.Flush()
}

func (e *xlsxEncoder) row(cells []cell, buf []byte) error {
	if e.sheets == 0 || e.sheetRows > e.maxRows {
		if err := e.startSheet(); err != nil {
			return err
		}
	}
	e.record(cells, buf)
	_, err := e.w.Write(nil)
	return err
}

// record lays the row out in scratch and hands it to the buffer in one
// call.
func (e *xlsxEncoder) record(cells []cell, buf []byte) {
	e.sheetRows++
	var num [20]byte
	n := strconv.AppendInt(num[:0], int64(e.sheetRows), 10)
	out := append(e.scratch[:0], `<row r="`...)
	out = append(out, n...)
	out = append(out, `">`...)
	for i, c := range cells {
		if c.kind == null {
			continue
		}
		out = append(out, `<c r="`...)
		out = append(out, e.refs[i]...)
		out = append(out, n...)
		f := buf[c.start:c.end]
		if c.kind == number {
			out = append(out, `"><v>`...)
			out = append(out, f...)
			out = append(out, `</v></c>`...)
			continue
		}
		if isSpace(f[0]) || isSpace(f[len(f)-1]) {
			// Without it a reader may trim the text.
			out = append(out, `" t="inlineStr"><is><t xml:space="preserve">`...)
		} else {
			out = append(out, `" t="inlineStr"><is><t>`...)
		}
		if c.kind == text {
			out = appendEscaped(out, f)
		} else {
			out = append(out, f...)
		}
		out = append(out, `</t></is></c>`...)
	}
	out = append(out, `</row>`...)
	_, _ = e.w.Write(out)
	e.scratch = out
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// appendEscaped appends text content with the markup characters escaped.
// A CR is written as a character reference because an XML reader turns a
// literal CR (or CRLF) into LF; the text is already clean (appendClean).
func appendEscaped(out, f []byte) []byte {
	last := 0
	for i, c := range f {
		var esc string
		switch c {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\r':
			esc = "&#13;"
		default:
			continue
		}
		out = append(out, f[last:i]...)
		out = append(out, esc...)
		last = i + 1
	}
	return append(out, f[last:]...)
}

func (e *xlsxEncoder) end() error {
	if e.sheets == 0 {
		if err := e.startSheet(); err != nil {
			return err
		}
	}
	if err := e.endSheet(); err != nil {
		return err
	}
	var types, sheets, rels []byte
	types = append(types, xml.Header+`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`+
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
		`<Default Extension="xml" ContentType="application/xml"/>`+
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`+
		`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>`...)
	rels = append(rels, xml.Header+`<Relationships xmlns="`+nsRels+`">`+
		`<Relationship Id="rIdStyles" Type="`+nsRel+`/styles" Target="styles.xml"/>`...)
	for i := 1; i <= e.sheets; i++ {
		types = fmt.Appendf(types, `<Override PartName="/xl/worksheets/sheet%d.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`, i)
		name := "Report"
		if i > 1 {
			name = fmt.Sprintf("Report %d", i)
		}
		sheets = fmt.Appendf(sheets, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, name, i, i)
		rels = fmt.Appendf(rels, `<Relationship Id="rId%d" Type="%s/worksheet" Target="worksheets/sheet%d.xml"/>`, i, nsRel, i)
	}
	types = append(types, `</Types>`...)
	rels = append(rels, `</Relationships>`...)
	parts := []struct {
		name string
		body []byte
	}{
		{"[Content_Types].xml", types},
		{"_rels/.rels", []byte(xml.Header + `<Relationships xmlns="` + nsRels + `">` +
			`<Relationship Id="rId1" Type="` + nsRel + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`)},
		{"xl/workbook.xml", append(append([]byte(xml.Header+`<workbook xmlns="`+nsMain+`" xmlns:r="`+nsRel+`"><sheets>`), sheets...), `</sheets></workbook>`...)},
		{"xl/_rels/workbook.xml.rels", rels},
		{"xl/styles.xml", []byte(xml.Header + styles)},
	}
	for _, p := range parts {
		f, err := e.create(p.name)
		if err != nil {
			return err
		}
		if _, err := f.Write(p.body); err != nil {
			return err
		}
	}
	return e.zw.Close()
}

const (
	nsMain = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	nsRels = "http://schemas.openxmlformats.org/package/2006/relationships"
	nsRel  = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
)

// styles is the least style sheet Excel accepts without a repair prompt:
// one font, the two reserved fills, one border, one cell format.
const styles = `<styleSheet xmlns="` + nsMain + `">` +
	`<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>` +
	`<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
	`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
	`<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
	`<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>` +
	`<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
	`</styleSheet>`
