package tr143

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// DiagnosticsState values written by Run (TR-143 names; TR-098 and TR-181
// enumerations).
const (
	StateCompleted             = "Completed" // transfers
	StateComplete              = "Complete"  // ping: TR-143 spells it differently
	StateCanceled              = "Canceled"  // TR-181 only
	StateNone                  = "None"
	StateCannotResolveHostName = "Error_CannotResolveHostName"
	StateInitConnectionFailed  = "Error_InitConnectionFailed"
	StateNoResponse            = "Error_NoResponse"
	StateTransferFailed        = "Error_TransferFailed"
	StateIncorrectSize         = "Error_IncorrectSize"
	StateTimeout               = "Error_Timeout"
	StateOther                 = "Error_Other"
)

// MethodParam is the vendor parameter of the ping object that says how the
// echo was done: "ICMP" or "TCP".
const MethodParam = "X_CPESUITE_Method"

const (
	methodICMP, methodTCP       = "ICMP", "TCP"
	perConnectionEntriesParam   = "PerConnectionResultNumberOfEntries"
	perConnectionResultPrefix   = "PerConnectionResult."
	timeLayout                  = "2006-01-02T15:04:05.000000Z"
	unknownTime                 = "0001-01-01T00:00:00Z" // TR-106 "unknown"
	defaultPingRepetitions      = 4
	defaultPingTimeoutMs        = 1000
	defaultPingDataBlockSize    = 64
	maxPingRepetitions          = 10000
	maxTimeBasedDurationSeconds = 999 // TR-181 range
)

// knobs are test hooks that Run leaves at their zero value.
type knobs struct {
	// forceTCPPing skips ICMP even when a raw socket could be opened.
	forceTCPPing bool
}

func run(ctx context.Context, dataModel string, kind Kind, get func(string) string, opt Options, k knobs) map[string]string {
	obj := Object(dataModel, kind)
	if obj == "" {
		return map[string]string{}
	}
	if get == nil {
		get = func(string) string { return "" }
	}
	in := inputs{obj: obj, get: get}
	if ctx.Err() != nil {
		return failure(dataModel, kind, obj, ctxState(ctx, dataModel, kind))
	}
	switch kind {
	case Download, Upload:
		return runTransfer(ctx, dataModel, kind, in, opt)
	default:
		return runPing(ctx, dataModel, in, opt, k)
	}
}

// ctxState is the state of a run stopped by its context. The caller's
// cancellation is not a failure of the diagnostic: TR-181 has Canceled for
// it, and TR-098, which has not, gets None (no result). Running out of time
// is Error_Timeout, which the ping objects lack: Error_Other there.
func ctxState(parent context.Context, dataModel string, kind Kind) string {
	switch {
	case errors.Is(parent.Err(), context.Canceled) && dataModel == TR181:
		return StateCanceled
	case errors.Is(parent.Err(), context.Canceled):
		return StateNone
	case kind == IPPing:
		return StateOther
	}
	return StateTimeout
}

// runTimeout is the bound of one run.
func runTimeout(opt Options, floor time.Duration) time.Duration {
	if opt.Timeout > 0 {
		return opt.Timeout
	}
	return max(DefaultTimeout, floor)
}

// stallAllowance is what a transfer's SpeedDelay adds to its time bound:
// the first stall, which every throttled transfer pays whatever its size.
// Later stalls are the slow link's own time and count against the Timeout
// as a slow link's would.
func stallAllowance(opt Options) time.Duration {
	return max(opt.SpeedDelay, 0)
}

// inputs reads the parameters of one diagnostics object.
type inputs struct {
	obj string
	get func(string) string
}

func (in inputs) str(name string) string { return strings.TrimSpace(in.get(in.obj + name)) }

// uint reads an unsignedInt; def when absent, ok false when malformed or
// above limit.
func (in inputs) uint(name string, def, limit uint64) (uint64, bool) {
	s := in.str(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > limit {
		return 0, false
	}
	return n, true
}

func (in inputs) bool(name string) bool {
	switch strings.ToLower(in.str(name)) {
	case "1", "true":
		return true
	}
	return false
}

// network returns the dial network chosen by TR-181's ProtocolVersion
// (Any, IPv4, IPv6); TR-098 has no such parameter.
func (in inputs) network(base string) string {
	switch in.str("ProtocolVersion") {
	case "IPv4":
		return base + "4"
	case "IPv6":
		return base + "6"
	}
	return base
}

// formatTime renders a TR-143 time: UTC with microseconds.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return unknownTime
	}
	return t.UTC().Format(timeLayout)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
