package fccwire

import (
	"bytes"
	"fmt"
	"time"
)

// timeLayout is the one spelling of a time on the wire: UTC, microseconds
// always written. TR-143 reports microseconds; a fixed width keeps the
// encoding canonical.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a wire timestamp. It embeds time.Time for arithmetic and
// overrides its JSON form.
type Time struct{ time.Time }

// At returns t as a wire Time, in UTC and cut to microseconds as it will
// travel.
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Microsecond)} }

// MarshalJSON writes the canonical form.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return nil, fmt.Errorf("fccwire: zero time")
	}
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = t.UTC().Truncate(time.Microsecond).AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time; the schema has already held it
// to the UTC form.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return fmt.Errorf("fccwire: null time")
	}
	var err error
	t.Time, err = time.Parse(`"`+time.RFC3339Nano+`"`, string(b))
	return err
}

// Envelope is the head of every message.
type Envelope struct {
	WireVersion string `json:"wireVersion"`
	Kind        Kind   `json:"kind"`
}

func (e *Envelope) envelope() *Envelope { return e }

// Message is implemented by pointers to the message types.
type Message interface {
	// MessageKind is the kind the type encodes as.
	MessageKind() Kind
	envelope() *Envelope
}

// Activate starts a run (service to ACS). A large fleet travels in several
// parts (see SplitActivate): every part repeats the run's head and settings
// and carries a slice of the devices; the ACS starts the run once it holds
// all parts.
type Activate struct {
	Envelope
	// CommandID is stable across re-sends: the outbox row's id.
	CommandID    string   `json:"commandId"`
	ActivationID int64    `json:"activationId"`
	FccTestID    int64    `json:"fccTestId"`
	RunNumber    int      `json:"runNumber"`
	Type         TestType `json:"type"`
	DomainID     int64    `json:"domainId"`
	// Part numbers this message from 1 to Parts.
	Part     int            `json:"part"`
	Parts    int            `json:"parts"`
	Window   Window         `json:"window"`
	Schedule Schedule       `json:"schedule"`
	Config   ActivateConfig `json:"config"`
}

// Window is the run's window: end = start + totalTestDuration.
type Window struct {
	StartAt Time `json:"startAt"`
	EndAt   Time `json:"endAt"`
}

// Schedule is the campaign's activation block, in specification units.
type Schedule struct {
	// TotalTestDuration is in hours.
	TotalTestDuration int `json:"totalTestDuration"`
	// SingleTestDuration is in minutes: one window slot per iteration.
	SingleTestDuration int `json:"singleTestDuration"`
	// Iterations = TotalTestDuration*60/SingleTestDuration, at least 1.
	Iterations int `json:"iterations"`
	// BatchInterval is in minutes between two device batches of a slot.
	BatchInterval        int  `json:"batchInterval"`
	FailedTestRetries    int  `json:"failedTestRetries"`
	WanUsageRetries      int  `json:"wanUsageRetries"`
	OnlyOnlineDevices    bool `json:"onlyOnlineDevices"`
	RequestDeviceConnect bool `json:"requestDeviceConnect"`
}

// ActivateConfig is the resolved configuration of the run.
type ActivateConfig struct {
	Retry  Retry   `json:"retry"`
	Groups []Group `json:"groups"`
}

// Retry holds the stop drain bound (wire 1.5).
type Retry struct {
	// StopDrainGraceSec is svc.fcc.stop-grace in whole seconds (15 min is
	// 900), frozen when the run was created.
	StopDrainGraceSec int64 `json:"stopDrainGraceSec"`
}

// Group is one configuration of the campaign: its resolved settings and
// its frozen fleet. Exactly one of Speed and Ping is set, as the type says.
type Group struct {
	ConfigID     int64          `json:"configId"`
	Manufacturer string         `json:"manufacturer,omitempty"`
	Model        string         `json:"model,omitempty"`
	Speed        *SpeedSettings `json:"speed,omitempty"`
	Ping         *PingSettings  `json:"ping,omitempty"`
	Devices      []Device       `json:"devices"`
}

