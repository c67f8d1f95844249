package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"cpesuite/internal/testrunner/testcase"
)

// systemPrompt is the contract with the model: step markers, tool use and
// the verdict format. Tests and e2e doubles script against it.
const systemPrompt = `You are a QA test executor. You carry out the steps of one test case against real systems (CPE device emulators, an ACS, web portals) using only the tools you are given, and then report a verdict for every step.

How to work:
- Work through the steps in order. Before you start on step n, write a line of text "STEP n" (for example "STEP 2") in your message; the tool calls you make after it are recorded for step n.
- Act and observe with the tools. Never assume a result you have not observed. A tool result that begins with "HTTP <status>" is an HTTP answer. A tool result marked as an error (or beginning with "ERROR:") is a fact about the system or about your arguments: read it before you try again.
- A step has passed when what you observed matches its expected result, failed when what you observed contradicts it, and is an error when you could not carry it out (a tool is missing or broken, a system is unreachable, the step is unclear).
- A step's explicit tool call, when the case gives one, is the call the case author meant; use it unless it cannot work.

When you are done with every step, reply without any tool call, with the verdict as one JSON object in a fenced block:
` + "```json" + `
{"steps":[{"step":1,"status":"passed","detail":"what you observed"},{"step":2,"status":"failed","detail":"expected X, observed Y"}],"summary":"one or two sentences on the run"}
` + "```" + `
Give exactly one entry per step, numbered from 1; "status" is one of "passed", "failed", "error"; "detail" says what you observed (for a failed step: what was expected and what was observed).`

// pagesPrompt is added when the case names a page under test.
const pagesPrompt = `

This case has a web page under test at %s. Before STEP 1, open that page with the browser tools and look at it; your first turn is for loading the page.`

// repairPrompt asks once more for a verdict the parser can read.
const repairPrompt = `Your last answer had no verdict I could read (%s). Reply with only the verdict JSON object in a ` + "```json" + ` fenced block, one entry per step from 1 to %d, as the instructions say.`

func buildSystemPrompt(c *testcase.Case) string {
	if c.BaseURL != "" {
		return systemPrompt + fmt.Sprintf(pagesPrompt, c.BaseURL)
	}
	return systemPrompt
}

// buildCasePrompt renders the case as the first user message. Explicit
// tool calls are named by their provider tool name, so the model can make
// them as they are.
func buildCasePrompt(c *testcase.Case, ts *toolSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Test case %s: %s\n", c.ID, c.Title)
	line := func(label, v string) {
		if v = strings.TrimSpace(v); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, v)
		}
	}
	line("Portal", c.Portal)
	line("Page under test (base_url)", c.BaseURL)
	line("Description", c.Description)
	if len(c.Preconditions) > 0 {
		b.WriteString("Preconditions:\n")
		for _, p := range c.Preconditions {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	es := c.EmulatorSetup
	if es.TreeFile != "" || es.Serial != "" || es.Model != "" {
		b.WriteString("Emulator setup:")
		for _, f := range []struct{ k, v string }{{"tree_file", es.TreeFile}, {"serial", es.Serial}, {"model", es.Model}} {
			if f.v != "" {
				fmt.Fprintf(&b, " %s=%s", f.k, f.v)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nSteps (%d):\n", len(c.Steps))
	for i, s := range c.Steps {
		fmt.Fprintf(&b, "\nSTEP %d\nAction: %s\n", i+1, strings.TrimSpace(s.Action))
		line("Expected", s.Expected)
		if t := s.Tool; t != nil {
			b.WriteString(toolHint(t, ts))
		}
	}
	fmt.Fprintf(&b, "\nCarry out the %d steps, then reply with the verdict JSON.", len(c.Steps))
	return b.String()
}

func toolHint(t *testcase.ToolCall, ts *toolSet) string {
	args := "{}"
	if len(t.Arguments) > 0 {
		if j, err := json.Marshal(t.Arguments); err == nil {
			args = string(j)
		}
	}
	var b strings.Builder
	if name := ts.nameOf(t.Server, t.Name); name != "" {
		fmt.Fprintf(&b, "Explicit tool call: %s with arguments %s\n", name, args)
	} else {
		fmt.Fprintf(&b, "Explicit tool call: %s/%s with arguments %s (this tool is not available to you)\n", t.Server, t.Name, args)
	}
	if x := t.Expect; x != nil {
		var parts []string
		if x.Error != nil {
			if *x.Error {
				parts = append(parts, "the tool reports an error")
			} else {
				parts = append(parts, "the tool succeeds")
			}
		}
		if x.Contains != "" {
			parts = append(parts, fmt.Sprintf("the result contains %q", x.Contains))
		}
		if x.NotContains != "" {
			parts = append(parts, fmt.Sprintf("the result does not contain %q", x.NotContains))
		}
		if x.Equals != "" {
			parts = append(parts, fmt.Sprintf("the result equals %q", x.Equals))
		}
		if x.Matches != "" {
			parts = append(parts, fmt.Sprintf("the result matches the regular expression %q", x.Matches))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "Expected tool result: %s\n", strings.Join(parts, "; "))
		}
	}
	return b.String()
}
