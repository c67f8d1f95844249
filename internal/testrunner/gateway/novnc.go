package gateway

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// novnc proxies /novnc/{stand}/... (HTTP and WebSocket) to the stand's
// novnc_url. The spec leaves /novnc/* open, so this is a plain proxy: no
// token, and no identity header is forwarded.
func (g *Gateway) novnc(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("stand")
	st, err := g.fleet.stand(r.Context(), name)
	if err != nil {
		return err
	}
	if st.NoVNCURL == "" {
		return apperr.NotFound("NOVNC_NOT_CONFIGURED", "stand %q has no novnc_url", name)
	}
	target, err := url.Parse(st.NoVNCURL)
	if err != nil {
		return apperr.Wrap(apperr.ErrInternal, err, "", "stored novnc_url unreadable")
	}
	rest := r.PathValue("path")
	rp := &httputil.ReverseProxy{
		Transport: g.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = strings.TrimSuffix(target.Path, "/") + "/" + rest
			pr.Out.URL.RawPath = ""
			pr.SetXForwarded()
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			g.adapter.WriteError(w, r, apperr.Wrap(apperr.ErrUpstream, err, "NOVNC_UNREACHABLE", "noVNC of stand "+name+" unreachable"))
		},
	}
	rp.ServeHTTP(w, r)
	return nil
}
