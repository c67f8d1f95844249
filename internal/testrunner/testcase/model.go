// Package testcase is the test runner's case model: a case is a YAML
// document with organisation fields, preconditions and steps. A step has
// a natural-language action and expectation for the language-model
// executors, and may carry an explicit tool call with arguments and a
// machine-checkable expectation for the deterministic executor.
package testcase

// Case is one test case document.
type Case struct {
	ID     string `yaml:"id" json:"id"`
	Title  string `yaml:"title" json:"title"`
	Portal string `yaml:"portal,omitempty" json:"portal,omitempty"`
	// BaseURL is the address of the page under test for browser steps.
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`

	// Organisation fields. An empty Project means Unassigned.
	Project    string `yaml:"project,omitempty" json:"project"`
	References string `yaml:"references,omitempty" json:"references,omitempty"`
	Priority   string `yaml:"priority,omitempty" json:"priority,omitempty"`
	Type       string `yaml:"type,omitempty" json:"type,omitempty"`
	Section    string `yaml:"section,omitempty" json:"section,omitempty"`

	Tags          []string      `yaml:"tags,omitempty" json:"tags,omitempty"`
	Description   string        `yaml:"description,omitempty" json:"description,omitempty"`
	Preconditions []string      `yaml:"preconditions,omitempty" json:"preconditions,omitempty"`
	EmulatorSetup EmulatorSetup `yaml:"emulator_setup,omitempty" json:"emulator_setup"`
	Steps         []Step        `yaml:"steps" json:"steps"`
}

// EmulatorSetup says how the emulator is prepared before the steps run.
type EmulatorSetup struct {
	// TreeFile names an .xml data-model tree of the worker's tree folder.
	TreeFile string `yaml:"tree_file,omitempty" json:"tree_file,omitempty"`
	Serial   string `yaml:"serial,omitempty" json:"serial,omitempty"`
	Model    string `yaml:"model,omitempty" json:"model,omitempty"`
}

// Step is one step of a case.
type Step struct {
	Action   string    `yaml:"action" json:"action"`
	Expected string    `yaml:"expected,omitempty" json:"expected,omitempty"`
	Tool     *ToolCall `yaml:"tool,omitempty" json:"tool,omitempty"`
}

// ToolCall is an explicit call the deterministic executor makes for a
// step. Server names a tool server from the worker's settings, or
// "builtin" for the worker's own tools.
type ToolCall struct {
	Server    string         `yaml:"server" json:"server"`
	Name      string         `yaml:"name" json:"name"`
	Arguments map[string]any `yaml:"arguments,omitempty" json:"arguments,omitempty"`
	Expect    *Expectation   `yaml:"expect,omitempty" json:"expect,omitempty"`
}

// Expectation checks a tool's text result. Every set field must hold. With
// no expectation a step passes when the tool does not report an error.
type Expectation struct {
	// Error true expects the tool to report an error; false (the default
	// when omitted) expects success.
	Error       *bool  `yaml:"error,omitempty" json:"error,omitempty"`
	Contains    string `yaml:"contains,omitempty" json:"contains,omitempty"`
	NotContains string `yaml:"not_contains,omitempty" json:"not_contains,omitempty"`
	Equals      string `yaml:"equals,omitempty" json:"equals,omitempty"`
	// Matches is a Go regular expression (RE2 syntax).
	Matches string `yaml:"matches,omitempty" json:"matches,omitempty"`
}

// Summary is one row of GET /api/tests.
type Summary struct {
	File         string   `json:"file"`
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Portal       string   `json:"portal"`
	BaseURL      string   `json:"base_url"`
	StepCount    int      `json:"step_count"`
	StepsPreview []string `json:"steps_preview"`
	Project      string   `json:"project"`
	Section      string   `json:"section"`
	Priority     string   `json:"priority"`
	Type         string   `json:"type"`
	References   string   `json:"references"`
	Tags         []string `json:"tags"`
}
