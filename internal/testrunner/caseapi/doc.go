// Package caseapi is the test-runner worker's HTTP API for test cases,
// sections, projects and data-model trees (platform services specification, part A):
//
//   - /api/tests…: list, read (JSON view and raw YAML), create, replace,
//     delete, upload hand-edited YAML, and regenerate emulator_setup from a
//     case's own text;
//   - /api/sections: the distinct section values of the cases;
//   - /api/projects… and /api/tests/assign-project: projects with their
//     case counts, kept in DataDir/projects.json, and the project field of
//     the cases they group;
//   - /api/trees…: the .xml data-model trees the emulator setup refers to.
//
// Cases live in a testcase.Store, whose strict parser, validation and
// file-name rules this package relies on; trees live as plain files in
// TreesDir. Every route checks the gateway-signed caller identity
// (identity.Guard). Reads are open to any authenticated user; every write
// needs the admin or editor role, which the spec names for projects and
// assignment and this package applies to the other writes as well, so a
// role added to the test runner later gets read access and nothing more.
//
// A project exists when projects.json holds it or when a case names it in
// its project field (cases imported from a test-management system arrive
// with projects nobody created here). Both kinds are listed, renamed and
// deleted alike; renaming or describing a project that only cases name
// records it in projects.json.
//
// GET /api/tests answers the spec's array of summaries. Case files that
// do not parse never hide the others: their count is in the X-Case-Errors
// header of every answer, and GET /api/tests?with_errors=true answers
// {"tests": [...], "errors": [{"file", "error"}]} instead of the array.
// Reading, regenerating or assigning such a file is 422 INVALID_CASE with
// the parser's problems (the request was fine, the stored file is not);
// an invalid document sent by the client is 400 INVALID_CASE. Either way
// the error body carries "problems": [{"field", "line", "message"}].
//
// Uploads (POST /api/tests/upload-yaml and POST /api/trees/upload) are
// multipart forms with the file in field "file". The file name is checked
// exactly as the client sent it, so "../x.xml" is refused rather than
// quietly shortened to "x.xml"; a new file answers 201, a replaced one 200.
// Trees must be well-formed XML with one root element and no DOCTYPE or
// other <!...> declaration.
package caseapi
