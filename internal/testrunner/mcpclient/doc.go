// Package mcpclient is the test-runner worker's MCP client: it reaches the
// tool servers named by the worker setting mcp_servers (name=url pairs,
// worker.ParseToolServers) over the streamable HTTP transport of the
// official go-sdk and implements worker.Tools for the run engine.
//
// Sessions. Each configured server gets one MCP session, opened on first
// use and shared by every run and executor of the worker: the browser tool
// server keeps one tab per session, so consecutive steps see the same page.
// Opening is serialized per server, so concurrent callers never open two
// sessions for one server. The setting is read on every use: a server
// whose URL changed is reconnected to its new URL, a server removed from
// the setting has its session closed.
//
// Reconnecting. A session the sdk reports broken (its connection ended, or
// the server answered 404 for the session id because it restarted or
// expired the session) is replaced on the next use. A request the server
// provably did not run (the session was gone before it was sent, or the
// server refused the session id for that very request) is sent again once
// on a fresh session, and so is tools/list after any transport failure.
// Other failures of a tool call are returned: a call that may have run is
// never repeated behind the caller's back. A call whose response stream
// breaks mid-way ends when the session is found broken or when its context
// (Config.CallTimeout by default) ends, because servers without an event
// store cannot resume the stream. A JSON-RPC error is the server's answer,
// not a failure of the session.
//
// Tool lists are cached per session: dropped when the server sends
// notifications/tools/list_changed, refreshed on reconnect, on a lookup of
// a tool the cache does not know, by every status probe, and after ToolsTTL
// as a safety net (a stateless server's notification stream ends silently
// when the server restarts).
//
// Results. Call turns MCP content into text: text parts joined by
// newlines, images and audio as a marker such as "[image/png, 5120 bytes]",
// embedded text resources as their text, other resources as a marker, and
// structured content as compact JSON unless a text part already holds the
// same JSON value. The tool's isError is passed through; only transport
// and protocol failures are errors.
//
// HTTP. Routes registers, behind the caller identity (any role):
//
//	GET /api/mcp-status  probes every server (tools/list, opening a session
//	                     when needed; ProbeTimeout each, concurrently)
//	GET /api/mcp-diag    what the client knows without probing
//
// Status body:
//
//	{"mcps": {"emulator": {"ok": true, "url": "http://127.0.0.1:8558/mcp",
//	  "tools": 12, "checked_at": "2026-01-02T03:04:05Z", "error": ""}},
//	 "connected": true}
//
// connected is true when at least one server is configured and every
// configured server is ok: a worker with no tool servers is not connected
// to anything. An invalid mcp_servers value adds "error" at the top level.
//
// Diag body (one entry per configured server; times are null until known):
//
//	{"mcps": {"emulator": {"url": "...", "ok": true, "session": true,
//	  "protocol_version": "2025-11-25", "server_name": "...",
//	  "server_version": "...", "sessions_opened": 1,
//	  "last_error": "", "last_error_at": null, "last_ok_at": "...",
//	  "last_tools": ["get_parameter", ...], "last_tools_at": "...",
//	  "checked_at": "..."}}}
//
// Credentials. A server URL may carry userinfo (sent as HTTP Basic
// authentication by net/http). It never appears in status, diag, errors or
// logs: URLs are shown without userinfo and error texts are scrubbed.
package mcpclient
