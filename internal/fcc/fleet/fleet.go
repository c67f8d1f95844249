// Package fleet resolves campaign selections into fleets of devices by
// reading the ACS device tables directly.
//
// The tables are a contract (internal/acs/schema.md), so this package reads
// them with its own SQL instead of importing the ACS: services never import
// each other's internals. Every resolve is one COUNT statement over the whole
// match followed by at most one row statement, so that counters, the page and
// both serial reports come from one consistent read and the cost of a
// resolve does not grow with the number of round trips.
package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

// Queryer is the part of a database handle the resolver needs. It is an
// interface so tests can count statements and callers can pass a *sql.Tx.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Scope is the caller's visibility: All (scope ALL, no domain predicate) or
// the visible DomainIDs (scope LIST).
type Scope struct {
	All       bool
	DomainIDs []int64
}

// Narrow intersects a body domainIds list with the scope (resolution rule 2).
// ids == nil means "no body list": the scope is returned unchanged and empty
// is false. A non-nil list, even an empty one, narrows: with All the result
// is LIST over ids (deduplicated); with LIST it is the intersection. empty
// reports that the caller sees nothing, in which case callers answer an
// empty result without any statement: an empty list must never turn into
// "no restriction".
func (s Scope) Narrow(ids []int64) (out Scope, empty bool) {
	if ids == nil {
		return s, false
	}
	seen := make(map[int64]bool, len(ids))
	var keep map[int64]bool
	if !s.All {
		keep = make(map[int64]bool, len(s.DomainIDs))
		for _, id := range s.DomainIDs {
			keep[id] = true
		}
	}
	out.DomainIDs = make([]int64, 0, len(ids))
	for _, id := range ids {
		if seen[id] || (keep != nil && !keep[id]) {
			continue
		}
		seen[id] = true
		out.DomainIDs = append(out.DomainIDs, id)
	}
	return out, len(out.DomainIDs) == 0
}

// Empty reports whether the scope sees no domain at all.
func (s Scope) Empty() bool { return !s.All && len(s.DomainIDs) == 0 }

// SourceType says how a selection picks its devices.
type SourceType string

// The source types, as they appear on the wire.
const (
	SourceAll       SourceType = "ALL"         // every visible device of the chosen manufacturer/model
	SourceCondition SourceType = "CONDITION"   // a device condition (named fields and/or rules of a saved condition)
	SourceDevices   SourceType = "DEVICE_LIST" // individual devices by cpeId
	SourceSerials   SourceType = "SERIAL_LIST" // a serial list (also what uploads produce)
)

var sourceTypes = []SourceType{SourceAll, SourceCondition, SourceDevices, SourceSerials}

// ParseSourceType accepts exactly the UPPER_SNAKE wire values; the spec
// gives sourceType no default, so a blank value is refused like a wrong one.
func ParseSourceType(s string) (SourceType, error) {
	if slices.Contains(sourceTypes, SourceType(s)) {
		return SourceType(s), nil
	}
	if s == "" {
		return "", apperr.Invalid("", "sourceType is required (one of %s)", sourceTypeList())
	}
	return "", apperr.Invalid("", "sourceType %q is not supported (one of %s)", s, sourceTypeList())
}

