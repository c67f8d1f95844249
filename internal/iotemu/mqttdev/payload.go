package mqttdev

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"cpesuite/internal/iotemu/param"
)

var (
	payloadOnline  = []byte("online")
	payloadOffline = []byte("offline")
)

// failResponseError is the ack error of every write while the device's
// failResponse flag is on.
const failResponseError = "failResponse is on"

// appendTelemetry appends the telemetry document. It is built by hand, not
// with encoding/json, to keep the parameters in declaration order and to
// avoid a map and reflection on every publish of every device.
func appendTelemetry(b []byte, clientID, serial string, tsMillis int64, ps []param.Param) []byte {
	b = append(b, `{"clientId":`...)
	b = appendString(b, clientID)
	b = append(b, `,"serialNumber":`...)
	b = appendString(b, serial)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, tsMillis, 10)
	b = append(b, `,"params":{`...)
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p.Name)
		b = append(b, ':')
		b = appendString(b, p.Value)
	}
	return append(b, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript source; escape like
			// encoding/json so consumers that eval are safe.
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// write is one parameter write of a command.
type write struct {
	name  string
	value string
	err   string // set when the command itself is wrong for this write
}

// command is a parsed P/C/set payload.
type command struct {
	id     json.RawMessage // echoed verbatim; nil when absent
	writes []write
}

// parseCommand decodes a set command: {"name":..,"value":..} and/or
// {"params":{..}}, with an optional "id". Params keep their order.
func parseCommand(payload []byte) (command, error) {
	var raw struct {
		ID     json.RawMessage  `json:"id"`
		Name   *string          `json:"name"`
		Value  *json.RawMessage `json:"value"`
		Params json.RawMessage  `json:"params"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return command{}, fmt.Errorf("malformed command: %w", err)
	}
	cmd := command{id: raw.ID}
	if raw.Name != nil {
		w := write{name: *raw.Name}
		if raw.Value == nil {
			w.err = "missing value"
		} else if w.value, w.err = valueOf(*raw.Value); w.err != "" {
			w.value = ""
		}
		cmd.writes = append(cmd.writes, w)
	} else if raw.Value != nil {
		return cmd, errors.New("malformed command: value without name")
	}
	if len(raw.Params) > 0 && !bytes.Equal(raw.Params, []byte("null")) {
		ws, err := parseParams(raw.Params)
		if err != nil {
			return cmd, err
		}
		cmd.writes = append(cmd.writes, ws...)
	}
	if len(cmd.writes) == 0 {
		return cmd, errors.New(`malformed command: want "name" and "value", or "params"`)
	}
	return cmd, nil
}

// parseParams reads a JSON object of name → value in document order
// (a map would lose the order in which the writes are to be applied).
func parseParams(raw json.RawMessage) ([]write, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New(`malformed command: "params" must be an object`)
	}
	var ws []write
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("malformed command: %w", err)
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("malformed command: %w", err)
		}
		w := write{name: name}
		if w.value, w.err = valueOf(v); w.err != "" {
			w.value = ""
		}
		ws = append(ws, w)
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("malformed command: %w", err)
	}
	return ws, nil
}

// valueOf turns a JSON value into a parameter value: strings as they are,
// numbers and booleans as written. It returns an error text for others.
func valueOf(v json.RawMessage) (string, string) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", "missing value"
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", "invalid string value"
		}
		return s, ""
	case 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(v), ""
	case 'n':
		return "", "value must not be null"
	}
	return "", "value must be a string, number or boolean"
}

// ackResult is one entry of an ack's results.
type ackResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// ack is the P/C/ack document.
type ack struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Results []ackResult     `json:"results"`
	Error   string          `json:"error,omitempty"`
}

func (a ack) marshal() []byte {
	if a.Results == nil {
		a.Results = []ackResult{}
	}
	b, err := json.Marshal(a)
	if err != nil {
		// Only an id that is not valid JSON could fail, and the id was
		// decoded from JSON; answer without it rather than not at all.
		a.ID = nil
		b, _ = json.Marshal(a)
	}
	return b
}