// SpeedSettings are the resolved speed settings; nil pointers and empty
// strings are settings no level of the chain set.
type SpeedSettings struct {
	TestMode TestMode `json:"testMode"`
	// TimeBasedTestDuration is in seconds (TR-143 1..999), TIME_BASED only.
	TimeBasedTestDuration *int   `json:"timeBasedTestDuration,omitempty"`
	DownloadURL           string `json:"downloadUrl,omitempty"`
	UploadURL             string `json:"uploadUrl,omitempty"`
	DownloadConnections   *int   `json:"downloadConnections,omitempty"`
	UploadConnections     *int   `json:"uploadConnections,omitempty"`
	// FileSizeUpload is in bytes.
	FileSizeUpload *int64 `json:"fileSizeUpload,omitempty"`
	// Tiers and WAN thresholds are in Kbps.
	SpeedTierDownload    *int64 `json:"speedTierDownload,omitempty"`
	SpeedTierUpload      *int64 `json:"speedTierUpload,omitempty"`
	WanDownloadThreshold *int64 `json:"wanDownloadThreshold,omitempty"`
	WanUploadThreshold   *int64 `json:"wanUploadThreshold,omitempty"`
}

// PingSettings are the resolved latency settings (the spec's config.ping).
type PingSettings struct {
	TestHost            string `json:"testHost"`
	NumberOfRepetitions *int   `json:"numberOfRepetitions,omitempty"`
	TimeoutMs           *int   `json:"timeoutMs,omitempty"`
	DataBlockSize       *int   `json:"dataBlockSize,omitempty"`
	// LatencyTierMs is the average above which a result is BELOW_TIER.
	LatencyTierMs        *int64 `json:"latencyTierMs,omitempty"`
	WanDownloadThreshold *int64 `json:"wanDownloadThreshold,omitempty"`
	WanUploadThreshold   *int64 `json:"wanUploadThreshold,omitempty"`
}

// Device is one frozen fleet row. The serial is mandatory since wire 1.3.
type Device struct {
	CpeID    int64    `json:"cpeId"`
	Serial   string   `json:"serial"`
	Protocol Protocol `json:"protocol"`
}

// Stop ends a run (service to ACS). Stopping a run the ACS does not know
// is accepted: a defensive STOP may overtake or replace its ACTIVATE.
type Stop struct {
	Envelope
	CommandID    string     `json:"commandId"`
	ActivationID int64      `json:"activationId"`
	FccTestID    int64      `json:"fccTestId"`
	Reason       StopReason `json:"reason"`
	Message      string     `json:"message,omitempty"`
}

// CommandAck answers one command (ACS to service), once per ACTIVATE part.
type CommandAck struct {
	Envelope
	CommandID    string       `json:"commandId"`
	Command      Kind         `json:"command"`
	ActivationID int64        `json:"activationId"`
	Part         int          `json:"part,omitempty"`
	Status       AckStatus    `json:"status"`
	Reason       RejectReason `json:"reason,omitempty"`
	Message      string       `json:"message,omitempty"`
	AcsVersion   string       `json:"acsVersion,omitempty"`
	AckedAt      Time         `json:"ackedAt"`
}

// DeviceState reports one device's state in a run (ACS to service). Seq
// grows per device and run, so a state delivered late never overwrites a
// newer one.
type DeviceState struct {
	Envelope
	ActivationID int64            `json:"activationId"`
	CpeID        int64            `json:"cpeId"`
	Serial       string           `json:"serial"`
	State        DeviceStateValue `json:"state"`
	Reason       DeviceReason     `json:"reason,omitempty"`
	Message      string           `json:"message,omitempty"`
	Seq          int64            `json:"seq"`
	At           Time             `json:"at"`
}

