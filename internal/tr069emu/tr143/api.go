// Package tr143 performs the TR-143 diagnostics an emulated CPE is asked
// for: HTTP download and upload tests and IP ping, with real traffic.
//
// SKELETON: the exported signatures are the contract the emulator engine is
// written against. Bodies are filled in by the implementation.
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

// Object returns the diagnostics object path of kind in a data model
// ("TR-098" or "TR-181"), e.g. "Device.IP.Diagnostics.DownloadDiagnostics.".
func Object(dataModel string, kind Kind) string { panic("unimplemented") }

// KindOf returns the diagnostic whose DiagnosticsState parameter is name,
// for either data model; ok is false for any other parameter.
func KindOf(name string) (kind Kind, dataModel string, ok bool) { panic("unimplemented") }

// Options tune a run beyond what the parameters say.
type Options struct {
	// ExtraDelay is added before the transfer (makeSpeedDelay's 3 s).
	ExtraDelay time.Duration
	// Timeout bounds the whole diagnostic.
	Timeout time.Duration
}

// Run performs the diagnostic described by the parameters of its object
// (get returns a parameter's current value by full name, "" when absent)
// and returns the result parameters to write back (full name -> value),
// DiagnosticsState included. It never fails: errors become the TR-143
// error states (Error_CannotResolveHostName, Error_InitConnectionFailed,
// Error_NoResponse, Error_TransferFailed, Error_Timeout, ...).
func Run(ctx context.Context, dataModel string, kind Kind, get func(name string) string, opt Options) map[string]string {
	panic("unimplemented")
}
