// Package fccwire is the wire contract between the campaign service and
// the ACS campaign executor (internal/fcc/WIRE.md): the messages as Go
// types, the grid names that carry them, one JSON Schema per message, and
// the canonical encoding that lets an outbox re-send a command byte for
// byte. Both sides import this package and nothing else of each other.
package fccwire

// Version is the wire contract version every message carries. 1.3 made
// the device serial mandatory in ACTIVATE; 1.5 added
// config.retry.stopDrainGraceSec.
const Version = "1.5"

// Grid names. Queues are JetStream work queues (stream GRID_Q_<name>,
// subject grid.q.<name>, shared durable consumer "workers"); maps are KV
// buckets (stream KV_<name>). See internal/platform/grid.
const (
	// QueueCommands carries ACTIVATE and STOP from the service to the ACS.
	QueueCommands = "fccCommandQueue"
	// QueueCommandAck carries COMMAND_ACK from the ACS to the service.
	QueueCommandAck = "fccCommandAck"
	// QueueDeviceState carries DEVICE_STATE from the ACS to the service.
	QueueDeviceState = "fccDeviceStateQueue"
	// QueueResults carries RESULT from the ACS to the service.
	QueueResults = "fccResultQueue"
	// QueueActivationFinished carries ACTIVATION_FINISHED from the ACS to
	// the service.
	QueueActivationFinished = "fccActivationFinishedQueue"
	// MapResultDedup is the service's map of result natural keys already
	// stored, with entry lifetime svc.fcc.dedup.ttl.
	MapResultDedup = "fccResultDedup"
)

// Kind names a message. Every message carries it in its "kind" field.
type Kind string

// The message kinds.
const (
	KindActivate           Kind = "ACTIVATE"
	KindStop               Kind = "STOP"
	KindCommandAck         Kind = "COMMAND_ACK"
	KindDeviceState        Kind = "DEVICE_STATE"
	KindResult             Kind = "RESULT"
	KindActivationFinished Kind = "ACTIVATION_FINISHED"
)

// Kinds lists every kind in the order WIRE.md describes them.
var Kinds = []Kind{KindActivate, KindStop, KindCommandAck, KindDeviceState, KindResult, KindActivationFinished}

// Queue returns the grid queue that carries messages of kind k.
func (k Kind) Queue() string {
	switch k {
	case KindActivate, KindStop:
		return QueueCommands
	case KindCommandAck:
		return QueueCommandAck
	case KindDeviceState:
		return QueueDeviceState
	case KindResult:
		return QueueResults
	case KindActivationFinished:
		return QueueActivationFinished
	}
	return ""
}

// TestType is the campaign type.
type TestType string

// The campaign types.
const (
	TypeSpeed   TestType = "SPEED"
	TypeLatency TestType = "LATENCY"
)

// TestMode is a TR-143 transfer mode.
type TestMode string

// The transfer modes.
const (
	FileBased TestMode = "FILE_BASED"
	TimeBased TestMode = "TIME_BASED"
)

// Protocol is a device's management protocol as the fleet was frozen.
type Protocol string

// The protocols. The service sends any other ACS protocol as UNKNOWN.
const (
	ProtocolTR069   Protocol = "TR069"
	ProtocolTR181   Protocol = "TR181"
	ProtocolUSP     Protocol = "USP"
	ProtocolUnknown Protocol = "UNKNOWN"
)

// StopReason says why the service stops a run.
type StopReason string

// The stop reasons, one per row of the spec that publishes a STOP.
const (
	// StopRequested: the stop request of a user.
	StopRequested StopReason = "STOP_REQUESTED"
	// StopOutboxAbandoned: the ACTIVATE's outbox row reached the attempt
	// limit.
	StopOutboxAbandoned StopReason = "OUTBOX_ABANDONED"
	// StopActivationExpired: the window start is older than
	// svc.fcc.activation-max-delay while the run is PLANNED or DISPATCHING.
	StopActivationExpired StopReason = "ACTIVATION_EXPIRED"
	// StopACSUnavailable: the ack came later than
	// svc.fcc.activation-max-delay (defensive stop).
	StopACSUnavailable StopReason = "ACS_UNAVAILABLE"
)

// AckStatus is the answer to a command.
type AckStatus string

// The ack statuses.
const (
	Accepted AckStatus = "ACCEPTED"
	Rejected AckStatus = "REJECTED"
)

// RejectReason says why the ACS refused a command.
type RejectReason string

// The reject reasons.
const (
	// RejectInvalidConfig: the command breaks the contract (schema, a
	// blank serial, an unknown type, a bad URL).
	RejectInvalidConfig RejectReason = "INVALID_CONFIG"
	// RejectUnsupportedVersion: the command's wireVersion is not one the
	// ACS speaks.
	RejectUnsupportedVersion RejectReason = "UNSUPPORTED_VERSION"
)

// DeviceStateValue is a device's state within a run.
type DeviceStateValue string

// The device states.
const (
	DeviceQueued  DeviceStateValue = "QUEUED"
	DeviceRunning DeviceStateValue = "RUNNING"
	DeviceDone    DeviceStateValue = "DONE"
	DeviceFailed  DeviceStateValue = "FAILED"
	DeviceSkipped DeviceStateValue = "SKIPPED"
)

// DeviceReason qualifies FAILED and SKIPPED.
type DeviceReason string

// The device reasons. SKIPPED takes UNSUPPORTED or OFFLINE; FAILED takes
// ERROR, STOPPED or WINDOW_CLOSED.
const (
	ReasonUnsupported  DeviceReason = "UNSUPPORTED"
	ReasonOffline      DeviceReason = "OFFLINE"
	ReasonError        DeviceReason = "ERROR"
	ReasonStopped      DeviceReason = "STOPPED"
	ReasonWindowClosed DeviceReason = "WINDOW_CLOSED"
)

// Direction is the natural key's direction: DOWNLOAD or UPLOAD for speed,
// PING for latency.
type Direction string

// The directions.
const (
	Download Direction = "DOWNLOAD"
	Upload   Direction = "UPLOAD"
	Ping     Direction = "PING"
)

// Outcome is a result's status: four independent outcomes.
type Outcome string

// The outcomes. WAN_BUSY is never counted as a breach.
const (
	// OutcomeOK: measured, and the tier is met (or none is set).
	OutcomeOK Outcome = "OK"
	// OutcomeBelowTier: measured, and the tier is missed (speed below
	// tierKbps, or latency average above latencyTierMs).
	OutcomeBelowTier Outcome = "BELOW_TIER"
	// OutcomeError: the diagnostic failed after its retries.
	OutcomeError Outcome = "ERROR"
	// OutcomeWANBusy: the WAN stayed above its threshold through every
	// WAN-usage retry, so nothing was measured.
	OutcomeWANBusy Outcome = "WAN_BUSY"
)

// FinishReason says how a run ended on the ACS.
type FinishReason string

// The finish reasons.
const (
	FinishCompleted    FinishReason = "COMPLETED"
	FinishWindowClosed FinishReason = "WINDOW_CLOSED"
	FinishStopped      FinishReason = "STOPPED"
)
