package iotemu

import (
	"encoding/json"
	"slices"
	"sort"

	"cpesuite/internal/iotemu/proto"
)

// OptionView is one protocol option as GET /api/protocolOptions shows it.
type OptionView struct {
	Key         string   `json:"key"`
	Value       string   `json:"value"`
	Secret      bool     `json:"secret"`
	Choices     []string `json:"choices,omitempty"`
	Default     string   `json:"default"`
	Description string   `json:"description,omitempty"`
}

// viewOptions renders the options of p with values from set (defaults for
// the unset ones). Secrets read as "*" when stored and stay empty when
// unset; options with a choice list are never masked.
func viewOptions(p proto.Protocol, set map[string]string) []OptionView {
	out := []OptionView{}
	for _, o := range p.Options() {
		v, ok := set[o.Key]
		if !ok {
			v = o.Default
		}
		if o.Secret && len(o.Choices) == 0 && v != "" {
			v = mask
		}
		out = append(out, OptionView{Key: o.Key, Value: v, Secret: o.Secret, Choices: o.Choices, Default: o.Default, Description: o.Description})
	}
	return out
}

// resolveOptions returns every option of p with its effective value.
func resolveOptions(p proto.Protocol, layers ...map[string]string) map[string]string {
	out := make(map[string]string, len(p.Options()))
	for _, o := range p.Options() {
		out[o.Key] = o.Default
		for _, l := range layers {
			if v, ok := l[o.Key]; ok {
				out[o.Key] = v
			}
		}
	}
	return out
}

// decodeOptionMap parses a posted option map; a missing map or a null
// value is refused so that nothing is applied.
func decodeOptionMap(raw map[string]json.RawMessage) (map[string]string, error) {
	if raw == nil {
		return nil, badRequest("a JSON object mapping option keys to values is required")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if string(v) == "null" {
			return nil, badRequest("option %q must not be null", k)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			// Numbers and booleans are accepted in their JSON spelling.
			var n json.Number
			var b bool
			switch {
			case json.Unmarshal(v, &n) == nil:
				s = n.String()
			case json.Unmarshal(v, &b) == nil:
				if b {
					s = "true"
				} else {
					s = "false"
				}
			default:
				return nil, badRequest("option %q must be a string, number or boolean", k)
			}
		}
		out[k] = s
	}
	return out, nil
}

// mergeOptions applies posted values onto stored for protocol p. Secret
// options: "*" keeps the stored value, "" clears it, anything else
// replaces it; other options store the value literally. When template is
// true (a device template), a posted "*" drops the key so the device
// inherits the configured value.
func mergeOptions(p proto.Protocol, stored, posted map[string]string, template bool) (map[string]string, error) {
	specs := map[string]proto.Option{}
	for _, o := range p.Options() {
		specs[o.Key] = o
	}
	keys := make([]string, 0, len(posted))
	for k := range posted {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	next := make(map[string]string, len(stored)+len(posted))
	for k, v := range stored {
		next[k] = v
	}
	for _, k := range keys {
		v := posted[k]
		o, ok := specs[k]
		if !ok {
			return nil, badRequest("unknown option %q for protocol %s", k, p.Name())
		}
		if len(o.Choices) > 0 {
			if !slices.Contains(o.Choices, v) {
				return nil, badRequest("option %q must be one of %v", k, o.Choices)
			}
			next[k] = v
			continue
		}
		if o.Secret && v == mask {
			if template {
				delete(next, k)
			}
			continue
		}
		if o.Secret && v == "" {
			delete(next, k)
			continue
		}
		next[k] = v
	}
	return next, nil
}

// maskOptionMap masks the secret free-text options of a stored map.
func maskOptionMap(p proto.Protocol, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, o := range p.Options() {
		if v, ok := out[o.Key]; ok && o.Secret && len(o.Choices) == 0 && v != "" {
			out[o.Key] = mask
		}
	}
	return out
}
