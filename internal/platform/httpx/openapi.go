package httpx

import (
	"bytes"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/swaggest/swgui/v5emb"
)

// ServeOpenAPI registers the OpenAPI document doc at docPath and an
// interactive Swagger UI for it at uiPath (the page and, below it, its
// assets, which are embedded in the swgui module). The document's content
// type follows docPath's extension (.json, .yaml, .yml) or, failing that,
// its first byte: '{' means JSON, anything else YAML.
func ServeOpenAPI(mux *http.ServeMux, docPath, uiPath, title string, doc []byte) {
	ct := openAPIContentType(docPath, doc)
	mux.HandleFunc("GET "+docPath, func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ct)
		h.Set("Content-Length", strconv.Itoa(len(doc)))
		_, _ = w.Write(doc)
	})

	base := strings.TrimSuffix(uiPath, "/")
	ui := v5emb.New(title, docPath, base+"/")
	if base != "" {
		mux.Handle("GET "+base, ui)
	}
	mux.Handle("GET "+base+"/", ui)
}

func openAPIContentType(docPath string, doc []byte) string {
	switch strings.ToLower(path.Ext(docPath)) {
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")), " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return "application/json"
	}
	return "application/yaml"
}
