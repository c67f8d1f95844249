package fccwire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/fccwire"
)

var update = flag.Bool("update", false, "rewrite the golden files of the wire")

// TestExamplesMatchTheirSchemas encodes realistic messages of every kind,
// SPEED and LATENCY, and holds them to their schemas; decoding and
// encoding again must give the same bytes.
func TestExamplesMatchTheirSchemas(t *testing.T) {
	tests := []struct {
		name string
		msg  fccwire.Message
	}{
		{"activate speed", speedActivate()},
		{"activate latency", latencyActivate()},
		{"activate empty fleet part", func() fccwire.Message {
			a := speedActivate()
			a.Config.Groups[1].Devices = nil
			return a
		}()},
		{"stop requested", stop()},
		{"stop abandoned", &fccwire.Stop{CommandID: "outbox-9", ActivationID: 1, FccTestID: 1, Reason: fccwire.StopOutboxAbandoned}},
		{"stop expired", &fccwire.Stop{CommandID: "outbox-9", ActivationID: 1, FccTestID: 1, Reason: fccwire.StopActivationExpired}},
		{"stop acs unavailable", &fccwire.Stop{CommandID: "outbox-9", ActivationID: 1, FccTestID: 1, Reason: fccwire.StopACSUnavailable}},
		{"ack accepted", ack(fccwire.Accepted)},
		{"ack rejected", ack(fccwire.Rejected)},
		{"ack of stop", &fccwire.CommandAck{CommandID: "outbox-4713", Command: fccwire.KindStop, ActivationID: 912, Status: fccwire.Accepted, AckedAt: at(0)}},
		{"state queued", deviceState(fccwire.DeviceQueued, "")},
		{"state running", deviceState(fccwire.DeviceRunning, "")},
		{"state done", deviceState(fccwire.DeviceDone, "")},
		{"state failed", deviceState(fccwire.DeviceFailed, fccwire.ReasonError)},
		{"state failed stopped", deviceState(fccwire.DeviceFailed, fccwire.ReasonStopped)},
		{"state skipped unsupported", deviceState(fccwire.DeviceSkipped, fccwire.ReasonUnsupported)},
		{"state skipped offline", deviceState(fccwire.DeviceSkipped, fccwire.ReasonOffline)},
		{"result speed below tier", speedResult()},
		{"result speed ok upload", func() fccwire.Message {
			r := speedResult()
			r.Direction, r.Status, r.URL, r.Speed.PerConnection = fccwire.Upload, fccwire.OutcomeOK, "http://127.0.0.1:7580/upload", nil
			return r
		}()},
		{"result speed error without figures", func() fccwire.Message {
			r := speedResult()
			r.Status, r.Speed, r.Attempts, r.Description = fccwire.OutcomeError, nil, 3, "9002 Internal error: transfer failed"
			return r
		}()},
		{"result speed wan busy", func() fccwire.Message {
			r := speedResult()
			r.Status, r.Speed, r.Attempts, r.WanUsageDlKbps = fccwire.OutcomeWANBusy, nil, 4, ptr(int64(5_000))
			return r
		}()},
		{"result speed after stop", func() fccwire.Message {
			r := speedResult()
			r.AfterStop = true
			return r
		}()},
		{"result latency ok", latencyResult()},
		{"result latency below tier", func() fccwire.Message {
			r := latencyResult()
			r.Status, r.Latency.AverageMs, r.Latency.MaxMs = fccwire.OutcomeBelowTier, ptr(55.0), ptr(80.0)
			return r
		}()},
		{"result latency error every ping lost", func() fccwire.Message {
			r := latencyResult()
			r.Status, r.Latency = fccwire.OutcomeError, &fccwire.LatencyResult{FailureCount: 10}
			return r
		}()},
		{"result latency wan busy", func() fccwire.Message {
			r := latencyResult()
			r.Status, r.Latency = fccwire.OutcomeWANBusy, nil
			return r
		}()},
		{"finished", finished()},
		{"finished stopped", &fccwire.ActivationFinished{ActivationID: 1, FccTestID: 1, Reason: fccwire.FinishStopped, FinishedAt: at(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := fccwire.Encode(tt.msg)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			k := tt.msg.MessageKind()
			if err := fccwire.Validate(k, b); err != nil {
				t.Fatalf("Validate: %v\n%s", err, b)
			}
			if got, err := fccwire.PeekKind(b); err != nil || got != k {
				t.Fatalf("PeekKind = %q, %v; want %s", got, err, k)
			}
			m, err := fccwire.Decode(k, b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			again, err := fccwire.Encode(m)
			if err != nil {
				t.Fatalf("Encode after Decode: %v", err)
			}
			if !bytes.Equal(again, b) {
				t.Fatalf("re-encoding changed the bytes:\n%s\n%s", b, again)
			}
		})
	}
}

// TestSchemasRefuse changes one thing of a valid message at a time and
// expects the contract to refuse it.
func TestSchemasRefuse(t *testing.T) {
	tests := []struct {
		name   string
		msg    fccwire.Message
		change func(m map[string]any)
	}{
		// The serial is mandatory since wire 1.3.
		{"activate missing serial", speedActivate(), del("config.groups.0.devices.1.serial")},
		{"activate blank serial", speedActivate(), set("config.groups.0.devices.1.serial", "")},
		{"activate white space serial", speedActivate(), set("config.groups.0.devices.1.serial", "   ")},
		{"activate serial with trailing blank", speedActivate(), set("config.groups.0.devices.1.serial", "ACME0002 ")},
		{"activate serial with control character", speedActivate(), set("config.groups.0.devices.1.serial", "AC\u0000ME")},
		{"activate serial too long", speedActivate(), set("config.groups.0.devices.1.serial", strings.Repeat("S", 65))},
		{"activate missing stopDrainGraceSec", speedActivate(), del("config.retry.stopDrainGraceSec")},
		{"activate negative stopDrainGraceSec", speedActivate(), set("config.retry.stopDrainGraceSec", -1)},
		{"activate fractional stopDrainGraceSec", speedActivate(), set("config.retry.stopDrainGraceSec", 900.5)},
		{"activate negative batchInterval", speedActivate(), set("schedule.batchInterval", -1)},
		{"activate zero singleTestDuration", speedActivate(), set("schedule.singleTestDuration", 0)},
		{"activate negative totalTestDuration", speedActivate(), set("schedule.totalTestDuration", -2)},
		{"activate negative retries", speedActivate(), set("schedule.failedTestRetries", -1)},
		{"activate zero iterations", speedActivate(), set("schedule.iterations", 0)},
		{"activate iterations off the formula", speedActivate(), set("schedule.iterations", 5)},
		{"activate window ends before it starts", speedActivate(), set("window.endAt", "2026-11-27T07:00:00.000000Z")},
		{"activate time with an offset", speedActivate(), set("window.startAt", "2026-11-27T09:00:00.000000+01:00")},
		{"activate impossible date", speedActivate(), set("window.startAt", "2026-02-30T08:00:00.000000Z")},
		{"activate integer written as a fraction", speedActivate(), set("runNumber", 1.5)},
		{"activate id beyond int64", speedActivate(), set("activationId", json.Number("9223372036854775808"))},
		{"activate time without microseconds", speedActivate(), set("window.startAt", "2026-11-27T08:00:00Z")},
		{"activate unknown type", speedActivate(), set("type", "JITTER")},
		{"activate lower case type", speedActivate(), set("type", "speed")},
		{"activate unknown protocol", speedActivate(), set("config.groups.0.devices.0.protocol", "SNMP")},
		{"activate unknown test mode", speedActivate(), set("config.groups.0.speed.testMode", "BOTH")},
		{"activate file based with time based duration", speedActivate(), set("config.groups.0.speed.timeBasedTestDuration", 10)},
		{"activate bad download URL", speedActivate(), set("config.groups.0.speed.downloadUrl", "javascript:alert(1)")},
		{"activate URL with credentials", speedActivate(), set("config.groups.0.speed.downloadUrl", "http://u:p@host/x")},
		{"activate zero connections", speedActivate(), set("config.groups.0.speed.downloadConnections", 0)},
		{"activate speed group with ping", speedActivate(), set("config.groups.0.ping", map[string]any{"testHost": "h"})},
		{"activate speed group without speed", speedActivate(), del("config.groups.1.speed")},
		{"activate latency without ping", latencyActivate(), del("config.groups.0.ping")},
		{"activate latency missing test host", latencyActivate(), del("config.groups.0.ping.testHost")},
		{"activate latency blank test host", latencyActivate(), set("config.groups.0.ping.testHost", "")},
		{"activate no groups", speedActivate(), set("config.groups", []any{})},
		{"activate duplicate serial", speedActivate(), set("config.groups.1.devices.0.serial", "ACME0001")},
		{"activate duplicate cpeId", speedActivate(), set("config.groups.1.devices.0.cpeId", 101)},
		{"activate duplicate configId", speedActivate(), set("config.groups.1.configId", 1)},
		{"activate part beyond parts", speedActivate(), set("part", 2)},
		{"activate unknown field", speedActivate(), set("priority", 1)},
		{"activate unknown device field", speedActivate(), set("config.groups.0.devices.0.online", true)},
		{"activate unknown schedule field", speedActivate(), set("schedule.totalTestDurationMinutes", 120)},
		{"activate old wire version", speedActivate(), set("wireVersion", "1.3")},
		{"activate missing wire version", speedActivate(), del("wireVersion")},
		{"activate wrong kind", speedActivate(), set("kind", "STOP")},
		{"activate bad command id", speedActivate(), set("commandId", "a b")},
		{"activate zero activation id", speedActivate(), set("activationId", 0)},
		{"stop unknown reason", stop(), set("reason", "BECAUSE")},
		{"stop missing activation", stop(), del("activationId")},
		{"stop oversized message", stop(), set("message", strings.Repeat("x", 1025))},
		{"ack rejected without reason", ack(fccwire.Rejected), del("reason")},
		{"ack accepted with reason", ack(fccwire.Accepted), set("reason", "INVALID_CONFIG")},
		{"ack unknown status", ack(fccwire.Accepted), set("status", "MAYBE")},
		{"ack unknown reason", ack(fccwire.Rejected), set("reason", "BUSY")},
		{"ack of activate without part", ack(fccwire.Accepted), del("part")},
		{"ack bad acs version", ack(fccwire.Accepted), set("acsVersion", "six")},
		{"state unknown", deviceState(fccwire.DeviceDone, ""), set("state", "PAUSED")},
		{"state blank serial", deviceState(fccwire.DeviceDone, ""), set("serial", "")},
		{"state skipped without reason", deviceState(fccwire.DeviceSkipped, fccwire.ReasonUnsupported), del("reason")},
		{"state skipped for an error", deviceState(fccwire.DeviceSkipped, fccwire.ReasonUnsupported), set("reason", "ERROR")},
		{"state failed for unsupported", deviceState(fccwire.DeviceFailed, fccwire.ReasonError), set("reason", "UNSUPPORTED")},
		{"state done with a reason", deviceState(fccwire.DeviceDone, ""), set("reason", "OFFLINE")},
		{"state zero seq", deviceState(fccwire.DeviceDone, ""), set("seq", 0)},
		{"result missing serial", speedResult(), del("serial")},
		{"result blank serial", speedResult(), set("serial", " ")},
		{"result unknown status", speedResult(), set("status", "BREACH")},
		{"result unknown direction", speedResult(), set("direction", "BOTH")},
		{"result speed with ping direction", speedResult(), set("direction", "PING")},
		{"result latency with download direction", latencyResult(), set("direction", "DOWNLOAD")},
		{"result zero iteration", speedResult(), set("iteration", 0)},
		{"result negative kbps", speedResult(), set("speed.kbps", -1)},
		{"result kbps off the formula", speedResult(), set("speed.kbps", 10001)},
		{"result negative bytes", speedResult(), set("speed.testBytes", -5)},
		{"result eom before bom", speedResult(), set("speed.eom", "2026-11-27T08:00:09.000000Z")},
		{"result finished before started", speedResult(), set("finishedAt", "2026-11-27T08:00:08.000000Z")},
		{"result missing bom", speedResult(), del("speed.bom")},
		{"result measured speed without figures", speedResult(), del("speed")},
		{"result speed with latency block", speedResult(), set("latency", map[string]any{"successCount": 1, "failureCount": 0, "averageMs": 1, "minMs": 1, "maxMs": 1})},
		{"result wan busy with figures", speedResult(), set("status", "WAN_BUSY")},
		{"result latency with speed block", latencyResult(), set("speed", map[string]any{})},
		{"result latency with tier kbps", latencyResult(), set("tierKbps", 1000)},
		{"result latency ok with no success", latencyResult(), set("latency", map[string]any{"successCount": 0, "failureCount": 10})},
		{"result latency missing average", latencyResult(), del("latency.averageMs")},
		{"result latency negative failures", latencyResult(), set("latency.failureCount", -1)},
		{"result latency min above average", latencyResult(), set("latency.minMs", 13)},
		{"result negative wan usage", speedResult(), set("wanUsageDlKbps", -1)},
		{"result unknown field", speedResult(), set("hubbId", "H1")},
		{"result unknown connection field", speedResult(), set("speed.perConnection.0.jitter", 1)},
		{"finished unknown reason", finished(), set("reason", "DONE")},
		{"finished negative count", finished(), set("resultsSent", -1)},
		{"finished counts above devices", finished(), set("done", 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good, err := fccwire.Encode(tt.msg)
			if err != nil {
				t.Fatalf("the example itself is refused: %v", err)
			}
			var doc map[string]any
			dec := json.NewDecoder(bytes.NewReader(good))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			tt.change(doc)
			bad, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			k := tt.msg.MessageKind()
			err = fccwire.Validate(k, bad)
			if !errors.Is(err, fccwire.ErrInvalid) {
				t.Fatalf("Validate accepted (err %v):\n%s", err, bad)
			}
			if _, err := fccwire.Decode(k, bad); !errors.Is(err, fccwire.ErrInvalid) {
				t.Fatalf("Decode accepted (err %v)", err)
			}
		})
	}
}

// path walks a dotted path of object keys and array indexes and calls fn
// on the last container.
func path(m map[string]any, p string, fn func(parent any, key string)) {
	keys := strings.Split(p, ".")
	var cur any = m
	for _, k := range keys[:len(keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			cur = c[i]
		}
	}
	fn(cur, keys[len(keys)-1])
}

func set(p string, v any) func(map[string]any) {
	return func(m map[string]any) {
		path(m, p, func(parent any, key string) {
			switch c := parent.(type) {
			case map[string]any:
				c[key] = v
			case []any:
				i, _ := strconv.Atoi(key)
				c[i] = v
			}
		})
	}
}

func del(p string) func(map[string]any) {
	return func(m map[string]any) {
		path(m, p, func(parent any, key string) { delete(parent.(map[string]any), key) })
	}
}

// TestGolden pins the canonical bytes of one message of each kind, so a
// change of the wire shows in review. Rewrite with -update after a change
// that WIRE.md and the version record.
func TestGolden(t *testing.T) {
	tests := []struct {
		file string
		msg  fccwire.Message
	}{
		{"activate-speed.json", speedActivate()},
		{"activate-latency.json", latencyActivate()},
		{"stop.json", stop()},
		{"command-ack.json", ack(fccwire.Rejected)},
		{"device-state.json", deviceState(fccwire.DeviceSkipped, fccwire.ReasonUnsupported)},
		{"result-speed.json", speedResult()},
		{"result-latency.json", latencyResult()},
		{"activation-finished.json", finished()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := fccwire.Encode(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(file, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, bytes.TrimSuffix(want, []byte("\n"))) {
				t.Fatalf("the wire changed:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestEncodeEnvelopeAndCanonicalForm(t *testing.T) {
	t.Run("fills the envelope", func(t *testing.T) {
		s := stop()
		b, err := fccwire.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.Kind != fccwire.KindStop || s.WireVersion != fccwire.Version || !bytes.HasPrefix(b, []byte(`{"wireVersion":"1.5","kind":"STOP",`)) {
			t.Fatalf("envelope %+v, bytes %s", s.Envelope, b)
		}
	})
	t.Run("refuses another kind", func(t *testing.T) {
		s := stop()
		s.Kind = fccwire.KindActivate
		if _, err := fccwire.Encode(s); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("Encode = %v, want ErrInvalid", err)
		}
	})
	t.Run("refuses another version", func(t *testing.T) {
		s := stop()
		s.WireVersion = "1.3"
		if _, err := fccwire.Encode(s); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("Encode = %v, want ErrInvalid", err)
		}
	})
	t.Run("refuses what the schema refuses", func(t *testing.T) {
		a := speedActivate()
		a.Config.Groups[0].Devices[0].Serial = " "
		if _, err := fccwire.Encode(a); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("Encode = %v, want ErrInvalid", err)
		}
	})
	t.Run("times in one spelling whatever the zone", func(t *testing.T) {
		paris := time.FixedZone("CET", 3600)
		a, b := finished(), finished()
		a.FinishedAt = fccwire.Time{Time: t0.In(paris).Add(123456789 * time.Nanosecond)}
		b.FinishedAt = fccwire.At(t0.Add(123456 * time.Microsecond))
		ea, err := fccwire.Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := fccwire.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ea, eb) || !bytes.Contains(ea, []byte(`"finishedAt":"2026-11-27T08:00:00.123456Z"`)) {
			t.Fatalf("not canonical:\n%s\n%s", ea, eb)
		}
	})
	t.Run("URLs travel unescaped", func(t *testing.T) {
		b, err := fccwire.Encode(speedActivate())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`size=10000000&x=1`)) {
			t.Fatalf("& was escaped: %s", b)
		}
	})
	t.Run("oversized message", func(t *testing.T) {
		a := speedActivate()
		a.Config.Groups[0].Devices = fleet(20000)
		a.Config.Groups[1].Devices = nil
		if _, err := fccwire.Encode(a); !errors.Is(err, fccwire.ErrInvalid) || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("Encode = %v, want the size limit (SplitActivate is the way)", err)
		}
	})
	t.Run("validation errors are bounded", func(t *testing.T) {
		huge := `{"wireVersion":"1.5","kind":"STOP","commandId":"` + strings.Repeat("x", 100000) + `"}`
		err := fccwire.Validate(fccwire.KindStop, []byte(huge))
		if !errors.Is(err, fccwire.ErrInvalid) || len(err.Error()) > 700 {
			t.Fatalf("error of %d bytes: %.200v", len(err.Error()), err)
		}
	})
	t.Run("unknown kind", func(t *testing.T) {
		if err := fccwire.Validate("PAUSE", []byte(`{}`)); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("Validate = %v", err)
		}
		if _, err := fccwire.PeekKind([]byte(`{"kind":"PAUSE"}`)); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("PeekKind = %v", err)
		}
	})
	t.Run("trailing data", func(t *testing.T) {
		b, err := fccwire.Encode(stop())
		if err != nil {
			t.Fatal(err)
		}
		if err := fccwire.Validate(fccwire.KindStop, append(b, []byte(`{}`)...)); !errors.Is(err, fccwire.ErrInvalid) {
			t.Fatalf("Validate = %v", err)
		}
	})
}

