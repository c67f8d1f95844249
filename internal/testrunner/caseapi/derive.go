package caseapi

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"cpesuite/internal/testrunner/testcase"
)

// Patterns of regenerate. They read the case as a person wrote it, so
// they are heuristics: each is tuned to take nothing rather than a wrong
// value, and a field whose pattern finds nothing keeps its current value.
var (
	// treeMention is a file name ending in .xml; a path in front is left
	// out, only the name is looked up in the tree folder.
	treeMention = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9._-]*\.xml\b`)

	// serialMention is "serial", "serial number", "serial no", "S/N" or
	// "SN", then ':', '=', '#', "is" or a space, then the serial, which
	// must contain a digit (so "serial port" or "serial numbers" is no
	// serial).
	serialMention = regexp.MustCompile(`(?i)\b(?:serial(?:[ _-]?(?:number|num|no)\.?)?|s/n|sn)(?:\s*(?:[:=#]|\bis\b)\s*|\s+)["'“]?([a-z0-9][a-z0-9_-]{2,63})`)

	// modelMention is "model" or "model name", then ':' or '=' (group 2),
	// "is" or a space, then a quoted name (group 3) or one word (group 4).
	// Group 1 catches the phrases in which "model" means something else
	// (data model, language model); a word after a bare space counts only
	// when it has a digit, as model names like HG8245H or RX-1 do.
	modelMention = regexp.MustCompile(`(?i)\b(?:(data|language|object|threat|device data)[ _-]+)?model(?:[ _-]?name)?(?:\s*(?:([:=])|\bis\b)\s*|\s+)(?:["“']([^"”'\n]{1,64})["”']|([a-z0-9][a-z0-9._+/-]{1,63}))`)
)

// derivedSetup is what regenerate finds in a case's text.
type derivedSetup struct {
	Setup testcase.EmulatorSetup
	// UnknownTrees are .xml names the text mentions that the tree folder
	// does not hold.
	UnknownTrees []string
}

// deriveSetup reads tree_file, serial and model out of the case's text:
// the first mentioned .xml name that is a tree of the folder (trees maps
// lower-case names to names), the first serial and the first model
// mention. The text is read in document order: title, description,
// preconditions, then each step's action, expectation and tool arguments.
func deriveSetup(c *testcase.Case, trees map[string]string) derivedSetup {
	text := caseText(c)
	var d derivedSetup
	unknown := map[string]bool{}
	for _, m := range treeMention.FindAllString(text, -1) {
		if ValidTreeName(m) != nil {
			continue
		}
		if name, ok := trees[strings.ToLower(m)]; ok {
			if d.Setup.TreeFile == "" {
				d.Setup.TreeFile = name
			}
		} else if !unknown[m] {
			unknown[m] = true
			d.UnknownTrees = append(d.UnknownTrees, m)
		}
	}
	for _, m := range serialMention.FindAllStringSubmatch(text, -1) {
		if strings.ContainsAny(m[1], "0123456789") {
			d.Setup.Serial = m[1]
			break
		}
	}
	for _, m := range modelMention.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			continue
		}
		if quoted := strings.TrimSpace(m[3]); quoted != "" {
			d.Setup.Model = quoted
			break
		}
		word := strings.TrimRight(m[4], "./-")
		if len(word) >= 2 && (m[2] != "" || strings.ContainsAny(word, "0123456789")) {
			d.Setup.Model = word
			break
		}
	}
	return d
}

// caseText joins the prose of a case, one part per line. Tool arguments
// are written "key: value", so {"serial": "CPE-1"} reads as a serial.
func caseText(c *testcase.Case) string {
	var b strings.Builder
	line := func(s string) {
		if s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	line(c.Title)
	line(c.Description)
	for _, p := range c.Preconditions {
		line(p)
	}
	for _, s := range c.Steps {
		line(s.Action)
		line(s.Expected)
		if s.Tool != nil {
			writeArgs(&b, "", s.Tool.Arguments)
		}
	}
	return b.String()
}

func writeArgs(b *strings.Builder, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			writeArgs(b, k, v[k])
		}
	case []any:
		for _, x := range v {
			writeArgs(b, prefix, x)
		}
	case nil:
	default:
		if prefix != "" {
			b.WriteString(prefix)
			b.WriteString(": ")
		}
		fmt.Fprint(b, v)
		b.WriteByte('\n')
	}
}
