package cwmp

// GetRPCMethods asks the peer which RPCs it supports; both sides may send it.
type GetRPCMethods struct{ noArgs }

// GetRPCMethodsResponse lists the supported RPC names.
type GetRPCMethodsResponse struct {
	MethodList []string
}

// SetParameterValues sets parameters on the CPE atomically.
type SetParameterValues struct {
	ParameterList []ParameterValueStruct
	ParameterKey  string
}

// SetParameterValuesResponse reports 0 (applied) or 1 (committed, applied
// later, e.g. after a reboot).
type SetParameterValuesResponse struct {
	Status int32
}

// GetParameterValues reads parameters; a name ending in "." is a partial
// path that selects a whole subtree.
type GetParameterValues struct {
	ParameterNames []string
}

// GetParameterValuesResponse carries the values read.
type GetParameterValuesResponse struct {
	ParameterList []ParameterValueStruct
}

// GetParameterNames discovers the data model below ParameterPath.
type GetParameterNames struct {
	ParameterPath string
	NextLevel     bool
}

// GetParameterNamesResponse lists the names found.
type GetParameterNamesResponse struct {
	ParameterList []ParameterInfoStruct
}

// ParameterInfoStruct is one name found by GetParameterNames.
type ParameterInfoStruct struct {
	Name     string
	Writable bool
}

// SetParameterAttributes changes notification and access list attributes.
type SetParameterAttributes struct {
	ParameterList []SetParameterAttributesStruct
}

// SetParameterAttributesStruct is one attribute change; the Change flags say
// which of Notification and AccessList apply.
type SetParameterAttributesStruct struct {
	Name               string
	NotificationChange bool
	Notification       int32
	AccessListChange   bool
	AccessList         []string
}

// SetParameterAttributesResponse acknowledges SetParameterAttributes.
type SetParameterAttributesResponse struct{ noArgs }

// GetParameterAttributes reads notification and access list attributes.
type GetParameterAttributes struct {
	ParameterNames []string
}

// GetParameterAttributesResponse carries the attributes read.
type GetParameterAttributesResponse struct {
	ParameterList []ParameterAttributeStruct
}

// ParameterAttributeStruct is the attributes of one parameter.
type ParameterAttributeStruct struct {
	Name         string
	Notification int32
	AccessList   []string
}

// Method returns "GetRPCMethods".
func (*GetRPCMethods) Method() string { return "GetRPCMethods" }

// Method returns "GetRPCMethodsResponse".
func (*GetRPCMethodsResponse) Method() string { return "GetRPCMethodsResponse" }

// Method returns "SetParameterValues".
func (*SetParameterValues) Method() string { return "SetParameterValues" }

// Method returns "SetParameterValuesResponse".
func (*SetParameterValuesResponse) Method() string { return "SetParameterValuesResponse" }

// Method returns "GetParameterValues".
func (*GetParameterValues) Method() string { return "GetParameterValues" }

// Method returns "GetParameterValuesResponse".
func (*GetParameterValuesResponse) Method() string { return "GetParameterValuesResponse" }

// Method returns "GetParameterNames".
func (*GetParameterNames) Method() string { return "GetParameterNames" }

// Method returns "GetParameterNamesResponse".
func (*GetParameterNamesResponse) Method() string { return "GetParameterNamesResponse" }

// Method returns "SetParameterAttributes".
func (*SetParameterAttributes) Method() string { return "SetParameterAttributes" }

// Method returns "SetParameterAttributesResponse".
func (*SetParameterAttributesResponse) Method() string { return "SetParameterAttributesResponse" }

// Method returns "GetParameterAttributes".
func (*GetParameterAttributes) Method() string { return "GetParameterAttributes" }

// Method returns "GetParameterAttributesResponse".
func (*GetParameterAttributesResponse) Method() string { return "GetParameterAttributesResponse" }

func (m *GetRPCMethodsResponse) appendXML(e *encoder) { e.strings("MethodList", m.MethodList) }

func (m *GetRPCMethodsResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "MethodList" {
			return d.stringArray(&m.MethodList)
		}
		return d.skip()
	})
}

func (m *SetParameterValues) appendXML(e *encoder) {
	appendArray(e, "ParameterList", "ParameterValueStruct", m.ParameterList)
	e.str("ParameterKey", m.ParameterKey)
}

