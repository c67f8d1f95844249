package fccwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Encode returns the canonical bytes of m: the fields in the order of the
// Go types, no insignificant white space, no HTML escaping, times in one
// spelling. The same message always encodes to the same bytes, so an
// outbox stores them once and re-sends them unchanged. Encode fills the
// envelope (wireVersion, kind) when it is empty, refuses one that names
// another kind or version, and refuses a message its schema refuses: an
// invalid message never reaches the grid.
func Encode(m Message) ([]byte, error) {
	env := m.envelope()
	k := m.MessageKind()
	switch {
	case env.Kind == "":
		env.Kind = k
	case env.Kind != k:
		return nil, fmt.Errorf("%w: a %T must be of kind %s, not %q", ErrInvalid, m, k, env.Kind)
	}
	switch {
	case env.WireVersion == "":
		env.WireVersion = Version
	case env.WireVersion != Version:
		return nil, fmt.Errorf("%w: this package speaks wire %s, not %q", ErrInvalid, Version, env.WireVersion)
	}
	if a, ok := m.(*Activate); ok {
		// nil and empty mean the same fleet; only one of them is canonical.
		for i := range a.Config.Groups {
			if a.Config.Groups[i].Devices == nil {
				a.Config.Groups[i].Devices = []Device{}
			}
		}
	}
	b, err := marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, k, err)
	}
	if err := Validate(k, b); err != nil {
		return nil, err
	}
	return b, nil
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// check holds a decoded message to the rules its schema cannot state.
func check(m Message) error {
	var err error
	switch m := m.(type) {
	case *Activate:
		err = checkActivate(m)
	case *Result:
		err = checkResult(m)
	case *ActivationFinished:
		if m.Done+m.Failed+m.Skipped > m.Devices {
			err = fmt.Errorf("done %d + failed %d + skipped %d exceed devices %d", m.Done, m.Failed, m.Skipped, m.Devices)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, m.MessageKind(), err)
	}
	return nil
}

func checkActivate(a *Activate) error {
	if a.Part > a.Parts {
		return fmt.Errorf("part %d of %d", a.Part, a.Parts)
	}
	if !a.Window.EndAt.After(a.Window.StartAt.Time) {
		return fmt.Errorf("window ends at %s, not after its start %s", a.Window.EndAt.Format(timeLayout), a.Window.StartAt.Format(timeLayout))
	}
	s := a.Schedule
	if want := Iterations(s.TotalTestDuration, s.SingleTestDuration); s.Iterations != want {
		return fmt.Errorf("iterations %d, but totalTestDuration %d h * 60 / singleTestDuration %d min is %d", s.Iterations, s.TotalTestDuration, s.SingleTestDuration, want)
	}
	configs := map[int64]bool{}
	cpes := map[int64]bool{}
	serials := map[string]bool{}
	for _, g := range a.Config.Groups {
		if configs[g.ConfigID] {
			return fmt.Errorf("configId %d appears twice", g.ConfigID)
		}
		configs[g.ConfigID] = true
		for _, d := range g.Devices {
			if cpes[d.CpeID] {
				return fmt.Errorf("cpeId %d appears twice", d.CpeID)
			}
			if serials[d.Serial] {
				return fmt.Errorf("serial %.64q appears twice", d.Serial)
			}
			cpes[d.CpeID], serials[d.Serial] = true, true
		}
	}
	return nil
}

func checkResult(r *Result) error {
	if r.FinishedAt.Before(r.StartedAt.Time) {
		return fmt.Errorf("finishedAt before startedAt")
	}
	if sp := r.Speed; sp != nil {
		want, err := Kbps(sp.TestBytes, sp.BOM.Time, sp.EOM.Time)
		if err != nil {
			return err
		}
		if sp.Kbps != want {
			return fmt.Errorf("kbps %v, but %d bytes from bom to eom make %v", sp.Kbps, sp.TestBytes, want)
		}
		for _, c := range sp.PerConnection {
			if !c.EOM.After(c.BOM.Time) {
				return fmt.Errorf("connection %d: eom not after bom", c.Connection)
			}
		}
	}
	if l := r.Latency; l != nil {
		if l.SuccessCount+l.FailureCount < 1 {
			return fmt.Errorf("latency with no ping counted")
		}
		if l.AverageMs != nil && (*l.MinMs > *l.AverageMs || *l.AverageMs > *l.MaxMs) {
			return fmt.Errorf("latency min %v, average %v, max %v out of order", *l.MinMs, *l.AverageMs, *l.MaxMs)
		}
	}
	return nil
}

