package notes

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cpesuite/internal/platform/apperr"
)

// filter is the query of GET /api/notes. Empty fields do not filter.
type filter struct {
	status            string // "" when status=all
	includeDeprecated bool
	severity          string
	widget, kpi       string
	testID, topology  string
	tag               string
	q                 string // lower-cased
}

// parseFilter reads and checks the list query. Unknown parameters are
// ignored; of a repeated parameter the first value counts.
func parseFilter(v url.Values, opts Options) (filter, error) {
	get := func(name string) (string, error) {
		s := strings.TrimSpace(v.Get(name))
		if utf8.RuneCountInString(s) > maxQueryLen {
			return "", apperr.Invalid("INVALID_QUERY", "query parameter %s is longer than %d characters", name, maxQueryLen)
		}
		return s, nil
	}
	var f filter
	var err error
	if f.status, err = get("status"); err != nil {
		return f, err
	}
	switch {
	case f.status == "":
		f.status = StatusActive
	case f.status == statusAll:
		f.status = ""
	case !slices.Contains(opts.Status, f.status):
		return f, badQuery("status", f.status, append(slices.Clone(opts.Status), statusAll))
	}
	if f.severity, err = get("severity"); err != nil {
		return f, err
	}
	if f.severity != "" && !slices.Contains(opts.Severity, f.severity) {
		return f, badQuery("severity", f.severity, opts.Severity)
	}
	if f.kpi, err = get("scope_kpi"); err != nil {
		return f, err
	}
	if f.kpi = strings.ToLower(f.kpi); f.kpi != "" && !slices.Contains(opts.KPITypes, f.kpi) {
		return f, badQuery("scope_kpi", f.kpi, opts.KPITypes)
	}
	if f.topology, err = get("scope_topology"); err != nil {
		return f, err
	}
	if f.topology = strings.ToLower(f.topology); f.topology != "" && !slices.Contains(opts.Topologies, f.topology) {
		return f, badQuery("scope_topology", f.topology, opts.Topologies)
	}
	if f.widget, err = get("scope_widget"); err != nil {
		return f, err
	}
	if f.testID, err = get("scope_test_id"); err != nil {
		return f, err
	}
	if f.tag, err = get("tag"); err != nil {
		return f, err
	}
	if f.tag, err = normTag(f.tag); err != nil {
		return f, apperr.Invalid("INVALID_QUERY", "query parameter tag: %s", apperr.PublicMessage(err))
	}
	if f.q, err = get("q"); err != nil {
		return f, err
	}
	f.q = strings.ToLower(f.q)
	if s := v.Get("include_deprecated"); s != "" {
		if f.includeDeprecated, err = strconv.ParseBool(s); err != nil {
			return f, apperr.Invalid("INVALID_QUERY", "query parameter include_deprecated must be true or false, not %q", clip(s))
		}
	}
	return f, nil
}

func badQuery(name, v string, allowed []string) error {
	return apperr.Invalid("INVALID_QUERY", "query parameter %s: %q is not allowed; allowed: %s", name, clip(v), strings.Join(allowed, ", "))
}

// match reports whether n passes f. A global note applies everywhere, so
// it passes every scope filter.
func (f filter) match(n *Note) bool {
	if f.status != "" && n.Status != f.status && !(f.includeDeprecated && n.Status == StatusDeprecated) {
		return false
	}
	if f.severity != "" && n.Severity != f.severity {
		return false
	}
	sc := n.Scope
	if !sc.Global && !(inScope(sc.Widgets, f.widget) && inScope(sc.TestIDs, f.testID) &&
		inScope(sc.KPITypes, f.kpi) && inScope(sc.Topologies, f.topology)) {
		return false
	}
	if f.tag != "" && !slices.Contains(n.Tags, f.tag) {
		return false
	}
	if f.q != "" && !strings.Contains(strings.ToLower(n.Title), f.q) && !strings.Contains(strings.ToLower(n.Body), f.q) {
		return false
	}
	return true
}

// inScope: an empty want does not filter; widget names and test ids are
// compared without regard to case.
func inScope(list []string, want string) bool {
	return want == "" || slices.ContainsFunc(list, func(v string) bool { return strings.EqualFold(v, want) })
}

// list returns the rows passing f, newest first (updated_at, then id).
func (s *Store) list(f filter) []Row {
	s.mu.RLock()
	matched := make([]*Note, 0, len(s.notes))
	for _, n := range s.notes {
		if f.match(n) {
			matched = append(matched, n)
		}
	}
	slices.SortFunc(matched, func(a, b *Note) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	rows := make([]Row, len(matched))
	for i, n := range matched {
		rows[i] = n.row()
	}
	s.mu.RUnlock()
	return rows
}
