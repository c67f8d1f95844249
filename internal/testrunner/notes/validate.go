package notes

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// input is the body of POST /api/notes. Unknown fields are refused, so a
// client that sends version or updated_at believing they take effect
// learns otherwise.
type input struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Scope     *Scope   `json:"scope"`
	Severity  string   `json:"severity"`
	Status    string   `json:"status"`
	Tags      []string `json:"tags"`
	CreatedBy string   `json:"created_by"`
}

// updateInput is the body of PUT /api/notes/{id}.
type updateInput struct {
	input
	ExpectedVersion *int `json:"expected_version"`
}

// fields are the validated, normalised writable fields of a note. Empty
// severity, status and created_by, and nil tags, mean "not given".
type fields struct {
	title, body, severity, status, createdBy string
	scope                                    Scope
	tags                                     []string
}

// reservedIDs are path words of the notes API that a note id would shadow
// (GET /api/notes/raw is the raw dump, not a note called raw).
var reservedIDs = []string{"raw", "reindex"}

// checkID validates an id given by a client, in a body or a path.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen || !isSlug(id) {
		return apperr.Invalid("INVALID_ID",
			"note id %q is invalid: use 1 to %d lower-case letters a-z, digits and single inner hyphens", clip(id), maxIDLen)
	}
	if slices.Contains(reservedIDs, id) {
		return apperr.Invalid("INVALID_ID", "note id %q is reserved", id)
	}
	return nil
}

func isSlug(s string) bool {
	prevHyphen := true // no leading hyphen
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevHyphen = false
		case c == '-' && !prevHyphen:
			prevHyphen = true
		default:
			return false
		}
	}
	return !prevHyphen
}

// slugify derives an id from a title: ASCII letters lower-cased and digits
// kept, every other run of characters (including non-ASCII letters) one
// hyphen, at most max bytes. A title with nothing usable gives "note".
func slugify(title string, max int) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			if b.Len() >= max {
				break
			}
			continue
		}
		hyphen = true
	}
	s := strings.TrimRight(b.String()[:min(b.Len(), max)], "-")
	if s == "" {
		return "note"
	}
	return s
}

// uniqueSlug returns the slug of title, or slug-2, slug-3, ... when taken;
// the base is shortened so the suffixed id still fits maxIDLen.
func uniqueSlug(title string, taken func(string) bool) string {
	base := slugify(title, maxIDLen)
	if !taken(base) {
		return base
	}
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		id := slugify(base, maxIDLen-len(suffix)) + suffix
		if !taken(id) {
			return id
		}
	}
}

// check validates and normalises the writable fields. opts holds the
// allowlists; the scope rule needs a non-empty list or global.
func (in *input) check(opts Options) (fields, error) {
	var f fields
	var err error
	if f.title, err = text("title", strings.TrimSpace(in.Title), maxTitleLen, false); err != nil {
		return f, err
	}
	if f.title == "" {
		return f, apperr.Invalid("TITLE_REQUIRED", "title is required")
	}
	if strings.TrimSpace(in.Body) == "" {
		return f, apperr.Invalid("BODY_REQUIRED", "body is required")
	}
	if f.body, err = text("body", in.Body, maxBodyLen, true); err != nil {
		return f, err
	}
	if f.severity, err = oneOf("severity", "INVALID_SEVERITY", strings.TrimSpace(in.Severity), opts.Severity); err != nil {
		return f, err
	}
	if f.status, err = oneOf("status", "INVALID_STATUS", strings.TrimSpace(in.Status), opts.Status); err != nil {
		return f, err
	}
	if f.createdBy, err = text("created_by", strings.TrimSpace(in.CreatedBy), maxCreatedByLen, false); err != nil {
		return f, err
	}
	if f.tags, err = normTags(in.Tags); err != nil {
		return f, err
	}
	if in.Scope == nil {
		return f, apperr.Invalid("SCOPE_REQUIRED", "scope is required: give at least one of test_ids, widgets, kpi_types, topologies, or global true")
	}
	if f.scope, err = normScope(*in.Scope, opts); err != nil {
		return f, err
	}
	return f, nil
}

