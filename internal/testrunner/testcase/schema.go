package testcase

import (
	"bytes"
	_ "embed"
)

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a case document, which
// also describes the JSON view of a case. The caller owns the bytes.
func Schema() []byte {
	return bytes.Clone(schemaJSON)
}
