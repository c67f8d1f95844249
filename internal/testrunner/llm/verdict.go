package llm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cpesuite/internal/testrunner/wire"
)

// verdict is the model's final answer: a status and detail per step
// number (from 1) and a summary of the run.
type verdict struct {
	steps   map[int]stepVerdict
	summary string
	// notes are what parsing had to overlook (duplicate or unknown step
	// numbers), for the run's output.
	notes []string
}

type stepVerdict struct {
	status string // passed, failed or error
	detail string
}

// maxVerdictScan bounds the text searched for a verdict: the answer
// should end with it, and the search from every '{' is quadratic.
const maxVerdictScan = 128 << 10

var fenced = regexp.MustCompile("(?s)```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```")

// errNoVerdict is a final answer without a verdict object.
var errNoVerdict = errors.New(`no JSON object with a "steps" list found`)

// parseVerdict finds the verdict in the model's final text: the last
// fenced ```json block holding one, else the last JSON object in the text
// that has a "steps" member. Within it, a step entry's "step" may be a
// number or a numeric string and defaults to the entry's position;
// "steps" may also be an object keyed by step number.
func parseVerdict(text string) (verdict, error) {
	if len(text) > maxVerdictScan {
		text = text[len(text)-maxVerdictScan:]
	}
	var blockErr error
	blocks := fenced.FindAllStringSubmatch(text, -1)
	for i := len(blocks) - 1; i >= 0; i-- {
		raw, err := decodeObject(strings.TrimSpace(blocks[i][1]))
		if err != nil {
			if blockErr == nil {
				blockErr = fmt.Errorf("the fenced block is not a JSON object: %v", err)
			}
			continue
		}
		if _, ok := raw["steps"]; ok {
			return buildVerdict(raw)
		}
	}
	for i := strings.LastIndexByte(text, '{'); i >= 0; i = strings.LastIndexByte(text[:i], '{') {
		raw, err := decodeObject(text[i:])
		if err != nil {
			continue
		}
		if _, ok := raw["steps"]; ok {
			return buildVerdict(raw)
		}
	}
	if blockErr != nil {
		return verdict{}, blockErr
	}
	return verdict{}, errNoVerdict
}

// decodeObject decodes the JSON object at the start of s, ignoring what
// follows it.
func decodeObject(s string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	return m, nil
}

func buildVerdict(raw map[string]json.RawMessage) (verdict, error) {
	v := verdict{steps: map[int]stepVerdict{}, summary: looseString(raw["summary"])}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw["steps"], &list); err != nil {
		// {"steps": {"1": {...}, "2": {...}}}
		var byKey map[string]map[string]json.RawMessage
		if err2 := json.Unmarshal(raw["steps"], &byKey); err2 != nil {
			return verdict{}, errors.New(`"steps" is neither a list of step objects nor an object of them`)
		}
		for k, e := range byKey {
			if e == nil {
				continue
			}
			if _, ok := e["step"]; !ok {
				e["step"] = json.RawMessage(strconv.Quote(k))
			}
			list = append(list, e)
		}
		sortByStep(list)
	}
	for pos, e := range list {
		if e == nil {
			continue
		}
		n := pos + 1
		if rawN, ok := e["step"]; ok {
			var err error
			if n, err = stepNumber(rawN); err != nil {
				v.notes = append(v.notes, fmt.Sprintf("verdict entry %d ignored: %v", pos+1, err))
				continue
			}
		}
		if _, dup := v.steps[n]; dup {
			v.notes = append(v.notes, fmt.Sprintf("verdict entry %d repeats step %d; the first one counts", pos+1, n))
			continue
		}
		v.steps[n] = stepStatus(looseString(e["status"]), looseString(e["detail"]))
	}
	return v, nil
}

// stepStatus checks a step status: anything but passed, failed or error
// (in any case) becomes error, naming what the model said.
func stepStatus(status, detail string) stepVerdict {
	s := strings.ToLower(strings.TrimSpace(status))
	switch s {
	case wire.StepPassed, wire.StepFailed, wire.StepError:
		return stepVerdict{status: s, detail: detail}
	}
	d := fmt.Sprintf("the model reported status %q, not passed, failed or error", status)
	if detail != "" {
		d += ": " + detail
	}
	return stepVerdict{status: wire.StepError, detail: d}
}

func stepNumber(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, fmt.Errorf("step %s is not a number", excerpt(string(raw), 40))
		}
		s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "step")
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, fmt.Errorf("step %q is not a number", excerpt(s, 40))
		}
	}
	if f != float64(int(f)) || f < 1 {
		return 0, fmt.Errorf("step %v is not a step number", f)
	}
	return int(f), nil
}

// looseString reads a JSON string, or renders any other value as JSON
// text; absent and null are "".
func looseString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return string(raw)
}

func sortByStep(list []map[string]json.RawMessage) {
	key := func(e map[string]json.RawMessage) int {
		n, err := stepNumber(e["step"])
		if err != nil {
			return math.MaxInt
		}
		return n
	}
	slices.SortStableFunc(list, func(a, b map[string]json.RawMessage) int { return cmp.Compare(key(a), key(b)) })
}
