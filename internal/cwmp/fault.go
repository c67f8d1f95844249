package cwmp

import (
	"strconv"
	"strings"
)

// FaultCode is a CWMP fault code: 8000-8899 raised by the ACS, 9000-9899 by
// the CPE, 0 for "no fault" in a FaultStruct.
type FaultCode uint32

// ACS fault codes (TR-069 Amendment 6, A.5.1).
const (
	FaultMethodNotSupported  FaultCode = 8000
	FaultRequestDenied       FaultCode = 8001
	FaultInternalError       FaultCode = 8002
	FaultInvalidArguments    FaultCode = 8003
	FaultResourcesExceeded   FaultCode = 8004
	FaultRetryRequest        FaultCode = 8005
	FaultVersionIncompatible FaultCode = 8006
)

// CPE fault codes (TR-069 Amendment 6, A.5.2).
const (
	FaultCPEMethodNotSupported   FaultCode = 9000
	FaultCPERequestDenied        FaultCode = 9001
	FaultCPEInternalError        FaultCode = 9002
	FaultCPEInvalidArguments     FaultCode = 9003
	FaultCPEResourcesExceeded    FaultCode = 9004
	FaultInvalidParameterName    FaultCode = 9005
	FaultInvalidParameterType    FaultCode = 9006
	FaultInvalidParameterValue   FaultCode = 9007
	FaultNonWritableParameter    FaultCode = 9008
	FaultNotificationRejected    FaultCode = 9009
	FaultFileTransferFailure     FaultCode = 9010
	FaultUploadFailure           FaultCode = 9011
	FaultFileTransferAuthFailure FaultCode = 9012
	FaultUnsupportedProtocol     FaultCode = 9013
	FaultMulticastJoinFailure    FaultCode = 9014
	FaultFileServerUnreachable   FaultCode = 9015
	FaultFileAccessFailure       FaultCode = 9016
	FaultDownloadIncomplete      FaultCode = 9017
	FaultFileCorrupted           FaultCode = 9018
	FaultFileAuthFailure         FaultCode = 9019
	FaultTimeWindowsExceeded     FaultCode = 9020
	FaultCancelNotPermitted      FaultCode = 9021
	FaultInvalidUUID             FaultCode = 9022
	FaultUnknownExecEnv          FaultCode = 9023
	FaultDisabledExecEnv         FaultCode = 9024
	FaultDUExecEnvMismatch       FaultCode = 9025
	FaultDuplicateDU             FaultCode = 9026
	FaultSystemResourcesExceeded FaultCode = 9027
	FaultUnknownDU               FaultCode = 9028
	FaultInvalidDUState          FaultCode = 9029
	FaultDUDowngradeNotPermitted FaultCode = 9030
	FaultDUVersionNotSpecified   FaultCode = 9031
	FaultDUVersionAlreadyExists  FaultCode = 9032
)

var faultTexts = map[FaultCode]string{
	8000: "Method not supported",
	8001: "Request denied (no reason specified)",
	8002: "Internal error",
	8003: "Invalid arguments",
	8004: "Resources exceeded",
	8005: "Retry request",
	8006: "ACS version incompatible with CPE",

	9000: "Method not supported",
	9001: "Request denied (no reason specified)",
	9002: "Internal error",
	9003: "Invalid arguments",
	9004: "Resources exceeded",
	9005: "Invalid parameter name",
	9006: "Invalid parameter type",
	9007: "Invalid parameter value",
	9008: "Attempt to set a non-writable parameter",
	9009: "Notification request rejected",
	9010: "File transfer failure",
	9011: "Upload failure",
	9012: "File transfer server authentication failure",
	9013: "Unsupported protocol for file transfer",
	9014: "File transfer failure: unable to join multicast group",
	9015: "File transfer failure: unable to contact file server",
	9016: "File transfer failure: unable to access file",
	9017: "File transfer failure: unable to complete download",
	9018: "File transfer failure: file corrupted",
	9019: "File transfer failure: file authentication failure",
	9020: "File transfer failure: unable to complete download within specified time windows",
	9021: "Cancelation of file transfer not permitted in current transfer state",
	9022: "Invalid UUID Format",
	9023: "Unknown Execution Environment",
	9024: "Disabled Execution Environment",
	9025: "Deployment Unit to Execution Environment Mismatch",
	9026: "Duplicate Deployment Unit",
	9027: "System Resources Exceeded",
	9028: "Unknown Deployment Unit",
	9029: "Invalid Deployment Unit State",
	9030: "Invalid Deployment Unit Update – Downgrade not permitted",
	9031: "Invalid Deployment Unit Update – Version not specified",
	9032: "Invalid Deployment Unit Update – Version already exists",
}

// String returns the standard text of the code, "Vendor defined fault" for
// the vendor ranges, and "Fault N" for codes the standard does not define.
func (c FaultCode) String() string {
	if s, ok := faultTexts[c]; ok {
		return s
	}
	if c.Vendor() {
		return "Vendor defined fault"
	}
	return "Fault " + strconv.FormatUint(uint64(c), 10)
}

// Vendor reports whether c is in a vendor extension range (8800-8899 or
// 9800-9899).
func (c FaultCode) Vendor() bool {
	return c >= 8800 && c <= 8899 || c >= 9800 && c <= 9899
}

