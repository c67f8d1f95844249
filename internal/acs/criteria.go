package acs

import (
	"fmt"
	"slices"
	"strings"
)

// Criteria is what a saved condition selects. Named fields are the ones the
// campaign service's device condition request also has; Rules add column
// conditions. Everything present combines with AND.
type Criteria struct {
	ManufacturerIDs []int64 `json:"manufacturerIds,omitempty"`
	ModelIDs        []int64 `json:"modelIds,omitempty"`
	DomainIDs       []int64 `json:"domainIds,omitempty"`
	OnlyOnline      bool    `json:"onlyOnline,omitempty"`
	Rules           []Rule  `json:"rules,omitempty"`
}

// Rule compares one device column with a value.
type Rule struct {
	Key    string   `json:"key"`
	Op     string   `json:"op"`
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
}

// ruleColumns maps rule keys to device columns (a fixed set: keys are never
// spliced into SQL).
var ruleColumns = map[string]string{
	"serial":          "d.serial",
	"oui":             "d.oui",
	"productClass":    "d.product_class",
	"softwareVersion": "d.software_version",
	"hardwareVersion": "d.hardware_version",
	"externalIp":      "d.external_ip",
	"dataModel":       "d.data_model",
}

// RuleOps are the operators rules accept.
var RuleOps = []string{"eq", "ne", "in", "notIn", "startsWith", "contains"}

// Validate checks keys, operators and values.
func (c Criteria) Validate() error {
	for i, r := range c.Rules {
		if _, ok := ruleColumns[r.Key]; !ok {
			return fmt.Errorf("rules[%d]: unknown key %q (known: %s)", i, r.Key, strings.Join(sortedKeys(ruleColumns), ", "))
		}
		if !slices.Contains(RuleOps, r.Op) {
			return fmt.Errorf("rules[%d]: key %q: unknown operator %q (known: %s)", i, r.Key, r.Op, strings.Join(RuleOps, ", "))
		}
		if (r.Op == "in" || r.Op == "notIn") && len(r.Values) == 0 {
			return fmt.Errorf("rules[%d]: operator %s needs values", i, r.Op)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