// Result is one measurement (ACS to service). Its natural key is
// (activationId, serial, direction, iteration).
type Result struct {
	Envelope
	Type         TestType  `json:"type"`
	FccTestID    int64     `json:"fccTestId"`
	ActivationID int64     `json:"activationId"`
	Iteration    int       `json:"iteration"`
	DomainID     int64     `json:"domainId"`
	ConfigID     int64     `json:"configId"`
	CpeID        int64     `json:"cpeId"`
	Serial       string    `json:"serial"`
	Direction    Direction `json:"direction"`
	// URL is the transfer URL for speed and the ping host for latency.
	URL            string  `json:"url"`
	TierKbps       *int64  `json:"tierKbps,omitempty"`
	StartedAt      Time    `json:"startedAt"`
	FinishedAt     Time    `json:"finishedAt"`
	Status         Outcome `json:"status"`
	Description    string  `json:"description,omitempty"`
	WanUsageDlKbps *int64  `json:"wanUsageDlKbps,omitempty"`
	WanUsageUlKbps *int64  `json:"wanUsageUlKbps,omitempty"`
	// AfterStop marks a measurement finished while the run drained after a
	// STOP.
	AfterStop bool `json:"afterStop"`
	// Attempts counts tries, failed-test and WAN-usage retries included.
	Attempts int            `json:"attempts"`
	Speed    *SpeedResult   `json:"speed,omitempty"`
	Latency  *LatencyResult `json:"latency,omitempty"`
}

// SpeedResult holds the TR-143 figures of one transfer.
type SpeedResult struct {
	// Kbps = testBytes * 8 / 1000 / (eom - bom in seconds), rounded to
	// three decimals (see Kbps).
	Kbps                float64            `json:"kbps"`
	TestMode            TestMode           `json:"testMode"`
	ROMTime             *Time              `json:"romTime,omitempty"`
	BOM                 Time               `json:"bom"`
	EOM                 Time               `json:"eom"`
	TestBytes           int64              `json:"testBytes"`
	TotalBytes          *int64             `json:"totalBytes,omitempty"`
	TCPOpenRequestTime  *Time              `json:"tcpOpenRequestTime,omitempty"`
	TCPOpenResponseTime *Time              `json:"tcpOpenResponseTime,omitempty"`
	Connections         int                `json:"connections"`
	PerConnection       []ConnectionResult `json:"perConnection,omitempty"`
}

// ConnectionResult is one TR-143 per-connection result.
type ConnectionResult struct {
	Connection          int    `json:"connection"`
	ROMTime             *Time  `json:"romTime,omitempty"`
	BOM                 Time   `json:"bom"`
	EOM                 Time   `json:"eom"`
	TestBytes           int64  `json:"testBytes"`
	TotalBytes          *int64 `json:"totalBytes,omitempty"`
	TCPOpenRequestTime  *Time  `json:"tcpOpenRequestTime,omitempty"`
	TCPOpenResponseTime *Time  `json:"tcpOpenResponseTime,omitempty"`
}

// LatencyResult holds the TR-143 IP ping figures, in milliseconds.
// Average, min and max are present when at least one ping succeeded.
type LatencyResult struct {
	AverageMs    *float64 `json:"averageMs,omitempty"`
	MinMs        *float64 `json:"minMs,omitempty"`
	MaxMs        *float64 `json:"maxMs,omitempty"`
	SuccessCount int      `json:"successCount"`
	FailureCount int      `json:"failureCount"`
}

// ActivationFinished says the run is over on the ACS (ACS to service).
type ActivationFinished struct {
	Envelope
	ActivationID int64        `json:"activationId"`
	FccTestID    int64        `json:"fccTestId"`
	Reason       FinishReason `json:"reason"`
	FinishedAt   Time         `json:"finishedAt"`
	Devices      int64        `json:"devices"`
	Done         int64        `json:"done"`
	Failed       int64        `json:"failed"`
	Skipped      int64        `json:"skipped"`
	// ResultsSent counts the RESULT messages of the run, so the service can
	// tell when every result has arrived.
	ResultsSent int64 `json:"resultsSent"`
}

// MessageKind implements Message.
func (*Activate) MessageKind() Kind { return KindActivate }

// MessageKind implements Message.
func (*Stop) MessageKind() Kind { return KindStop }

// MessageKind implements Message.
func (*CommandAck) MessageKind() Kind { return KindCommandAck }

// MessageKind implements Message.
func (*DeviceState) MessageKind() Kind { return KindDeviceState }

// MessageKind implements Message.
func (*Result) MessageKind() Kind { return KindResult }

// MessageKind implements Message.
func (*ActivationFinished) MessageKind() Kind { return KindActivationFinished }