// Iterations is the spec's count: totalTestDuration (hours) * 60 /
// singleTestDuration (minutes), integer division; 0 when single is not
// positive.
func Iterations(totalHours, singleMinutes int) int {
	if singleMinutes <= 0 {
		return 0
	}
	return totalHours * 60 / singleMinutes
}

// Kbps is the one speed formula of both sides: bytes * 8 / 1000 per second
// from BOM to EOM, rounded to three decimals so that the figure, and so
// the message, is the same whoever computes it.
func Kbps(bytes int64, bom, eom time.Time) (float64, error) {
	d := eom.Sub(bom)
	if d <= 0 {
		return 0, fmt.Errorf("eom %s not after bom %s", eom.UTC().Format(timeLayout), bom.UTC().Format(timeLayout))
	}
	if bytes < 0 {
		return 0, fmt.Errorf("negative byte count %d", bytes)
	}
	k := float64(bytes) * 8 / 1000 / d.Seconds()
	return math.Round(k*1000) / 1000, nil
}

// NaturalKey is the result's key in the result store and in the map
// fccResultDedup, and its grid message id, so a re-published result is
// dropped by the queue's duplicate window, then by the map, then by the
// store. The serial is base64url-encoded: serials may hold characters a
// map key may not.
func NaturalKey(activationID int64, serial string, dir Direction, iteration int) string {
	return strconv.FormatInt(activationID, 10) + "." + string(dir) + "." + strconv.Itoa(iteration) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(serial))
}

// NaturalKey returns the result's natural key (see the function).
func (r *Result) NaturalKey() string {
	return NaturalKey(r.ActivationID, r.Serial, r.Direction, r.Iteration)
}

// CommandMsgID is the grid message id of one send of a command. The payload
// of a re-send is byte for byte the stored one, but its message id names
// the attempt: under the same id the queue's duplicate window would drop a
// deliberate re-send.
func CommandMsgID(commandID string, part, attempt int) string {
	return commandID + "." + strconv.Itoa(part) + "." + strconv.Itoa(attempt)
}

// SplitActivate encodes a run's ACTIVATE as parts of at most maxBytes
// each (MaxMessageBytes when maxBytes is 0 or larger). Every part carries
// the head, schedule and every group's settings, and a slice of the fleet
// in its order; Part and Parts number them. The result is canonical: the
// same run splits into the same bytes.
func SplitActivate(a Activate, maxBytes int) ([][]byte, error) {
	if maxBytes <= 0 || maxBytes > MaxMessageBytes {
		maxBytes = MaxMessageBytes
	}
	type ref struct {
		group int
		dev   Device
		size  int
	}
	var devs []ref
	head := a
	head.Config.Groups = make([]Group, len(a.Config.Groups))
	for i, g := range a.Config.Groups {
		for _, d := range g.Devices {
			b, err := marshal(d)
			if err != nil {
				return nil, fmt.Errorf("%w: ACTIVATE: %v", ErrInvalid, err)
			}
			devs = append(devs, ref{group: i, dev: d, size: len(b) + 1})
		}
		head.Config.Groups[i] = g
		head.Config.Groups[i].Devices = []Device{}
	}
	// The head is sized with the widest part numbers a split can have.
	head.Part, head.Parts = len(devs)+1, len(devs)+1
	headBytes, err := Encode(&head)
	if err != nil {
		return nil, err
	}
	room := maxBytes - len(headBytes)
	var cuts []int // index into devs where each part starts
	used := room
	for i, d := range devs {
		if d.size > room {
			return nil, fmt.Errorf("%w: ACTIVATE: device %d does not fit a %d-byte part", ErrInvalid, d.dev.CpeID, maxBytes)
		}
		if used+d.size > room {
			cuts = append(cuts, i)
			used = 0
		}
		used += d.size
	}
	if len(cuts) == 0 {
		cuts = []int{0}
	}
	out := make([][]byte, 0, len(cuts))
	for p, start := range cuts {
		end := len(devs)
		if p+1 < len(cuts) {
			end = cuts[p+1]
		}
		part := head
		part.Part, part.Parts = p+1, len(cuts)
		part.Config.Groups = make([]Group, len(head.Config.Groups))
		copy(part.Config.Groups, head.Config.Groups)
		for i := range part.Config.Groups {
			part.Config.Groups[i].Devices = []Device{}
		}
		for _, d := range devs[start:end] {
			g := &part.Config.Groups[d.group]
			g.Devices = append(g.Devices, d.dev)
		}
		b, err := Encode(&part)
		if err != nil {
			return nil, err
		}
		if len(b) > maxBytes {
			return nil, fmt.Errorf("fccwire: part %d of ACTIVATE is %d bytes, over %d", p+1, len(b), maxBytes)
		}
		out = append(out, b)
	}
	return out, nil
}
