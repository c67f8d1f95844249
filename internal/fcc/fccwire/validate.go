package fccwire

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrInvalid marks a message that breaks the contract. Test for it with
// errors.Is; a receiver answers a command that fails with REJECTED and
// INVALID_CONFIG.
var ErrInvalid = errors.New("invalid campaign wire message")

// MaxMessageBytes bounds one message. The grid's servers (embedded and
// Debian's nats-server) refuse payloads above 1 MiB; half of it leaves room
// for headers and for a server configured tighter. SplitActivate keeps
// every ACTIVATE part below it.
const MaxMessageBytes = 512 << 10

// maxErrorText bounds the detail of a validation error: the validator
// quotes offending values, and a message must never echo a whole oversized
// field into a log or an ack.
const maxErrorText = 512

//go:embed schema/*.json
var schemaFS embed.FS

const schemaBase = "https://cpesuite.example/fcc/wire/1.5/"

// SchemaFile names each kind's schema under schema/.
var SchemaFile = map[Kind]string{
	KindActivate:           "activate.json",
	KindStop:               "stop.json",
	KindCommandAck:         "command-ack.json",
	KindDeviceState:        "device-state.json",
	KindResult:             "result.json",
	KindActivationFinished: "activation-finished.json",
}

// Schema returns the JSON Schema document of kind k as embedded.
func Schema(k Kind) ([]byte, error) {
	name, ok := SchemaFile[k]
	if !ok {
		return nil, fmt.Errorf("%w: unknown kind %q", ErrInvalid, k)
	}
	return schemaFS.ReadFile("schema/" + name)
}

var compiled = sync.OnceValues(compileSchemas)

func compileSchemas() (map[Kind]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	files, err := fs.Glob(schemaFS, "schema/*.json")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := schemaFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", f, err)
		}
		if err := c.AddResource(schemaBase+f[len("schema/"):], doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", f, err)
		}
	}
	out := make(map[Kind]*jsonschema.Schema, len(SchemaFile))
	for k, name := range SchemaFile {
		s, err := c.Compile(schemaBase + name)
		if err != nil {
			return nil, fmt.Errorf("compiling schema %s: %w", name, err)
		}
		out[k] = s
	}
	return out, nil
}

// Validate holds data to the schema of kind k, then to the rules a schema
// cannot state (see check). The error wraps ErrInvalid.
func Validate(k Kind, data []byte) error {
	if _, err := validateSchema(k, data); err != nil {
		return err
	}
	m, err := newMessage(k)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, m); err != nil {
		return invalid(k, err)
	}
	return check(m)
}

func validateSchema(k Kind, data []byte) (any, error) {
	schemas, err := compiled()
	if err != nil {
		return nil, err
	}
	s, ok := schemas[k]
	if !ok {
		return nil, fmt.Errorf("%w: unknown kind %q", ErrInvalid, k)
	}
	if len(data) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: %s of %d bytes is over the %d-byte limit", ErrInvalid, k, len(data), MaxMessageBytes)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, invalid(k, err)
	}
	if err := s.Validate(inst); err != nil {
		return nil, invalid(k, err)
	}
	return inst, nil
}

func invalid(k Kind, err error) error {
	msg := err.Error()
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "..."
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalid, k, msg)
}

func newMessage(k Kind) (Message, error) {
	switch k {
	case KindActivate:
		return &Activate{}, nil
	case KindStop:
		return &Stop{}, nil
	case KindCommandAck:
		return &CommandAck{}, nil
	case KindDeviceState:
		return &DeviceState{}, nil
	case KindResult:
		return &Result{}, nil
	case KindActivationFinished:
		return &ActivationFinished{}, nil
	}
	return nil, fmt.Errorf("%w: unknown kind %q", ErrInvalid, k)
}

// PeekKind reads the kind of a message without validating the rest: the
// command queue carries two kinds.
func PeekKind(data []byte) (Kind, error) {
	var head struct {
		Kind Kind `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, ok := SchemaFile[head.Kind]; !ok {
		return "", fmt.Errorf("%w: unknown kind %.64q", ErrInvalid, head.Kind)
	}
	return head.Kind, nil
}

// Decode validates data as a message of kind k and returns it as its Go
// type.
func Decode(k Kind, data []byte) (Message, error) {
	if _, err := validateSchema(k, data); err != nil {
		return nil, err
	}
	m, err := newMessage(k)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return nil, invalid(k, err)
	}
	if err := check(m); err != nil {
		return nil, err
	}
	return m, nil
}
