// Package llm holds the test-runner worker's language-model executors:
// "anthropic" speaks the Anthropic Messages API (POST {base}/v1/messages,
// tool_use / tool_result blocks) and "openai" any OpenAI-compatible
// chat-completions endpoint (POST {base}/chat/completions, tool_calls and
// tool messages). Both are plain net/http and encoding/json on the
// providers' documented wire formats; no SDK. The app registers them with
// worker.RegisterExecutor; a run selects one with model=anthropic or
// model=openai, or with model=openai:<model id> to override the
// openai_model (anthropic_model) setting for that run.
//
// # Settings
//
// Each run reads the worker settings <provider>_base_url,
// <provider>_api_key, <provider>_model, llm_timeout_seconds (bound on each
// provider request, retries not included) and llm_max_turns (model
// round-trips per run, the verdict repair included). Values are checked at
// the start of the run, environment values too; a missing API key is a run
// error naming the setting. The key is sent as x-api-key or as a Bearer
// token and never written to the output, the log or an error: provider
// messages are scrubbed of it before they are shown.
//
// # Run
//
// The model gets a system prompt (the contract below), the case rendered as
// the first user message (title, description, preconditions, emulator setup
// and per step the action, the expected result and the explicit tool call,
// if any, under its provider tool name), and every tool of
// RunContext.ListTools as a provider tool named <server>__<tool>. Names are
// fitted to the providers' rule ^[a-zA-Z0-9_-]{1,64}$ (other characters
// become '_', long names are cut, clashes get _2, _3, ...) and mapped back
// on each call. A call of an unknown name, or with arguments that are not a
// JSON object, is answered to the model as an error tool result; the run
// goes on. Every real call goes through RunContext.CallTool, so the tool log
// keeps the whole result while the model gets it capped at the worker's
// MaxToolOutput.
//
// Phases: executing during the tool loop; pages first when the case has a
// base_url (the prompt then tells the model to open that page with the
// browser tools before STEP 1; the phase lasts for the model's first turn,
// or until it writes a STEP marker); parsing once the model answers without
// tool calls; done is set by the engine.
//
// Step attribution: a tool call carries no step number (the tool's
// arguments belong to the tool), so the prompt asks the model to write a
// line "STEP n" before working on step n. The last such marker in a turn
// with tool calls makes step n the current one: it is marked running the
// first time, and that turn's calls are logged for it. Step 1 is current
// from the start (after the page-loading turn when there is a base_url), so
// a model that never writes markers has its calls logged for step 1. Steps
// get their verdicts together from the final answer, so a step's elapsed
// time runs from its first marker to the verdict.
//
// # Verdict
//
// The final answer (a turn without tool calls) must hold a JSON object
//
//	{"steps":[{"step":1,"status":"passed","detail":"..."}],"summary":"..."}
//
// preferably in a ```json fenced block. The parser takes the last fenced
// block holding an object with "steps", else the last JSON object with
// "steps" anywhere in the text. "step" may be a number or a numeric string
// and defaults to the entry's position; "steps" may also be an object keyed
// by step number; status is compared case-insensitively. A status other than
// passed, failed or error makes the step error, naming the status; a step
// the verdict leaves out is error "no verdict from the model"; a repeated
// step counts once (the first). When the answer holds no verdict, the model
// is asked once more for only the JSON; a second miss is a run error quoting
// the answer. A summary is printed to the run's output.
//
// # Errors
//
// A 4xx answer other than 429 is a run error with the provider's own error
// type and message. 429, 5xx (Anthropic's 529 overloaded included) and
// broken connections are retried up to Config.MaxRetries times, waiting
// what retry-after (or OpenAI's retry-after-ms) asks, at most
// MaxRetryAfter, else 1 s, 2 s, 4 s, ...; then the run errs with the last
// answer. A request that outlasts llm_timeout_seconds is a run error naming
// that setting, and so is a run that reaches llm_max_turns without a
// verdict. A stop ends the run at once: the pending request or tool call is
// cancelled and Execute returns nil, leaving the verdict to the engine.
//
// # Dry run
//
// A dry run never calls the model: it checks the settings (key present,
// URL and numbers valid), lists the tools, and resolves each step's explicit
// tool without calling it. Steps without an explicit tool pass with a
// detail saying the model would choose the tools.
//
// # Output
//
// One line per model turn ("turn 2: 1 tool call, tokens in 1200 out 40"),
// an excerpt of the model's text in tool-call turns, one line per tool call,
// retry notes, and at the end one line per step verdict and the summary.
package llm
