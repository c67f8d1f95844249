package cwmp

import "time"

// Event codes of the Inform (TR-069 Amendment 6, 3.7.1.5).
const (
	EventBootstrap                       = "0 BOOTSTRAP"
	EventBoot                            = "1 BOOT"
	EventPeriodic                        = "2 PERIODIC"
	EventScheduled                       = "3 SCHEDULED"
	EventValueChange                     = "4 VALUE CHANGE"
	EventKicked                          = "5 KICKED"
	EventConnectionRequest               = "6 CONNECTION REQUEST"
	EventTransferComplete                = "7 TRANSFER COMPLETE"
	EventDiagnosticsComplete             = "8 DIAGNOSTICS COMPLETE"
	EventRequestDownload                 = "9 REQUEST DOWNLOAD"
	EventAutonomousTransferComplete      = "10 AUTONOMOUS TRANSFER COMPLETE"
	EventDUStateChangeComplete           = "11 DU STATE CHANGE COMPLETE"
	EventAutonomousDUStateChangeComplete = "12 AUTONOMOUS DU STATE CHANGE COMPLETE"
	EventWakeup                          = "13 WAKEUP"
	EventHeartbeat                       = "14 HEARTBEAT"

	EventMReboot           = "M Reboot"
	EventMScheduleInform   = "M ScheduleInform"
	EventMDownload         = "M Download"
	EventMScheduleDownload = "M ScheduleDownload"
	EventMUpload           = "M Upload"
	EventMChangeDUState    = "M ChangeDUState"
)

// Inform opens every session: the CPE identifies itself, says why it
// connects and reports the parameters the ACS must always see.
type Inform struct {
	DeviceID      DeviceID // element DeviceId
	Event         []EventStruct
	MaxEnvelopes  uint32
	CurrentTime   time.Time
	RetryCount    uint32
	ParameterList []ParameterValueStruct
}

// DeviceID identifies the CPE.
type DeviceID struct {
	Manufacturer string
	OUI          string
	ProductClass string
	SerialNumber string
}

// EventStruct is one reason for the session, such as EventBoot.
type EventStruct struct {
	EventCode  string
	CommandKey string
}

// ParameterValueStruct is a parameter name and its typed value.
type ParameterValueStruct struct {
	Name  string
	Value Value
}

// InformResponse is the ACS's answer to Inform.
type InformResponse struct {
	MaxEnvelopes uint32
}

// Method returns "Inform".
func (*Inform) Method() string { return "Inform" }

// Method returns "InformResponse".
func (*InformResponse) Method() string { return "InformResponse" }

func (m *Inform) appendXML(e *encoder) {
	e.start("DeviceId")
	e.str("Manufacturer", m.DeviceID.Manufacturer)
	e.str("OUI", m.DeviceID.OUI)
	e.str("ProductClass", m.DeviceID.ProductClass)
	e.str("SerialNumber", m.DeviceID.SerialNumber)
	e.end("DeviceId")
	appendArray(e, "Event", "EventStruct", m.Event)
	e.uint("MaxEnvelopes", uint64(m.MaxEnvelopes))
	e.time("CurrentTime", m.CurrentTime)
	e.uint("RetryCount", uint64(m.RetryCount))
	appendArray(e, "ParameterList", "ParameterValueStruct", m.ParameterList)
}

func (m *Inform) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "DeviceId":
			return m.DeviceID.decodeXML(d)
		case "Event":
			return decodeArray(d, &m.Event)
		case "MaxEnvelopes":
			return d.uint32(&m.MaxEnvelopes)
		case "CurrentTime":
			return d.dateTime(&m.CurrentTime)
		case "RetryCount":
			return d.uint32(&m.RetryCount)
		case "ParameterList":
			return decodeArray(d, &m.ParameterList)
		}
		return d.skip()
	})
}

func (m *InformResponse) appendXML(e *encoder) { e.uint("MaxEnvelopes", uint64(m.MaxEnvelopes)) }

func (m *InformResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "MaxEnvelopes" {
			return d.uint32(&m.MaxEnvelopes)
		}
		return d.skip()
	})
}

func (s *DeviceID) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Manufacturer":
			return d.str(&s.Manufacturer)
		case "OUI":
			return d.str(&s.OUI)
		case "ProductClass":
			return d.str(&s.ProductClass)
		case "SerialNumber":
			return d.str(&s.SerialNumber)
		}
		return d.skip()
	})
}

func (s *EventStruct) appendFields(e *encoder) {
	e.str("EventCode", s.EventCode)
	e.str("CommandKey", s.CommandKey)
}

func (s *EventStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "EventCode":
			return d.str(&s.EventCode)
		case "CommandKey":
			return d.str(&s.CommandKey)
		}
		return d.skip()
	})
}

func (s *ParameterValueStruct) appendFields(e *encoder) {
	e.str("Name", s.Name)
	e.value("Value", s.Value)
}

func (s *ParameterValueStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Name":
			return d.str(&s.Name)
		case "Value":
			return d.value(&s.Value)
		}
		return d.skip()
	})
}