// SOAPFaultCode returns the SOAP faultcode the standard pairs with c:
// "Client" when the request was at fault (invalid arguments, names, types,
// values, UUIDs, ...), "Server" otherwise.
func (c FaultCode) SOAPFaultCode() string {
	switch c {
	case 8003, 9003, 9005, 9006, 9007, 9008,
		9021, 9022, 9023, 9024, 9025, 9026, 9028, 9029, 9030, 9031, 9032:
		return "Client"
	}
	return "Server"
}

// Fault is a SOAP fault carrying a CWMP fault (Method "Fault"); it answers
// any request, in either direction.
//
// Encode writes faultstring "CWMP fault" and the code and texts in
// detail/cwmp:Fault. A SOAP fault without a cwmp:Fault detail, which some
// CPEs send, decodes with FaultCode 0 and FaultString holding the SOAP
// faultstring, and encodes back the same way.
type Fault struct {
	// SOAPFaultCode is "Client" or "Server" without a prefix; when empty
	// Encode uses FaultCode.SOAPFaultCode().
	SOAPFaultCode            string
	FaultCode                FaultCode
	FaultString              string
	SetParameterValuesFaults []SPVFault
}

// SPVFault is one SetParameterValuesFault entry: why one parameter of a
// SetParameterValues failed.
type SPVFault struct {
	ParameterName string
	FaultCode     FaultCode
	FaultString   string
}

// NewFault returns a fault with the standard SOAP faultcode for code and
// msg as FaultString, or the standard text of code when msg is empty.
func NewFault(code FaultCode, msg string) *Fault {
	if msg == "" {
		msg = code.String()
	}
	return &Fault{SOAPFaultCode: code.SOAPFaultCode(), FaultCode: code, FaultString: msg}
}

// Error makes a Fault usable as an error: "9005 Invalid parameter name".
func (f *Fault) Error() string {
	return "cwmp fault " + strconv.FormatUint(uint64(f.FaultCode), 10) + ": " + f.FaultString
}

// Method returns "Fault".
func (*Fault) Method() string { return "Fault" }

// FaultStruct is the outcome of a transfer or deployment unit operation:
// FaultCode 0 means success.
type FaultStruct struct {
	FaultCode   FaultCode
	FaultString string
}

func (f *Fault) appendXML(e *encoder) {
	code := f.SOAPFaultCode
	if code == "" {
		code = f.FaultCode.SOAPFaultCode()
	}
	e.str("faultcode", code)
	if f.FaultCode == 0 && len(f.SetParameterValuesFaults) == 0 {
		e.str("faultstring", f.FaultString)
		return
	}
	e.str("faultstring", "CWMP fault")
	e.start("detail")
	e.start("cwmp:Fault")
	e.uint("FaultCode", uint64(f.FaultCode))
	e.str("FaultString", f.FaultString)
	for i := range f.SetParameterValuesFaults {
		s := &f.SetParameterValuesFaults[i]
		e.start("SetParameterValuesFault")
		e.str("ParameterName", s.ParameterName)
		e.uint("FaultCode", uint64(s.FaultCode))
		e.str("FaultString", s.FaultString)
		e.end("SetParameterValuesFault")
	}
	e.end("cwmp:Fault")
	e.end("detail")
}

// decodeXML reads the SOAP Fault and the cwmp:Fault in its detail. A
// cwmp:Fault sent without the detail wrapper, or bare in the Body instead of
// a SOAP Fault, decodes the same way.
func (f *Fault) decodeXML(d *decoder) error {
	var soapString string
	haveDetail := false
	err := d.children(func(name string) error {
		switch name {
		case "faultcode":
			var s string
			if err := d.str(&s); err != nil {
				return err
			}
			s = strings.TrimSpace(s)
			if _, local, ok := splitQName(s); ok {
				s = local
			}
			f.SOAPFaultCode = s
			return nil
		case "faultstring":
			return d.str(&soapString)
		case "detail":
			return d.children(func(name string) error {
				if name != "Fault" {
					return d.skip()
				}
				haveDetail = true
				d.noteVersion(rankFault)
				return f.decodeFields(d)
			})
		case "Fault":
			haveDetail = true
			d.noteVersion(rankFault)
			return f.decodeFields(d)
		case "FaultCode", "FaultString", "SetParameterValuesFault":
			haveDetail = true
		}
		return f.decodeField(d, name)
	})
	if !haveDetail {
		f.FaultString = soapString
	}
	return err
}

func (f *Fault) decodeFields(d *decoder) error {
	return d.children(func(name string) error { return f.decodeField(d, name) })
}

func (f *Fault) decodeField(d *decoder, name string) error {
	switch name {
	case "FaultCode":
		return d.faultCode(&f.FaultCode)
	case "FaultString":
		return d.str(&f.FaultString)
	case "SetParameterValuesFault":
		f.SetParameterValuesFaults = append(f.SetParameterValuesFaults, SPVFault{})
		s := &f.SetParameterValuesFaults[len(f.SetParameterValuesFaults)-1]
		return d.children(func(name string) error {
			switch name {
			case "ParameterName":
				return d.str(&s.ParameterName)
			case "FaultCode":
				return d.faultCode(&s.FaultCode)
			case "FaultString":
				return d.str(&s.FaultString)
			}
			return d.skip()
		})
	}
	return d.skip()
}

func (f *FaultStruct) appendXML(e *encoder, name string) {
	e.start(name)
	e.uint("FaultCode", uint64(f.FaultCode))
	e.str("FaultString", f.FaultString)
	e.end(name)
}

func (f *FaultStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "FaultCode":
			return d.faultCode(&f.FaultCode)
		case "FaultString":
			return d.str(&f.FaultString)
		}
		return d.skip()
	})
}
