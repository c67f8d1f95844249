// Package notes is the test-runner worker's QA notes API
// (platform services specification, part A): validation notes that QA engineers write
// about widgets, KPIs, test cases and network topologies, which a
// knowledge service pulls (GET /api/notes/raw) and embeds.
//
// # Storage
//
// One JSON document per note, Dir/<id>.json, written atomically
// (fsx.WriteFileAtomic, mode 0600) in a directory created with mode 0700.
// All notes are held in memory; writes are serialised by one mutex, so the
// expected_version check and the write are one step and of two PUTs with
// the same expected_version one wins and the other gets 409. Reads do not
// wait for a write's disk sync. A file that
// cannot be loaded is logged and skipped, and its id stays blocked so no
// new note overwrites it. Hidden files (left-over temporary files) and
// files not ending in .json are ignored.
//
// # Rules the spec leaves open, as decided here
//
//   - severity: info, warning, critical (default info). status: active,
//     draft, deprecated (default active). kpi_types: download_speed,
//     upload_speed, latency, jitter, packet_loss, wifi_signal,
//     wifi_interference, user_experience. topologies: gateway_only,
//     gateway_extender, mesh, bridge, dual_wan. GET
//     /api/notes/_meta/options serves these lists and writes are held to
//     them (400 naming the bad value). kpi_types and topologies are
//     lower-cased first; stored notes are not re-checked on load, so a
//     value later dropped from a list does not make notes vanish.
//   - id: lower-case a-z, digits and single inner hyphens, at most 64
//     bytes. Without an id the slug of the title is used (ASCII letters
//     and digits kept, every other run of characters one hyphen, "note"
//     when nothing is left), with -2, -3, ... when taken. An explicit id
//     is checked the same way and answers 409 NOTE_EXISTS when taken. The
//     route words raw and reindex are reserved. A path id that is not a
//     valid id (../x) answers 400 INVALID_ID.
//   - title (trimmed, 1-200 characters, no control characters) and body
//     (non-blank, at most 20000 characters, newlines and tabs allowed) are
//     required. scope is required and needs a non-empty list or global
//     true; list entries are trimmed, empty ones and repeats dropped, at
//     most 50 per list of at most 200 characters each.
//   - tags: lower-cased, inner whitespace runs become one hyphen, letters,
//     digits and - _ . : / only, at most 50 characters, at most 20 tags,
//     kept as a sorted set.
//   - created_by: from the body (at most 100 characters), else the caller's
//     username; a PUT without it keeps the current value.
//   - PUT replaces title, body and scope; omitted severity, status and
//     tags (absent or null) keep their current values, an empty tags
//     array clears them. The body may repeat the path's id but not change
//     it (400 ID_MISMATCH). PUT of a missing id answers 404. version
//     starts at 1 and grows by 1 on every PUT and on a soft delete.
//   - updated_at is RFC 3339 in UTC with millisecond precision.
//   - DELETE deprecates (200 with the note; a deprecated note is answered
//     unchanged); DELETE ?hard=true removes the document (204).
//   - Bodies: at most 256 KiB, one JSON object, unknown fields refused.
//   - At most 5000 notes per worker (409 TOO_MANY_NOTES).
//
// # Listing
//
// GET /api/notes answers rows (snippet: the body's first 200 characters
// with whitespace folded, "…" when cut), newest first by updated_at, then
// by id. Filters combine with AND: status (default active, all disables
// it), include_deprecated (adds deprecated notes to a status filter),
// severity, scope_widget, scope_test_id (both case-insensitive),
// scope_kpi, scope_topology, tag (normalised like tags), q
// (case-insensitive substring of title or body). A global note passes
// every scope filter, since it applies everywhere. Values outside the
// allowlists answer 400 INVALID_QUERY. GET /api/notes/raw answers every
// note, deprecated ones included, in stored shape, ordered by id.
//
// # Knowledge refresh webhook
//
// When the setting knowledge_refresh_url is set, every create, update and
// delete POSTs {"source":"qa-notes","reason":"save","note_ids":[...]} to it
// (Authorization: Bearer knowledge_refresh_token when that is set). The
// call is made by at most one goroutine at a time; saves made during a
// call are folded into one follow-up call naming all their ids (at most
// 100, note_ids_truncated marks more). A failed call is logged and never
// fails the save. POST /api/notes/reindex makes the call synchronously with
// reason "reindex" and answers {triggered, detail, knowledge_summary}:
// knowledge_summary is copied from the answer when that is a JSON object
// with all of added, updated, unchanged, deleted, errors, fetched and
// status. Without a URL it answers 200 with triggered false; when the call
// fails, 502 KNOWLEDGE_REFRESH_FAILED whose body also carries
// triggered false.
package notes
