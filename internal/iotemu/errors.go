package iotemu

import (
	"net/http"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
)

// Error codes of the spec ("Codes seen"). Each failure answers
// {code, message, details}.
const (
	codeAlreadyInitialized   = "ALREADY_INITIALIZED"
	codeNotInitialized       = "NOT_INITIALIZED"
	codeAlreadyStarted       = "ALREADY_STARTED"
	codeInitFailed           = "INIT_FAILED"
	codeStartFailed          = "START_FAILED"
	codeNotStopped           = "EMULATOR_NOT_STOPPED"
	codeProtocolNotFound     = "PROTOCOL_NOT_FOUND"
	codeDeviceNotFound       = "DEVICE_NOT_FOUND"
	codeParameterNotFound    = "PARAMETER_NOT_FOUND"
	codeNotStarted           = "NOT_STARTED"
	codeParameterNotWritable = "PARAMETER_NOT_UPDATABLE"
	codeBadRequest           = "BAD_REQUEST"
	codeAutoupdateFailed     = "AUTOUPDATE_FAILED"
	codeDeviceStopFailed     = "DEVICE_STOP_FAILED"
	codeSnapshotNotFound     = "SNAPSHOT_NOT_FOUND"
	// Not in the spec's list: a protocol action the stack could not carry
	// out (422, "request accepted but the operation failed").
	codeHeartbeatFailed = "HEARTBEAT_FAILED"
	codeActionFailed    = "ACTION_FAILED"
	codeInternal        = "INTERNAL_ERROR"
)

func badRequest(format string, args ...any) error {
	return apperr.Invalid(codeBadRequest, format, args...)
}

// ErrorWriter writes the emulator's error body.
func ErrorWriter() httpx.ErrorWriter { return writeError }

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details"`
}

// writeError writes {code, message, details}. Decoder failures and
// oversized or mistyped bodies are 400 BAD_REQUEST here: the spec's status
// table has no 413 or 415.
func writeError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	pub := apperr.Public(err)
	code := apperr.Code(pub)
	switch status {
	case http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		status, code = http.StatusBadRequest, codeBadRequest
	}
	switch code {
	case "", "INVALID", "TOO_LARGE", "UNSUPPORTED_MEDIA":
		code = codeBadRequest
	case "INTERNAL":
		code = codeInternal
	case "NOT_FOUND":
		code = codeDeviceNotFound
	}
	msg := apperr.PublicMessage(pub)
	if msg == "" {
		// "a failure without a reason is described by its code"
		msg = code
	}
	var details any
	if e, ok := apperr.As(pub); ok && e.Details != nil {
		details = e.Details
	}
	_ = httpx.WriteJSON(w, status, errorBody{Code: code, Message: msg, Details: details})
}