func TestKbps(t *testing.T) {
	tests := []struct {
		name  string
		bytes int64
		d     time.Duration
		want  float64
		bad   bool
	}{
		{"10 MB in 8 s", 10_000_000, 8 * time.Second, 10_000, false},
		{"1 byte in 3 s rounds to 3 decimals", 1, 3 * time.Second, 0.003, false},
		{"microsecond precision", 125_000, 999_999 * time.Microsecond, 1000.001, false},
		{"nothing moved", 0, time.Second, 0, false},
		{"eom equals bom", 1, 0, 0, true},
		{"eom before bom", 1, -time.Second, 0, true},
		{"negative bytes", -1, time.Second, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fccwire.Kbps(tt.bytes, t0, t0.Add(tt.d))
			if (err != nil) != tt.bad || got != tt.want {
				t.Fatalf("Kbps = %v, %v; want %v (error %v)", got, err, tt.want, tt.bad)
			}
		})
	}
}

func TestIterations(t *testing.T) {
	tests := []struct{ total, single, want int }{
		{2, 30, 4}, {1, 60, 1}, {1, 61, 0}, {1, 7, 8}, {24, 1, 1440}, {1, 0, 0},
	}
	for _, tt := range tests {
		if got := fccwire.Iterations(tt.total, tt.single); got != tt.want {
			t.Errorf("Iterations(%d, %d) = %d, want %d", tt.total, tt.single, got, tt.want)
		}
	}
}

