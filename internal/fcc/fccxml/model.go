package fccxml

// Campaign types and settings types; the values of Campaign.Type and
// Config.SettingsType.
const (
	typeSpeed   = "SPEED"
	typeLatency = "LATENCY"
)

// Setting is one field of a settings block, in document order. Name is the
// JSON wire name of the field (e.g. downloadUrl); Value its text.
type Setting struct{ Name, Value string }

// Config is one configuration of a campaign.
type Config struct {
	Manufacturer string
	Model        string
	SourceType   string // e.g. ALL, CONDITION, DEVICE_LIST, SERIAL_LIST
	ConditionID  *int64
	SettingsType string // SPEED or LATENCY ("" = no settings block)
	Settings     []Setting
	Serials      []string // frozen fleet by serial (read side; the write side streams them)
}

// Campaign is everything the document carries: no schedule, state or run
// history.
type Campaign struct {
	FormatVersion    string
	Name             string
	Type             string // SPEED or LATENCY
	Domain           *int64
	ReactivationDays *int
	Configs          []Config
}

// settingsElement maps a settings type to the element of its block.
func settingsElement(settingsType string) (string, bool) {
	switch settingsType {
	case typeSpeed:
		return "speedSettings", true
	case typeLatency:
		return "latencySettings", true
	}
	return "", false
}

// validName reports whether s is a setting name the document can carry as
// an element name: [A-Za-z_][A-Za-z0-9_.-]*. It is narrower than XML names
// on purpose: JSON wire names fit, and no prefix (colon) or non-ASCII name
// can change meaning between writer and reader.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}
