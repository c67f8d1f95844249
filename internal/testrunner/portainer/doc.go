// Package portainer is the test runner's client for Portainer, the
// container-management tool through which the gateway provisions and tears
// down worker stacks (tr-worker-<name>) and emulator wrapper stacks
// (mcp-tr-emul-<name>), and through which a worker restarts a sibling
// container and pushes settings into its own stack.
//
// The payloads follow Portainer CE 2.19 and later, checked against the
// handlers in Portainer's api/http/handler/{auth,stacks} and
// pkg/libhttp/error:
//
//	POST   /api/auth                                   {"username","password"} -> {"jwt"}; 422 on bad credentials
//	GET    /api/endpoints                              -> [{"Id","Name","Type","URL","Status",...}]
//	GET    /api/stacks?filters={"EndpointID":N}        -> [{"Id","Name","Type","EndpointId","Status","Env":[{"name","value"}],...}]
//	POST   /api/stacks/create/standalone/string?endpointId=N
//	                                                   {"name","stackFileContent","env"} -> stack; 409 on a duplicate name
//	PUT    /api/stacks/{id}?endpointId=N               {"stackFileContent","env","prune","pullImage"} -> stack
//	GET    /api/stacks/{id}/file                       -> {"StackFileContent"}
//	DELETE /api/stacks/{id}?endpointId=N               -> 204
//	POST   /api/endpoints/{id}/docker/containers/{name}/restart -> 204 (Docker API through Portainer's proxy)
//
// Errors come back as {"message","details"}. Requests authenticate with
// "Authorization: Bearer <jwt>" from /api/auth, or with an access token in
// the X-API-Key header (Portainer 2.11 and later). The create route under
// /api/stacks/create/{type}/{method} replaced POST /api/stacks?type=&method=
// in 2.19; older Portainers are not supported. pullImage is deprecated in
// 2.36 in favour of repullImageAndRedeploy; we always send false, which
// both versions read the same way.
//
// Every failure of Portainer itself (unreachable, timed out, a non-2xx
// status, an unreadable or oversized body) is an apperr error of kind
// ErrUpstream (502) whose public message names the operation and the status,
// for example "Portainer: create stack tr-worker-w1: HTTP 500"; the detail
// Portainer sent is kept in the cause, which is only logged. A 404 or 409
// from Portainer still matches apperr.ErrNotFound or apperr.ErrConflict
// through errors.Is, so callers can tell "already gone" from "broken"
// without the status leaking into their own responses. The password, the
// JWT and the API key never appear in an error.
//
// Package portainertest holds an in-memory double that speaks these paths.
package portainer
