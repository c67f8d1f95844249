package httpauth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxDiscard bounds how much of a 401 body is read to keep the connection
// reusable; past it closing the connection is cheaper.
const maxDiscard = 64 << 10

// Client sends requests that may need HTTP authentication. It answers a 401
// with the strongest challenge it supports (Digest SHA-512-256, SHA-256,
// MD5, each before its -sess variant; then Basic) and retries once, or
// twice when the server says the nonce was stale. It does not remember
// challenges between requests: every call that needs credentials costs a
// 401 round trip. It is safe for concurrent use.
type Client struct {
	// HTTP sends the requests; http.DefaultClient when nil.
	HTTP *http.Client
	// Username and Password are the credentials.
	Username, Password string
	// PreferDigest refuses Basic: a server offering only Basic gets
	// ErrNoSupportedChallenge instead of the password in the clear. Digest
	// is always chosen over Basic when both are offered.
	PreferDigest bool
}

// Do sends req and, if the server answers 401, sends it again with
// credentials. A request with a body must have GetBody (http.NewRequest sets
// it for in-memory bodies) or Do refuses it with ErrBodyNotReplayable before
// sending anything. When the server refuses the credentials Do returns
// ErrUnauthorized; when it offers nothing this client can answer,
// ErrNoSupportedChallenge. As with http.Client.Do, the caller closes the
// body of a returned response.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return nil, ErrBodyNotReplayable
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	for round := 0; ; round++ {
		challenges, parseErr := ParseChallenges(resp.Header.Values("WWW-Authenticate"))
		discard(resp)
		authz, err := c.authorization(req, challenges)
		if err != nil {
			if errors.Is(err, ErrNoSupportedChallenge) && parseErr != nil {
				err = fmt.Errorf("%w (%w)", err, parseErr)
			}
			return nil, err
		}
		retry, err := rewind(req)
		if err != nil {
			return nil, err
		}
		retry.Header.Set("Authorization", authz)
		resp, err = hc.Do(retry)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized {
			return resp, nil
		}
		// A stale nonce is not a wrong password: the server wants the same
		// credentials over a fresh nonce (RFC 7616 §3.3).
		if round == 0 && offersStaleDigest(resp.Header.Values("WWW-Authenticate")) {
			continue
		}
		discard(resp)
		return nil, ErrUnauthorized
	}
}

// authorization answers the best challenge.
func (c *Client) authorization(req *http.Request, challenges []Challenge) (string, error) {
	best, bestRank := -1, 0
	for i, ch := range challenges {
		if r := c.rank(ch); r > bestRank {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		return "", ErrNoSupportedChallenge
	}
	ch := challenges[best]
	if strings.EqualFold(ch.Scheme, "Basic") {
		return basicAuthorization(c.Username, c.Password)
	}
	return c.digestAuthorization(req, ch)
}

// rank scores a challenge; 0 means this client cannot answer it. Digest
// scores by algorithm, qop=auth before the legacy form; Basic comes last.
func (c *Client) rank(ch Challenge) int {
	switch {
	case strings.EqualFold(ch.Scheme, "Basic"):
		if c.PreferDigest {
			return 0
		}
		return 1
	case strings.EqualFold(ch.Scheme, "Digest"):
		alg, ok := ParseAlgorithm(ch.Param("algorithm"))
		if !ok || ch.Param("nonce") == "" {
			return 0
		}
		qop, ok := chooseQOP(ch, alg)
		if !ok {
			return 0
		}
		r := 10 * alg.rank()
		if qop != "" {
			r++
		}
		return r
	}
	return 0
}

// chooseQOP picks "auth" from the challenge's qop list, or "" for a
// challenge without qop (RFC 2069), which -sess algorithms cannot answer.
func chooseQOP(ch Challenge, alg Algorithm) (string, bool) {
	list, offered := ch.Params["qop"]
	if !offered {
		return "", !alg.sess()
	}
	for q := range strings.SplitSeq(list, ",") {
		if strings.EqualFold(strings.TrimSpace(q), "auth") {
			return "auth", true
		}
	}
	return "", false
}

func (c *Client) digestAuthorization(req *http.Request, ch Challenge) (string, error) {
	alg, _ := ParseAlgorithm(ch.Param("algorithm"))
	qop, _ := chooseQOP(ch, alg)
	d := DigestAuthorization{
		Username: c.Username,
		Realm:    ch.Param("realm"),
		URI:      req.URL.RequestURI(),
		// Echo the server's spelling: some compare it case-sensitively.
		Algorithm: ch.Param("algorithm"),
		Nonce:     ch.Param("nonce"),
		Opaque:    ch.Param("opaque"),
		QOP:       qop,
	}
	if qop != "" {
		// Every answer uses a fresh challenge, so the count is always 1.
		d.NC = "00000001"
		d.CNonce = rand.Text()
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	resp, err := d.ComputeResponse(method, c.Password)
	if err != nil {
		return "", err
	}
	d.Response = resp
	return d.String(), nil
}

// offersStaleDigest reports whether a 401 carries a Digest challenge with
// stale=true.
func offersStaleDigest(values []string) bool {
	challenges, _ := ParseChallenges(values)
	for _, ch := range challenges {
		if strings.EqualFold(ch.Scheme, "Digest") && strings.EqualFold(ch.Param("stale"), "true") {
			return true
		}
	}
	return false
}

// rewind copies req for another attempt, with a fresh body from GetBody.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("httpauth: rewinding request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// discard drains a little of the body so that the connection can be
// reused, then closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscard))
	_ = resp.Body.Close()
}
