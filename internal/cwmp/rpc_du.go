package cwmp

import (
	"strings"
	"time"
)

// ChangeDUState installs, updates or uninstalls deployment units (software
// modules). The outcome arrives later in a DUStateChangeComplete.
type ChangeDUState struct {
	Operations []Operation
	CommandKey string
}

// Operation is one of InstallOp, UpdateOp or UninstallOp.
type Operation interface {
	// OpStruct returns the schema type name, such as "InstallOpStruct".
	OpStruct() string
}

// InstallOp installs the deployment unit at URL; the other fields are
// optional.
type InstallOp struct {
	URL             string
	UUID            string
	Username        string
	Password        string
	ExecutionEnvRef string
}

// UpdateOp updates the unit named by UUID or URL, or all units when both are
// empty; every field is optional.
type UpdateOp struct {
	UUID     string
	Version  string
	URL      string
	Username string
	Password string
}

// UninstallOp removes the unit UUID; Version and ExecutionEnvRef are
// optional.
type UninstallOp struct {
	UUID            string
	Version         string
	ExecutionEnvRef string
}

// OpStruct returns "InstallOpStruct".
func (InstallOp) OpStruct() string { return "InstallOpStruct" }

// OpStruct returns "UpdateOpStruct".
func (UpdateOp) OpStruct() string { return "UpdateOpStruct" }

// OpStruct returns "UninstallOpStruct".
func (UninstallOp) OpStruct() string { return "UninstallOpStruct" }

// ChangeDUStateResponse acknowledges ChangeDUState.
type ChangeDUStateResponse struct{ noArgs }

// DUStateChangeComplete reports the results of a ChangeDUState, in the
// order of its operations.
type DUStateChangeComplete struct {
	Results    []OpResult
	CommandKey string
}

// OpResult is the outcome of one deployment unit operation; CurrentState is
// "Installed", "Uninstalled" or "Failed".
type OpResult struct {
	UUID                 string
	DeploymentUnitRef    string
	Version              string
	CurrentState         string
	Resolved             bool
	ExecutionUnitRefList string
	StartTime            time.Time
	CompleteTime         time.Time
	Fault                FaultStruct
}

// DUStateChangeCompleteResponse acknowledges DUStateChangeComplete.
type DUStateChangeCompleteResponse struct{ noArgs }

// AutonomousDUStateChangeComplete reports operations the ACS did not ask for.
type AutonomousDUStateChangeComplete struct {
	Results []AutonOpResult
}

// AutonOpResult is an OpResult plus the operation performed ("Install",
// "Update", "Uninstall").
type AutonOpResult struct {
	OpResult
	OperationPerformed string
}

// AutonomousDUStateChangeCompleteResponse acknowledges
// AutonomousDUStateChangeComplete.
type AutonomousDUStateChangeCompleteResponse struct{ noArgs }

// Method returns "ChangeDUState".
func (*ChangeDUState) Method() string { return "ChangeDUState" }

// Method returns "ChangeDUStateResponse".
func (*ChangeDUStateResponse) Method() string { return "ChangeDUStateResponse" }

// Method returns "DUStateChangeComplete".
func (*DUStateChangeComplete) Method() string { return "DUStateChangeComplete" }

// Method returns "DUStateChangeCompleteResponse".
func (*DUStateChangeCompleteResponse) Method() string { return "DUStateChangeCompleteResponse" }

// Method returns "AutonomousDUStateChangeComplete".
func (*AutonomousDUStateChangeComplete) Method() string { return "AutonomousDUStateChangeComplete" }

// Method returns "AutonomousDUStateChangeCompleteResponse".
func (*AutonomousDUStateChangeCompleteResponse) Method() string {
	return "AutonomousDUStateChangeCompleteResponse"
}

// appendXML writes the schema's form: one Operations element per operation,
// typed with xsi:type, optional fields only when set.
func (m *ChangeDUState) appendXML(e *encoder) {
	for _, op := range m.Operations {
		var f opFields
		switch op := op.(type) {
		case InstallOp:
			f = opFields{URL: op.URL, UUID: op.UUID, Username: op.Username, Password: op.Password, ExecutionEnvRef: op.ExecutionEnvRef}
		case UpdateOp:
			f = opFields{UUID: op.UUID, Version: op.Version, URL: op.URL, Username: op.Username, Password: op.Password}
		case UninstallOp:
			f = opFields{UUID: op.UUID, Version: op.Version, ExecutionEnvRef: op.ExecutionEnvRef}
		default:
			continue
		}
		e.startTyped("Operations", "cwmp:"+op.OpStruct())
		_, install := op.(InstallOp)
		_, uninstall := op.(UninstallOp)
		if install || f.URL != "" {
			e.str("URL", f.URL)
		}
		if uninstall || f.UUID != "" {
			e.str("UUID", f.UUID)
		}
		optional(e, "Version", f.Version)
		optional(e, "Username", f.Username)
		optional(e, "Password", f.Password)
		optional(e, "ExecutionEnvRef", f.ExecutionEnvRef)
		e.end("Operations")
	}
	e.str("CommandKey", m.CommandKey)
}

func optional(e *encoder, name, s string) {
	if s != "" {
		e.str(name, s)
	}
}

// decodeXML reads both forms seen in the field: the schema's repeated
// Operations elements typed by xsi:type, and a SOAP array whose elements are
// typed by xsi:type or named InstallOpStruct, UpdateOpStruct, ...
func (m *ChangeDUState) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Operations":
			return m.decodeOperations(d)
		case "CommandKey":
			return d.str(&m.CommandKey)
		}
		return d.skip()
	})
}

