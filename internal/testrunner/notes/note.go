package notes

import (
	"slices"
	"time"
)

// Note is a QA validation note as GET /api/notes/{id} answers it and as it
// is stored in Dir/<id>.json (the stored shape is the wire shape).
type Note struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Scope     Scope     `json:"scope"`
	Severity  string    `json:"severity"`
	Status    string    `json:"status"`
	Tags      []string  `json:"tags"`
	CreatedBy string    `json:"created_by"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Scope says where a note applies. The lists are never null on the wire.
type Scope struct {
	TestIDs    []string `json:"test_ids"`
	Widgets    []string `json:"widgets"`
	KPITypes   []string `json:"kpi_types"`
	Topologies []string `json:"topologies"`
	Global     bool     `json:"global"`
}

// Row is one entry of GET /api/notes.
type Row struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Snippet   string    `json:"snippet"`
	Severity  string    `json:"severity"`
	Status    string    `json:"status"`
	Scope     Scope     `json:"scope"`
	Tags      []string  `json:"tags"`
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Options are the allowlists of GET /api/notes/_meta/options; writes are
// held to the same lists.
type Options struct {
	Severity   []string `json:"severity"`
	Status     []string `json:"status"`
	KPITypes   []string `json:"kpi_types"`
	Topologies []string `json:"topologies"`
}

// Severity values.
const (
	SeverityInfo     = "info"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Status values. A draft is kept out of the default list (status=active)
// like a deprecated note, but is not retired.
const (
	StatusActive     = "active"
	StatusDraft      = "draft"
	StatusDeprecated = "deprecated"
)

// statusAll is the status query value that disables the status filter.
const statusAll = "all"

// DefaultOptions returns the allowlists. The KPI types are the quality
// figures the campaign service and the score simulator deal in; the
// topologies are the home-network shapes the emulated CPEs are set up as.
func DefaultOptions() Options {
	return Options{
		Severity: []string{SeverityInfo, SeverityWarning, SeverityCritical},
		Status:   []string{StatusActive, StatusDraft, StatusDeprecated},
		KPITypes: []string{
			"download_speed", "upload_speed", "latency", "jitter", "packet_loss",
			"wifi_signal", "wifi_interference", "user_experience",
		},
		Topologies: []string{
			"gateway_only", "gateway_extender", "mesh", "bridge", "dual_wan",
		},
	}
}

// Limits. Slugs and ids stay short enough to be file names everywhere;
// the rest keeps one note and the whole store small enough to hold in
// memory and to re-embed on every save.
const (
	maxIDLen        = 64
	maxTitleLen     = 200   // runes
	maxBodyLen      = 20000 // runes
	maxTags         = 20
	maxTagLen       = 50 // runes
	maxScopeEntries = 50 // per scope list
	maxScopeLen     = 200
	maxCreatedByLen = 100
	maxQueryLen     = 200
	defaultMaxNotes = 5000
	// maxRequestBytes bounds a request body: a maximal body escaped as
	// \uXXXX plus full scope lists still fits.
	maxRequestBytes = 256 << 10
	snippetLen      = 200 // runes
)

// clone returns a deep copy, so callers never share slices with the store.
func (n *Note) clone() *Note {
	c := *n
	c.Tags = slices.Clone(n.Tags)
	c.Scope = n.Scope.clone()
	return &c
}

func (s Scope) clone() Scope {
	return Scope{
		TestIDs:    slices.Clone(s.TestIDs),
		Widgets:    slices.Clone(s.Widgets),
		KPITypes:   slices.Clone(s.KPITypes),
		Topologies: slices.Clone(s.Topologies),
		Global:     s.Global,
	}
}

// nonNil makes every list an empty array on the wire instead of null.
func (n *Note) nonNil() {
	for _, p := range []*[]string{&n.Tags, &n.Scope.TestIDs, &n.Scope.Widgets, &n.Scope.KPITypes, &n.Scope.Topologies} {
		if *p == nil {
			*p = []string{}
		}
	}
}

func (n *Note) row() Row {
	return Row{
		ID:        n.ID,
		Title:     n.Title,
		Snippet:   snippet(n.Body),
		Severity:  n.Severity,
		Status:    n.Status,
		Scope:     n.Scope.clone(),
		Tags:      slices.Clone(n.Tags),
		Version:   n.Version,
		UpdatedAt: n.UpdatedAt,
	}
}
