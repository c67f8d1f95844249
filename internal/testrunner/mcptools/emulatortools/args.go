package emulatortools

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"cpesuite/internal/platform/apperr"
)

// invalid is a tool error for a bad argument.
func invalid(format string, args ...any) error {
	return apperr.Invalid("INVALID_ARGUMENT", format, args...)
}

// emulatorSerialRE is what the emulator accepts as a serial (it names
// files and URL paths after it).
var emulatorSerialRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// emulatorSerial checks the serial of an emulator tool.
func emulatorSerial(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", invalid("serial is required")
	}
	if !emulatorSerialRE.MatchString(s) {
		return "", invalid("serial %q may hold 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit", s)
	}
	return s, nil
}

// acsSerial checks a serial looked up in the ACS: any CPE's SerialNumber
// (TR-069: string(64)), not only an emulated one.
func acsSerial(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", invalid("serial is required")
	}
	if len(s) > 64 || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", invalid("serial %q is not a CPE serial number (at most 64 printable characters)", s)
	}
	return s, nil
}

// maxNameLen is TR-069's limit on parameter names.
const maxNameLen = 256

// paramName checks a parameter path. object: it may (true) or must not
// (false) end with a dot.
func paramName(field, raw string, object bool) (string, error) {
	n := strings.TrimSpace(raw)
	switch {
	case n == "":
		return "", invalid("%s is required", field)
	case len(n) > maxNameLen:
		return "", invalid("%s is longer than %d characters", field, maxNameLen)
	case strings.ContainsFunc(n, badNameRune):
		return "", invalid("%s %q contains characters not allowed in a parameter name", field, n)
	case strings.HasPrefix(n, "."):
		return "", invalid("%s %q must start with the data model root (Device. or InternetGatewayDevice.)", field, n)
	case !object && strings.HasSuffix(n, "."):
		return "", invalid("%s %q is an object path; name a parameter (use get_parameters for a subtree)", field, n)
	}
	return n, nil
}

// badNameRune: characters no parameter name holds, and XML would need to
// escape.
func badNameRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`<>&"'`, r)
}

// waitSeconds checks a wait argument.
func waitSeconds(v, max int) (time.Duration, error) {
	if v < 0 || v > max {
		return 0, invalid("wait_seconds must be from 0 to %d, got %d", max, v)
	}
	return time.Duration(v) * time.Second, nil
}

// httpURL checks an optional http(s) URL argument.
func httpURL(field, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", invalid("%s %q is not an http or https URL", field, s)
	}
	return s, nil
}

// treeFile checks a parameter tree file name as the emulator would, so the
// caller learns the rule without a round trip.
func treeFile(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", nil
	case strings.ContainsAny(s, `/\`) || strings.Contains(s, ".."):
		return "", invalid("tree_file %q must be a file name in the emulator's tree folder, not a path", s)
	case !strings.HasSuffix(s, ".xml"):
		return "", invalid("tree_file %q must end with .xml (e.g. tr181-base.xml)", s)
	}
	return s, nil
}

// scalar renders a parameter value given as a JSON string, number or
// boolean as the string TR-069 carries.
func scalar(field string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case nil:
		return "", invalid("%s is required (a string, number or boolean; \"\" for empty)", field)
	}
	return "", invalid("%s must be a string, number or boolean, got %T", field, v)
}

// cwmpEvent is an Inform event the emulator can be asked to send.
type cwmpEvent struct {
	code string // CWMP event code number
	text string // CWMP event code text after the number
	name string // the emulator's eventName
}

var cwmpEvents = []cwmpEvent{
	{"0", "BOOTSTRAP", "BootStrap"},
	{"1", "BOOT", "Boot"},
	{"2", "PERIODIC", "Periodic"},
	{"4", "VALUE CHANGE", "ValueChange"},
	{"6", "CONNECTION REQUEST", "ConnectionRequest"},
	{"7", "TRANSFER COMPLETE", "TransferComplete"},
	{"8", "DIAGNOSTICS COMPLETE", "Diagnostics"},
	{"11", "DU STATE CHANGE COMPLETE", "DUStateChangeComplete"},
}

// squash folds case and drops separators, so "VALUE CHANGE", "value_change"
// and "ValueChange" compare equal.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' || r == '-' {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
}

// eventFor resolves an event given as a CWMP code ("2 PERIODIC", "2") or
// as the emulator's name ("Periodic").
func eventFor(raw string) (cwmpEvent, error) {
	s := strings.TrimSpace(raw)
	num := s[:len(s)-len(strings.TrimLeft(s, "0123456789"))]
	rest := squash(s[len(num):])
	for _, ev := range cwmpEvents {
		named := rest == squash(ev.text) || rest == squash(ev.name)
		if (num == "" && rest != "" && named) || (num == ev.code && (rest == "" || named)) {
			return ev, nil
		}
	}
	known := make([]string, len(cwmpEvents))
	for i, ev := range cwmpEvents {
		known[i] = fmt.Sprintf("%q", ev.code+" "+ev.text)
	}
	if s == "" {
		return cwmpEvent{}, invalid("event is required: one of %s", strings.Join(known, ", "))
	}
	return cwmpEvent{}, invalid("event %q is not one the emulator can send; use one of %s (or the number alone)", s, strings.Join(known, ", "))
}