func (m *ChangeDUState) decodeOperations(d *decoder) error {
	kind := typeLocal(d)
	var direct opFields
	err := d.children(func(name string) error {
		k := typeLocal(d)
		if !isOpStruct(k) {
			k = name
		}
		if !isOpStruct(k) {
			return direct.decodeField(d, name)
		}
		var f opFields
		err := d.children(func(name string) error { return f.decodeField(d, name) })
		m.Operations = append(m.Operations, f.op(k))
		return err
	})
	if isOpStruct(kind) {
		m.Operations = append(m.Operations, direct.op(kind))
	} else if direct != (opFields{}) {
		d.invalid("Operations", "OperationStruct", "no xsi:type")
	}
	return err
}

// opFields is the union of the operation structs' fields.
type opFields struct {
	URL, UUID, Version, Username, Password, ExecutionEnvRef string
}

func (f *opFields) decodeField(d *decoder, name string) error {
	switch name {
	case "URL":
		return d.str(&f.URL)
	case "UUID":
		return d.str(&f.UUID)
	case "Version":
		return d.str(&f.Version)
	case "Username":
		return d.str(&f.Username)
	case "Password":
		return d.str(&f.Password)
	case "ExecutionEnvRef":
		return d.str(&f.ExecutionEnvRef)
	}
	return d.skip()
}

func (f *opFields) op(kind string) Operation {
	switch kind {
	case "InstallOpStruct":
		return InstallOp{URL: f.URL, UUID: f.UUID, Username: f.Username, Password: f.Password, ExecutionEnvRef: f.ExecutionEnvRef}
	case "UpdateOpStruct":
		return UpdateOp{UUID: f.UUID, Version: f.Version, URL: f.URL, Username: f.Username, Password: f.Password}
	}
	return UninstallOp{UUID: f.UUID, Version: f.Version, ExecutionEnvRef: f.ExecutionEnvRef}
}

func isOpStruct(kind string) bool {
	return kind == "InstallOpStruct" || kind == "UpdateOpStruct" || kind == "UninstallOpStruct"
}

// typeLocal returns the local part of the current element's xsi:type.
func typeLocal(d *decoder) string {
	a, ok := d.s.attr("type")
	if !ok {
		return ""
	}
	return Value{Type: attrValue(a.value)}.Kind()
}

func (m *DUStateChangeComplete) appendXML(e *encoder) {
	for i := range m.Results {
		e.start("Results")
		m.Results[i].appendFields(e)
		e.end("Results")
	}
	e.str("CommandKey", m.CommandKey)
}

func (m *DUStateChangeComplete) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Results":
			return decodeResults(d, &m.Results)
		case "CommandKey":
			return d.str(&m.CommandKey)
		}
		return d.skip()
	})
}

func (m *AutonomousDUStateChangeComplete) appendXML(e *encoder) {
	for i := range m.Results {
		e.start("Results")
		m.Results[i].appendFields(e)
		e.end("Results")
	}
}

func (m *AutonomousDUStateChangeComplete) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "Results" {
			return decodeResults(d, &m.Results)
		}
		return d.skip()
	})
}

func (r *OpResult) appendFields(e *encoder) {
	e.str("UUID", r.UUID)
	e.str("DeploymentUnitRef", r.DeploymentUnitRef)
	e.str("Version", r.Version)
	e.str("CurrentState", r.CurrentState)
	e.bool("Resolved", r.Resolved)
	e.str("ExecutionUnitRefList", r.ExecutionUnitRefList)
	e.time("StartTime", r.StartTime)
	e.time("CompleteTime", r.CompleteTime)
	r.Fault.appendXML(e, "Fault")
}

func (r *OpResult) decodeField(d *decoder, name string) (bool, error) {
	switch name {
	case "UUID":
		return true, d.str(&r.UUID)
	case "DeploymentUnitRef":
		return true, d.str(&r.DeploymentUnitRef)
	case "Version":
		return true, d.str(&r.Version)
	case "CurrentState":
		return true, d.str(&r.CurrentState)
	case "Resolved":
		return true, d.boolean(&r.Resolved)
	case "ExecutionUnitRefList":
		return true, d.str(&r.ExecutionUnitRefList)
	case "StartTime":
		return true, d.dateTime(&r.StartTime)
	case "CompleteTime":
		return true, d.dateTime(&r.CompleteTime)
	case "Fault":
		return true, r.Fault.decodeXML(d)
	}
	return false, nil
}

func (r *AutonOpResult) appendFields(e *encoder) {
	r.OpResult.appendFields(e)
	e.str("OperationPerformed", r.OperationPerformed)
}

func (r *AutonOpResult) decodeField(d *decoder, name string) (bool, error) {
	if name == "OperationPerformed" {
		return true, d.str(&r.OperationPerformed)
	}
	return r.OpResult.decodeField(d, name)
}

type result[T any] interface {
	*T
	decodeField(d *decoder, name string) (bool, error)
}

// decodeResults reads both forms of Results: the schema's, one Results
// element per result holding its fields, and a SOAP array of
// OpResultStruct or AutonOpResultStruct elements.
func decodeResults[T any, P result[T]](d *decoder, dst *[]T) error {
	direct := -1
	return d.children(func(name string) error {
		if strings.HasSuffix(name, "Struct") {
			*dst = append(*dst, *new(T))
			i := len(*dst) - 1
			return d.children(func(name string) error {
				if ok, err := P(&(*dst)[i]).decodeField(d, name); ok {
					return err
				}
				return d.skip()
			})
		}
		if direct < 0 {
			*dst = append(*dst, *new(T))
			direct = len(*dst) - 1
		}
		if ok, err := P(&(*dst)[direct]).decodeField(d, name); ok {
			return err
		}
		return d.skip()
	})
}
