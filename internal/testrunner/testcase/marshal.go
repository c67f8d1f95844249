package testcase

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Marshal writes c as canonical YAML: two-space indentation, fields in the
// order of the model's structs, empty optional fields left out. It does not
// validate c.
func Marshal(c *Case) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
	}
	return buf.Bytes(), nil
}
