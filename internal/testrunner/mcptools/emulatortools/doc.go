// Package emulatortools is the MCP tool server through which test-runner
// workers drive end-to-end cases: it exposes the TR-069 emulator's
// single-device API (/apiV2) and the ACS management API (/acs, through
// acsclient) as MCP tools over streamable HTTP (target mcp-emulator, path
// /mcp).
//
// Emulator tools (all take serial, the emulated CPE's serial number):
//
//   - start_device: start a CPE (tree_file, acs_url, connection_request,
//     restart are optional); the answer's startedAt feeds
//     acs_find_device.informed_after.
//   - stop_device, list_devices, device_status (running, inSession, identity).
//   - get_parameter (name), get_parameters (prefix, limit), set_parameter
//     (name, value, silent) on the CPE's own tree.
//   - invoke_event (event: "2 PERIODIC", "2" or "Periodic" alike).
//   - read_log (lines: the last lines of the device's CWMP log).
//
// ACS tools (a device is named by serial or device_id):
//
//   - acs_find_device (wait_seconds polls until the device has informed).
//   - acs_get_device (parameter_prefix narrows the cached parameters).
//   - acs_queue_task (kind plus that kind's arguments, connection_request,
//     wait_seconds): one task in one transaction; the answer says whether
//     it finished and in which state.
//   - acs_get_task (task_id or transaction_id).
//
// Results are text: JSON for structured answers, the log text for
// read_log. Failures are tool errors (isError), never protocol errors:
// arguments that do not fit the input schema (missing, unknown, wrong
// type) are reported by the SDK as `validating "arguments": ...`; every
// other failure reads "CODE: message", with codes such as
// INVALID_ARGUMENT, NOT_FOUND, CONFLICT, EMULATOR_UNREACHABLE,
// ACS_UNREACHABLE, TIMEOUT, CANCELLED, EMULATOR_ERROR, ACS_ERROR or the
// ACS's own code. A CPE fault of a queued task is an answer (state
// "fault"), not a tool error, so a case can expect it.
//
// The HTTP handler is stateless: a restarted server is no surprise to a
// client holding a session.
package emulatortools