// mapKey is the grid's rule for map keys (internal/platform/grid
// validateKey), which the dedup map applies.
var mapKey = regexp.MustCompile(`^[A-Za-z0-9_=/-]+(?:\.[A-Za-z0-9_=/-]+)*$`)

func TestNaturalKey(t *testing.T) {
	serials := []string{"ACME0001", "acme0001", "ACME 0002", "usp:0001", "a.b..c", "Ünïcode-серия", "x/y=z"}
	seen := map[string]string{}
	for _, s := range serials {
		for _, dir := range []fccwire.Direction{fccwire.Download, fccwire.Upload, fccwire.Ping} {
			for _, it := range []int{1, 12} {
				k := fccwire.NaturalKey(912, s, dir, it)
				if !mapKey.MatchString(k) {
					t.Errorf("key %q of serial %q is not a valid grid map key", k, s)
				}
				if prev, dup := seen[k]; dup {
					t.Errorf("key %q shared by %s and %q/%s/%d", k, prev, s, dir, it)
				}
				seen[k] = s + "/" + string(dir) + "/" + strconv.Itoa(it)
			}
		}
	}
	r := speedResult()
	if r.NaturalKey() != fccwire.NaturalKey(912, "ACME0001", fccwire.Download, 1) {
		t.Fatalf("Result.NaturalKey = %q", r.NaturalKey())
	}
	if a, b := fccwire.CommandMsgID("outbox-1", 1, 1), fccwire.CommandMsgID("outbox-1", 1, 2); a == b {
		t.Fatalf("two attempts share message id %q", a)
	}
}

func TestKindQueues(t *testing.T) {
	want := map[fccwire.Kind]string{
		fccwire.KindActivate: "fccCommandQueue", fccwire.KindStop: "fccCommandQueue",
		fccwire.KindCommandAck: "fccCommandAck", fccwire.KindDeviceState: "fccDeviceStateQueue",
		fccwire.KindResult: "fccResultQueue", fccwire.KindActivationFinished: "fccActivationFinishedQueue",
	}
	for _, k := range fccwire.Kinds {
		if k.Queue() != want[k] {
			t.Errorf("%s travels on %q, want %q", k, k.Queue(), want[k])
		}
		if _, err := fccwire.Schema(k); err != nil {
			t.Errorf("%s has no schema: %v", k, err)
		}
	}
	if fccwire.Kind("X").Queue() != "" {
		t.Error("an unknown kind has a queue")
	}
}
