// Package httpx holds the HTTP plumbing every cpesuite service shares:
// error-returning handlers and their adapter, JSON decoding and encoding,
// middleware (request id, access log, panic recovery), OpenAPI and Swagger
// UI serving, and server construction.
//
// A typical service wires it like this:
//
//	a := httpx.Adapter{Errors: writeFCCError, Log: log}
//	mux := http.NewServeMux()
//	mux.HandleFunc("GET /FCC/items/{id}", a.H(svc.getItem))
//	h := httpx.Chain(mux,
//		httpx.RequestID,                   // outermost: everything below can log the id
//		httpx.AccessLog(log),
//		metrics.HTTPMiddleware(reg, "fcc"),
//		httpx.Recover(log, writeFCCError), // innermost: a panic still gets logged and counted as a 500
//	)
package httpx