func (m *SetParameterValues) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "ParameterList":
			return decodeArray(d, &m.ParameterList)
		case "ParameterKey":
			return d.str(&m.ParameterKey)
		}
		return d.skip()
	})
}

func (m *SetParameterValuesResponse) appendXML(e *encoder) { e.int("Status", int64(m.Status)) }

func (m *SetParameterValuesResponse) decodeXML(d *decoder) error { return decodeStatus(d, &m.Status) }

func (m *GetParameterValues) appendXML(e *encoder) { e.strings("ParameterNames", m.ParameterNames) }

func (m *GetParameterValues) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterNames" {
			return d.stringArray(&m.ParameterNames)
		}
		return d.skip()
	})
}

func (m *GetParameterValuesResponse) appendXML(e *encoder) {
	appendArray(e, "ParameterList", "ParameterValueStruct", m.ParameterList)
}

func (m *GetParameterValuesResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterList" {
			return decodeArray(d, &m.ParameterList)
		}
		return d.skip()
	})
}

func (m *GetParameterNames) appendXML(e *encoder) {
	e.str("ParameterPath", m.ParameterPath)
	e.bool("NextLevel", m.NextLevel)
}

func (m *GetParameterNames) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "ParameterPath":
			return d.str(&m.ParameterPath)
		case "NextLevel":
			return d.boolean(&m.NextLevel)
		}
		return d.skip()
	})
}

func (m *GetParameterNamesResponse) appendXML(e *encoder) {
	appendArray(e, "ParameterList", "ParameterInfoStruct", m.ParameterList)
}

func (m *GetParameterNamesResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterList" {
			return decodeArray(d, &m.ParameterList)
		}
		return d.skip()
	})
}

func (s *ParameterInfoStruct) appendFields(e *encoder) {
	e.str("Name", s.Name)
	e.bool("Writable", s.Writable)
}

func (s *ParameterInfoStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Name":
			return d.str(&s.Name)
		case "Writable":
			return d.boolean(&s.Writable)
		}
		return d.skip()
	})
}

func (m *SetParameterAttributes) appendXML(e *encoder) {
	appendArray(e, "ParameterList", "SetParameterAttributesStruct", m.ParameterList)
}

func (m *SetParameterAttributes) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterList" {
			return decodeArray(d, &m.ParameterList)
		}
		return d.skip()
	})
}

func (s *SetParameterAttributesStruct) appendFields(e *encoder) {
	e.str("Name", s.Name)
	e.bool("NotificationChange", s.NotificationChange)
	e.int("Notification", int64(s.Notification))
	e.bool("AccessListChange", s.AccessListChange)
	e.strings("AccessList", s.AccessList)
}

func (s *SetParameterAttributesStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Name":
			return d.str(&s.Name)
		case "NotificationChange":
			return d.boolean(&s.NotificationChange)
		case "Notification":
			return d.int32(&s.Notification)
		case "AccessListChange":
			return d.boolean(&s.AccessListChange)
		case "AccessList":
			return d.stringArray(&s.AccessList)
		}
		return d.skip()
	})
}

func (m *GetParameterAttributes) appendXML(e *encoder) {
	e.strings("ParameterNames", m.ParameterNames)
}

func (m *GetParameterAttributes) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterNames" {
			return d.stringArray(&m.ParameterNames)
		}
		return d.skip()
	})
}

func (m *GetParameterAttributesResponse) appendXML(e *encoder) {
	appendArray(e, "ParameterList", "ParameterAttributeStruct", m.ParameterList)
}

func (m *GetParameterAttributesResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "ParameterList" {
			return decodeArray(d, &m.ParameterList)
		}
		return d.skip()
	})
}

func (s *ParameterAttributeStruct) appendFields(e *encoder) {
	e.str("Name", s.Name)
	e.int("Notification", int64(s.Notification))
	e.strings("AccessList", s.AccessList)
}

func (s *ParameterAttributeStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Name":
			return d.str(&s.Name)
		case "Notification":
			return d.int32(&s.Notification)
		case "AccessList":
			return d.stringArray(&s.AccessList)
		}
		return d.skip()
	})
}

// decodeStatus reads a response whose only argument is Status.
func decodeStatus(d *decoder, status *int32) error {
	return d.children(func(name string) error {
		if name == "Status" {
			return d.int32(status)
		}
		return d.skip()
	})
}
