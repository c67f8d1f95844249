package results

import (
	"errors"
	"strconv"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

// appendPerConnection appends the per-connection results as the JSON text
// encoding/json writes for them, byte for byte (TestPerConnectionJSON).
// Reflection and time.Format made json.Marshal a fifth of the CPU of a
// large Insert; this is a few times cheaper. A field added to
// fccwire.ConnectionResult fails that test until it is written here.
func appendPerConnection(b []byte, cs []fccwire.ConnectionResult) ([]byte, error) {
	b = append(b, '[')
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"connection":`...)
		b = strconv.AppendInt(b, int64(c.Connection), 10)
		var err error
		if c.ROMTime != nil {
			b = append(b, `,"romTime":`...)
			if b, err = appendWireTime(b, c.ROMTime.Time); err != nil {
				return nil, err
			}
		}
		b = append(b, `,"bom":`...)
		if b, err = appendWireTime(b, c.BOM.Time); err != nil {
			return nil, err
		}
		b = append(b, `,"eom":`...)
		if b, err = appendWireTime(b, c.EOM.Time); err != nil {
			return nil, err
		}
		b = append(b, `,"testBytes":`...)
		b = strconv.AppendInt(b, c.TestBytes, 10)
		if c.TotalBytes != nil {
			b = append(b, `,"totalBytes":`...)
			b = strconv.AppendInt(b, *c.TotalBytes, 10)
		}
		if c.TCPOpenRequestTime != nil {
			b = append(b, `,"tcpOpenRequestTime":`...)
			if b, err = appendWireTime(b, c.TCPOpenRequestTime.Time); err != nil {
				return nil, err
			}
		}
		if c.TCPOpenResponseTime != nil {
			b = append(b, `,"tcpOpenResponseTime":`...)
			if b, err = appendWireTime(b, c.TCPOpenResponseTime.Time); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

var errZeroTime = errors.New("fccwire: zero time")

// appendWireTime appends a quoted time in the wire's layout,
// 2006-01-02T15:04:05.000000Z, as fccwire.Time.MarshalJSON does.
func appendWireTime(b []byte, t time.Time) ([]byte, error) {
	if t.IsZero() {
		return nil, errZeroTime
	}
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		// Not fixed width; rare enough for the general formatter.
		b = append(b, '"')
		b = t.Truncate(time.Microsecond).AppendFormat(b, "2006-01-02T15:04:05.000000Z")
		return append(b, '"'), nil
	}
	hour, minute, sec := t.Clock()
	b = append(b, '"')
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1000, 6)
	return append(b, 'Z', '"'), nil
}

// appendDigits appends v, 0 <= v < 10^width, zero-padded to width.
func appendDigits(b []byte, v, width int) []byte {
	var buf [6]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:width]...)
}