func sourceTypeList() string {
	names := make([]string, len(sourceTypes))
	for i, t := range sourceTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// Condition is the device condition request: every field optional, present
// ones combined with AND.
type Condition struct {
	ManufacturerIDs []int64 `json:"manufacturerIds,omitempty"`
	ModelIDs        []int64 `json:"modelIds,omitempty"`
	OnlyOnline      bool    `json:"onlyOnline,omitempty"`
	DomainIDs       []int64 `json:"domainIds"`       // nil = absent; non-nil narrows the scope only (rule 2)
	Rules           []Rule  `json:"rules,omitempty"` // from a saved condition's criteria
}

// Rule compares one device column with a value (a saved condition's rule).
type Rule struct {
	Key    string   `json:"key"`
	Op     string   `json:"op"`
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
}

// SavedCondition is a row of acs_conditions with its criteria parsed.
type SavedCondition struct {
	ID        int64
	Name      string
	DomainID  *int64
	Condition Condition // criteria: manufacturerIds, modelIds, domainIds, onlyOnline, rules
}

// Selection is what to resolve. Which fields take part depends on Source:
//
//   - every source: the scope narrowed by Condition.DomainIDs (rule 2),
//     Manufacturer and Model when not blank, and Exclude;
//   - SourceAll: nothing else ("every visible device of the chosen model"),
//     so a stray condition cannot shrink the fleet;
//   - SourceCondition, SourceDevices, SourceSerials: the present Condition
//     fields (manufacturerIds, modelIds, onlyOnline, rules), so that an
//     upload honours onlyOnline; plus DeviceIDs or Serials for the last two.
//
// For serial lists the reports (notFoundSerials, duplicateSerials) describe
// what the serials resolve to among the visible devices before Exclude is
// applied: unselecting one device of a serial does not make it "not found".
type Selection struct {
	Source       SourceType
	Manufacturer string // case-insensitive whole match on manufacturer name; blank = no filter
	Model        string // case-insensitive whole match on model name; blank = no filter
	Condition    Condition
	DeviceIDs    []int64  // SourceDevices
	Serials      []string // SourceSerials, caller's spelling
	Exclude      []int64  // unselectedDevices: removed from the match
}

// Device is one resolved device (the "Device (resolve items)" shape).
type Device struct {
	CPEID          int64  `json:"cpeId"`
	Serial         string `json:"serial"`
	ModelID        *int64 `json:"modelId"`
	Manufacturer   string `json:"manufacturer"`
	Model          string `json:"model"`
	DomainID       *int64 `json:"domainId"`
	Online         bool   `json:"online"`
	Protocol       string `json:"protocol"`
	SupportedByACS bool   `json:"supportedByAcs"`
	Firmware       string `json:"firmware"`
}

// ModelCount is one entry of countsByModel.
type ModelCount struct {
	ModelID      *int64 `json:"modelId"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
	DeviceCount  int64  `json:"deviceCount"`
	OnlineCount  int64  `json:"onlineCount"`
}

// Counts describe the whole match, never a page. Slices are never nil so
// that they encode as [] rather than null.
type Counts struct {
	TotalCount               int64        `json:"totalCount"`
	OnlineCount              int64        `json:"onlineCount"`
	UnsupportedProtocolCount int64        `json:"unsupportedProtocolCount"`
	CountsByModel            []ModelCount `json:"countsByModel"`
	NotFoundSerials          []string     `json:"notFoundSerials"`
	DuplicateSerials         []string     `json:"duplicateSerials"`
}

// Page asks for one page of items. Number is 1-based; Size 0 means no items
// are wanted (counters only).
type Page struct{ Number, Size int }

// Result is a resolve answer: one page of items and the counters of the
// whole match.
type Result struct {
	Items []Device // never nil
	Counts
}

// CatalogEntry is one model with visible devices (POST
// /FCC/manufacturerAndModelByTestType): plain model name, protocol separate.
type CatalogEntry struct {
	ManufacturerID *int64 `json:"manufacturerId"`
	Manufacturer   string `json:"manufacturer"`
	ModelID        int64  `json:"modelId"`
	Model          string `json:"model"`
	Protocol       string `json:"protocol"`
	SupportedByACS bool   `json:"supportedByAcs"`
	DeviceCount    int64  `json:"deviceCount"`
}

// Resolver reads fleets from the ACS database.
type Resolver struct {
	db         Queryer
	dialect    sqlstore.Dialect
	maxDevices int
}

// New returns a resolver over the ACS database db of the given dialect.
// maxDevices is svc.fcc.max-devices-per-test: the bound of serial lists
// (rule 6) and the ceiling of a page.
func New(db Queryer, dialect sqlstore.Dialect, maxDevices int) *Resolver {
	return &Resolver{db: db, dialect: dialect, maxDevices: maxDevices}
}

// LimitError says a selection resolves to more devices than a configuration
// may hold. It is an invalid-request error (400) whose public message names
// both figures.
type LimitError struct{ Count, Limit int64 }

func (e *LimitError) Error() string {
	return fmt.Sprintf("the selection resolves to %d devices, more than the limit of %d per configuration", e.Count, e.Limit)
}

// Unwrap gives the apperr view of the error, so that the service's error
// writer finds the kind (400) and the public message through errors.As
// while callers can still match *LimitError itself.
func (e *LimitError) Unwrap() error {
	return apperr.Invalid("", "%s", e.Error())
}
