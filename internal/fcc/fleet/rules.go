package fleet

import (
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// ruleColumns is the translated subset of saved-condition keys and their
// device columns. It is a fixed map so that no key from a request or a
// stored condition is ever spliced into SQL. externalIp is deliberately
// absent: the campaign service does not translate it.
var ruleColumns = map[string]string{
	"serial":          "d.serial",
	"oui":             "d.oui",
	"productClass":    "d.product_class",
	"softwareVersion": "d.software_version",
	"hardwareVersion": "d.hardware_version",
	"dataModel":       "d.data_model",
}

// ruleKeys and ruleOps are the supported keys and operators in the order
// error messages list them.
var (
	ruleKeys = []string{"serial", "oui", "productClass", "softwareVersion", "hardwareVersion", "dataModel"}
	ruleOps  = []string{"eq", "ne", "in", "notIn", "startsWith"}
)

// CheckRules enforces the translated subset of saved-condition rules (keys
// serial, oui, productClass, softwareVersion, hardwareVersion, dataModel;
// operators eq, ne, in, notIn, startsWith). Anything else is refused with an
// invalid-request error naming the key and the operator, as the spec asks,
// rather than silently selecting a different fleet than the ACS would.
func CheckRules(rules []Rule) error {
	for i, r := range rules {
		if _, ok := ruleColumns[r.Key]; !ok || !slices.Contains(ruleOps, r.Op) {
			return apperr.Invalid("", "condition rule %d: key %q with operator %q is not supported by the campaign service (supported keys: %s; operators: %s)",
				i+1, r.Key, r.Op, strings.Join(ruleKeys, ", "), strings.Join(ruleOps, ", "))
		}
		// The ACS refuses these on save too; an empty list would otherwise
		// select nothing (in) or everything (notIn) without saying so.
		if (r.Op == "in" || r.Op == "notIn") && len(r.Values) == 0 {
			return apperr.Invalid("", "condition rule %d: key %q with operator %q needs at least one value", i+1, r.Key, r.Op)
		}
	}
	return nil
}

// likePrefix escapes s for a LIKE pattern with ESCAPE '\' and appends the
// wildcard, so that a literal % or _ in a prefix matches only itself.
func likePrefix(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s) + "%"
}
