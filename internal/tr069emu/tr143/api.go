// Package tr143 performs the TR-143 diagnostics an emulated CPE is asked
// for: HTTP download and upload tests and IP ping, with real traffic.
//
// Transfers open their own TCP connections (one http.Transport per
// connection, never the shared default) and count the bytes actually read
// and written on them; times come from the same counting connection, so
// they are those of real socket operations. Ping uses ICMP echo over a raw
// socket when the process may open one, else a TCP connect round trip.
package tr143

import (
	"context"
	"time"
)

// Kind is a diagnostic.
type Kind int

const (
	Download Kind = iota + 1
	Upload
	IPPing
)

// The data models, as Object, KindOf and Run spell them.
const (
	TR098 = "TR-098"
	TR181 = "TR-181"
)

// MaxConnections is the most TCP connections a TR-181 transfer uses; a
// larger NumberOfConnections is capped to it. The emulator advertises it as
// DownloadDiagnosticMaxConnections and UploadDiagnosticsMaxConnections.
const MaxConnections = 16

// DefaultTimeout bounds a run when Options.Timeout is zero. Time-based
// transfers get at least their duration plus TimeBasedGrace.
const (
	DefaultTimeout = 60 * time.Second
	TimeBasedGrace = 30 * time.Second
)

var objects = map[string]map[Kind]string{
	TR098: {
		Download: "InternetGatewayDevice.DownloadDiagnostics.",
		Upload:   "InternetGatewayDevice.UploadDiagnostics.",
		IPPing:   "InternetGatewayDevice.IPPingDiagnostics.",
	},
	TR181: {
		Download: "Device.IP.Diagnostics.DownloadDiagnostics.",
		Upload:   "Device.IP.Diagnostics.UploadDiagnostics.",
		IPPing:   "Device.IP.Diagnostics.IPPing.",
	},
}

// Object returns the diagnostics object path of kind in a data model
// ("TR-098" or "TR-181"), e.g. "Device.IP.Diagnostics.DownloadDiagnostics.".
// It returns "" for any other data model or kind.
func Object(dataModel string, kind Kind) string { return objects[dataModel][kind] }

// KindOf returns the diagnostic whose DiagnosticsState parameter is name,
// for either data model; ok is false for any other parameter.
func KindOf(name string) (kind Kind, dataModel string, ok bool) {
	for dm, kinds := range objects {
		for k, obj := range kinds {
			if name == obj+"DiagnosticsState" {
				return k, dm, true
			}
		}
	}
	return 0, "", false
}

// Options tune a run beyond what the parameters say.
type Options struct {
	// SpeedDelay throttles a download or upload (makeSpeedDelay's 3 s):
	// the transfer stalls this long after its first payload byte and again
	// after every SpeedDelayBlock bytes, all connections together, so the
	// measured speed falls (EOM later, fewer bytes in a time-based window).
	// Ping ignores it.
	SpeedDelay time.Duration
	// Timeout bounds the whole diagnostic.
	Timeout time.Duration
	// OnBytes, when set, is told of every byte the diagnostic reads (rx)
	// or writes (tx) on its sockets, as it happens, from any goroutine.
	OnBytes func(rx, tx int64)
}

// Run performs the diagnostic described by the parameters of its object
// (get returns a parameter's current value by full name, "" when absent)
// and returns the result parameters to write back (full name -> value),
// DiagnosticsState included. It never fails: errors become the TR-143
// error states (Error_CannotResolveHostName, Error_InitConnectionFailed,
// Error_NoResponse, Error_TransferFailed, Error_Timeout, ...).
//
// Timeout (DefaultTimeout when zero) is stretched by the stalls SpeedDelay
// may add to a transfer. On an error state every result parameter is reset (counts to
// 0, times to the TR-106 unknown time) so that no stale figure of an
// earlier run survives. When ctx is cancelled the state is "Canceled" on
// TR-181 and "None" on TR-098, which has no such state. An unknown data
// model or kind yields an empty map.
func Run(ctx context.Context, dataModel string, kind Kind, get func(name string) string, opt Options) map[string]string {
	return run(ctx, dataModel, kind, get, opt, knobs{})
}
