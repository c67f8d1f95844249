package cwmp

// AddObject creates an instance of a multi-instance object; ObjectName ends
// with ".".
type AddObject struct {
	ObjectName   string
	ParameterKey string
}

// AddObjectResponse returns the new instance number; Status 1 means the
// creation is committed but not yet applied.
type AddObjectResponse struct {
	InstanceNumber uint32
	Status         int32
}

// DeleteObject removes an object instance; ObjectName ends with ".".
type DeleteObject struct {
	ObjectName   string
	ParameterKey string
}

// DeleteObjectResponse reports 0 (deleted) or 1 (committed, applied later).
type DeleteObjectResponse struct {
	Status int32
}

// Reboot restarts the CPE; CommandKey comes back in the "M Reboot" event.
type Reboot struct {
	CommandKey string
}

// RebootResponse acknowledges Reboot.
type RebootResponse struct{ noArgs }

// FactoryReset resets the CPE to its factory defaults.
type FactoryReset struct{ noArgs }

// FactoryResetResponse acknowledges FactoryReset.
type FactoryResetResponse struct{ noArgs }

// ScheduleInform asks for a session DelaySeconds from now.
type ScheduleInform struct {
	DelaySeconds uint32
	CommandKey   string
}

// ScheduleInformResponse acknowledges ScheduleInform.
type ScheduleInformResponse struct{ noArgs }

// Method returns "AddObject".
func (*AddObject) Method() string { return "AddObject" }

// Method returns "AddObjectResponse".
func (*AddObjectResponse) Method() string { return "AddObjectResponse" }

// Method returns "DeleteObject".
func (*DeleteObject) Method() string { return "DeleteObject" }

// Method returns "DeleteObjectResponse".
func (*DeleteObjectResponse) Method() string { return "DeleteObjectResponse" }

// Method returns "Reboot".
func (*Reboot) Method() string { return "Reboot" }

// Method returns "RebootResponse".
func (*RebootResponse) Method() string { return "RebootResponse" }

// Method returns "FactoryReset".
func (*FactoryReset) Method() string { return "FactoryReset" }

// Method returns "FactoryResetResponse".
func (*FactoryResetResponse) Method() string { return "FactoryResetResponse" }

// Method returns "ScheduleInform".
func (*ScheduleInform) Method() string { return "ScheduleInform" }

// Method returns "ScheduleInformResponse".
func (*ScheduleInformResponse) Method() string { return "ScheduleInformResponse" }

func (m *AddObject) appendXML(e *encoder) {
	e.str("ObjectName", m.ObjectName)
	e.str("ParameterKey", m.ParameterKey)
}

func (m *AddObject) decodeXML(d *decoder) error {
	return decodeObjectArgs(d, &m.ObjectName, &m.ParameterKey)
}

func (m *AddObjectResponse) appendXML(e *encoder) {
	e.uint("InstanceNumber", uint64(m.InstanceNumber))
	e.int("Status", int64(m.Status))
}

func (m *AddObjectResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "InstanceNumber":
			return d.uint32(&m.InstanceNumber)
		case "Status":
			return d.int32(&m.Status)
		}
		return d.skip()
	})
}

func (m *DeleteObject) appendXML(e *encoder) {
	e.str("ObjectName", m.ObjectName)
	e.str("ParameterKey", m.ParameterKey)
}

func (m *DeleteObject) decodeXML(d *decoder) error {
	return decodeObjectArgs(d, &m.ObjectName, &m.ParameterKey)
}

func (m *DeleteObjectResponse) appendXML(e *encoder) { e.int("Status", int64(m.Status)) }

func (m *DeleteObjectResponse) decodeXML(d *decoder) error { return decodeStatus(d, &m.Status) }

func (m *Reboot) appendXML(e *encoder) { e.str("CommandKey", m.CommandKey) }

func (m *Reboot) decodeXML(d *decoder) error { return decodeCommandKey(d, &m.CommandKey) }

func (m *ScheduleInform) appendXML(e *encoder) {
	e.uint("DelaySeconds", uint64(m.DelaySeconds))
	e.str("CommandKey", m.CommandKey)
}

func (m *ScheduleInform) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "DelaySeconds":
			return d.uint32(&m.DelaySeconds)
		case "CommandKey":
			return d.str(&m.CommandKey)
		}
		return d.skip()
	})
}

func decodeObjectArgs(d *decoder, objectName, parameterKey *string) error {
	return d.children(func(name string) error {
		switch name {
		case "ObjectName":
			return d.str(objectName)
		case "ParameterKey":
			return d.str(parameterKey)
		}
		return d.skip()
	})
}

// decodeCommandKey reads a request whose only argument is CommandKey.
func decodeCommandKey(d *decoder, key *string) error {
	return d.children(func(name string) error {
		if name == "CommandKey" {
			return d.str(key)
		}
		return d.skip()
	})
}
