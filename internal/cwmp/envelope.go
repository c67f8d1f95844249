package cwmp

// Envelope is one SOAP envelope: the cwmp header elements and one RPC,
// response or fault in the body.
type Envelope struct {
	// Version is the cwmp namespace of the envelope. Decode takes it from
	// the namespace bound to the body element; an ACS answers in it.
	Version Version
	// ID is the cwmp:ID header that pairs a response with its request.
	// Encode writes it when it is not empty or IDMustUnderstand is set.
	ID string
	// IDMustUnderstand is the cwmp:ID's SOAP-ENV:mustUnderstand="1", which
	// the standard requires; NewEnvelope and Reply set it.
	IDMustUnderstand bool
	// HoldRequests asks the CPE not to send requests (nil: header absent).
	HoldRequests *bool
	// NoMoreRequests is the deprecated CPE hint that it will send no more
	// requests in the session (nil: header absent).
	NoMoreRequests *bool
	// SessionTimeout is the CPE's session timeout in seconds, CWMP 1.3 and
	// later (nil: header absent).
	SessionTimeout *uint32
	// SupportedCWMPVersions is the CPE's list such as "1.0,1.1,1.2,1.3,1.4"
	// sent with Inform, CWMP 1.4 and later ("": header absent).
	SupportedCWMPVersions string
	// UseCWMPVersion is the ACS's choice from that list ("": header absent).
	UseCWMPVersion string

	Body Message
}

// Message is an RPC, a response or a Fault: one type per message, so
// callers type-switch on Envelope.Body. Method returns the element name,
// such as "Inform" or "GetParameterValuesResponse". The set of messages is
// closed: only this package's types implement it.
type Message interface {
	Method() string
	appendXML(e *encoder)
	decodeXML(d *decoder) error
}

// NewEnvelope returns an envelope in version v with cwmp:ID id, marked
// mustUnderstand as the standard requires.
func NewEnvelope(v Version, id string, body Message) *Envelope {
	return &Envelope{Version: v, ID: id, IDMustUnderstand: true, Body: body}
}

// Reply returns the envelope that answers env with body: same version and
// same cwmp:ID, as a response or fault must carry.
func (env *Envelope) Reply(body Message) *Envelope {
	return NewEnvelope(env.Version, env.ID, body)
}

// methods maps body element names to their message types.
var methods = map[string]func() Message{
	"Fault": func() Message { return new(Fault) },

	"Inform":                                  func() Message { return new(Inform) },
	"InformResponse":                          func() Message { return new(InformResponse) },
	"GetRPCMethods":                           func() Message { return new(GetRPCMethods) },
	"GetRPCMethodsResponse":                   func() Message { return new(GetRPCMethodsResponse) },
	"SetParameterValues":                      func() Message { return new(SetParameterValues) },
	"SetParameterValuesResponse":              func() Message { return new(SetParameterValuesResponse) },
	"GetParameterValues":                      func() Message { return new(GetParameterValues) },
	"GetParameterValuesResponse":              func() Message { return new(GetParameterValuesResponse) },
	"GetParameterNames":                       func() Message { return new(GetParameterNames) },
	"GetParameterNamesResponse":               func() Message { return new(GetParameterNamesResponse) },
	"SetParameterAttributes":                  func() Message { return new(SetParameterAttributes) },
	"SetParameterAttributesResponse":          func() Message { return new(SetParameterAttributesResponse) },
	"GetParameterAttributes":                  func() Message { return new(GetParameterAttributes) },
	"GetParameterAttributesResponse":          func() Message { return new(GetParameterAttributesResponse) },
	"AddObject":                               func() Message { return new(AddObject) },
	"AddObjectResponse":                       func() Message { return new(AddObjectResponse) },
	"DeleteObject":                            func() Message { return new(DeleteObject) },
	"DeleteObjectResponse":                    func() Message { return new(DeleteObjectResponse) },
	"Reboot":                                  func() Message { return new(Reboot) },
	"RebootResponse":                          func() Message { return new(RebootResponse) },
	"FactoryReset":                            func() Message { return new(FactoryReset) },
	"FactoryResetResponse":                    func() Message { return new(FactoryResetResponse) },
	"ScheduleInform":                          func() Message { return new(ScheduleInform) },
	"ScheduleInformResponse":                  func() Message { return new(ScheduleInformResponse) },
	"Download":                                func() Message { return new(Download) },
	"DownloadResponse":                        func() Message { return new(DownloadResponse) },
	"Upload":                                  func() Message { return new(Upload) },
	"UploadResponse":                          func() Message { return new(UploadResponse) },
	"TransferComplete":                        func() Message { return new(TransferComplete) },
	"TransferCompleteResponse":                func() Message { return new(TransferCompleteResponse) },
	"AutonomousTransferComplete":              func() Message { return new(AutonomousTransferComplete) },
	"AutonomousTransferCompleteResponse":      func() Message { return new(AutonomousTransferCompleteResponse) },
	"RequestDownload":                         func() Message { return new(RequestDownload) },
	"RequestDownloadResponse":                 func() Message { return new(RequestDownloadResponse) },
	"ScheduleDownload":                        func() Message { return new(ScheduleDownload) },
	"ScheduleDownloadResponse":                func() Message { return new(ScheduleDownloadResponse) },
	"CancelTransfer":                          func() Message { return new(CancelTransfer) },
	"CancelTransferResponse":                  func() Message { return new(CancelTransferResponse) },
	"GetQueuedTransfers":                      func() Message { return new(GetQueuedTransfers) },
	"GetQueuedTransfersResponse":              func() Message { return new(GetQueuedTransfersResponse) },
	"GetAllQueuedTransfers":                   func() Message { return new(GetAllQueuedTransfers) },
	"GetAllQueuedTransfersResponse":           func() Message { return new(GetAllQueuedTransfersResponse) },
	"ChangeDUState":                           func() Message { return new(ChangeDUState) },
	"ChangeDUStateResponse":                   func() Message { return new(ChangeDUStateResponse) },
	"DUStateChangeComplete":                   func() Message { return new(DUStateChangeComplete) },
	"DUStateChangeCompleteResponse":           func() Message { return new(DUStateChangeCompleteResponse) },
	"AutonomousDUStateChangeComplete":         func() Message { return new(AutonomousDUStateChangeComplete) },
	"AutonomousDUStateChangeCompleteResponse": func() Message { return new(AutonomousDUStateChangeCompleteResponse) },
	"Kicked":              func() Message { return new(Kicked) },
	"KickedResponse":      func() Message { return new(KickedResponse) },
	"SetVouchers":         func() Message { return new(SetVouchers) },
	"SetVouchersResponse": func() Message { return new(SetVouchersResponse) },
	"GetOptions":          func() Message { return new(GetOptions) },
	"GetOptionsResponse":  func() Message { return new(GetOptionsResponse) },
}

// noArgs is embedded by the messages that carry no arguments.
type noArgs struct{}

func (noArgs) appendXML(*encoder)         {}
func (noArgs) decodeXML(d *decoder) error { return d.skip() }