// text checks a string field's length in runes and its characters;
// multiline admits newlines and tabs.
func text(name, v string, max int, multiline bool) (string, error) {
	if n := utf8.RuneCountInString(v); n > max {
		return "", apperr.Invalid("INVALID_FIELD", "%s is %d characters long; at most %d are allowed", name, n, max)
	}
	for _, r := range v {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return "", apperr.Invalid("INVALID_FIELD", "%s contains the control character %U", name, r)
		}
	}
	return v, nil
}

// oneOf accepts "" (not given) or a value of allowed.
func oneOf(name, code, v string, allowed []string) (string, error) {
	if v == "" || slices.Contains(allowed, v) {
		return v, nil
	}
	return "", apperr.Invalid(code, "%s %q is not allowed; allowed: %s", name, clip(v), strings.Join(allowed, ", "))
}

func normScope(in Scope, opts Options) (Scope, error) {
	var out Scope
	var err error
	if out.TestIDs, err = normList("scope.test_ids", in.TestIDs, nil, "", false); err != nil {
		return out, err
	}
	if out.Widgets, err = normList("scope.widgets", in.Widgets, nil, "", false); err != nil {
		return out, err
	}
	if out.KPITypes, err = normList("scope.kpi_types", in.KPITypes, opts.KPITypes, "INVALID_KPI_TYPE", true); err != nil {
		return out, err
	}
	if out.Topologies, err = normList("scope.topologies", in.Topologies, opts.Topologies, "INVALID_TOPOLOGY", true); err != nil {
		return out, err
	}
	out.Global = in.Global
	if !out.Global && len(out.TestIDs)+len(out.Widgets)+len(out.KPITypes)+len(out.Topologies) == 0 {
		return out, apperr.Invalid("SCOPE_REQUIRED", "scope needs at least one of test_ids, widgets, kpi_types, topologies, or global true")
	}
	return out, nil
}

// normList trims entries, drops empty ones and repeats (first one wins),
// and, when allowed is set, lower-cases them and holds them to it.
func normList(name string, in, allowed []string, code string, lower bool) ([]string, error) {
	out := []string{}
	for _, v := range in {
		v = strings.TrimSpace(v)
		if lower {
			v = strings.ToLower(v)
		}
		if v == "" || slices.Contains(out, v) {
			continue
		}
		if _, err := text(name+" entry", v, maxScopeLen, false); err != nil {
			return nil, err
		}
		if allowed != nil && !slices.Contains(allowed, v) {
			return nil, apperr.Invalid(code, "%s value %q is not allowed; allowed: %s", name, clip(v), strings.Join(allowed, ", "))
		}
		// Checked inside the loop: out stays short, so the repeat check
		// above stays cheap however long the list sent.
		if out = append(out, v); len(out) > maxScopeEntries {
			return nil, apperr.Invalid("INVALID_FIELD", "%s has more than %d distinct entries", name, maxScopeEntries)
		}
	}
	return out, nil
}

// normTag lower-cases a tag and joins its words with hyphens, so "Known
// Issue" and "known-issue" are one tag. Letters, digits and - _ . : / are
// allowed. An empty result means the tag is dropped.
func normTag(t string) (string, error) {
	t = strings.Join(strings.Fields(strings.ToLower(t)), "-")
	if utf8.RuneCountInString(t) > maxTagLen {
		return "", apperr.Invalid("INVALID_TAG", "tag %q is longer than %d characters", clip(t), maxTagLen)
	}
	for _, r := range t {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/", r) {
			return "", apperr.Invalid("INVALID_TAG", "tag %q contains %q; use letters, digits and - _ . : /", clip(t), r)
		}
	}
	return t, nil
}

// normTags normalises tags into a sorted set; nil stays nil (not given).
func normTags(in []string) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	out := []string{}
	for _, t := range in {
		n, err := normTag(t)
		if err != nil {
			return nil, err
		}
		if n == "" || slices.Contains(out, n) {
			continue
		}
		if out = append(out, n); len(out) > maxTags {
			return nil, apperr.Invalid("INVALID_TAG", "a note has at most %d distinct tags", maxTags)
		}
	}
	slices.Sort(out)
	return out, nil
}

// clip shortens a client value quoted back in an error message.
func clip(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

// snippet is the first snippetLen characters of body with its whitespace
// runs folded to single spaces; "…" marks a cut.
func snippet(body string) string {
	s := strings.Join(strings.Fields(body), " ")
	if utf8.RuneCountInString(s) <= snippetLen {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:snippetLen]), " ") + "…"
}
