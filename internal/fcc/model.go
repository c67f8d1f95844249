package fcc

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Wire enums. Everything is UPPER_SNAKE except the saved forms of the
// schedule kinds (activation and reactivation types, ends), which existing
// clients send in the spelling the spec's examples show.
const (
	TypeSpeed   = "SPEED"
	TypeLatency = "LATENCY"

	ModeFileBased = "FILE_BASED"
	ModeTimeBased = "TIME_BASED"

	ActivationScheduled   = "Scheduled"
	ActivationImmediately = "Immediately"
	ReactivationDaily     = "Daily"
	ReactivationWeekly    = "Weekly"
	EndsAfter             = "After"
)

// Campaign states. A saved campaign is a DRAFT until it is activated; the
// others are the spec's names.
const (
	StateDraft                    = "DRAFT"
	StateScheduled                = "SCHEDULED"
	StateScheduledForReactivation = "SCHEDULED_FOR_REACTIVATION"
	StateCompleted                = "COMPLETED"
	StateError                    = "ERROR"
)

var (
	testTypes         = []string{TypeSpeed, TypeLatency}
	testModes         = []string{ModeFileBased, ModeTimeBased}
	activationTypes   = []string{ActivationScheduled, ActivationImmediately}
	reactivationTypes = []string{ReactivationDaily, ReactivationWeekly}
	campaignStates    = []string{StateDraft, StateScheduled, StateScheduledForReactivation, StateCompleted, StateError}
)

// Campaign is the PUT /FCC/item/details body and the POST /FCC/item/details
// answer (the "save shape").
type Campaign struct {
	ID           *int64        `json:"id"`
	DomainID     *int64        `json:"domainId"`
	Name         string        `json:"name"`
	Type         string        `json:"type"`
	State        string        `json:"state,omitempty"`
	Activation   *Activation   `json:"activation"`
	Reactivation *Reactivation `json:"reactivation"`
	Configs      []TestConfig  `json:"configs"`
}

// Activation is the schedule.
type Activation struct {
	Type                 string     `json:"type"`
	Date                 *time.Time `json:"date"`
	OnlyOnlineDevices    bool       `json:"onlyOnlineDevices"`
	TotalTestDuration    *int       `json:"totalTestDuration"`  // hours
	SingleTestDuration   *int       `json:"singleTestDuration"` // minutes
	BatchInterval        *int       `json:"batchInterval"`
	FailedTestRetries    *int       `json:"failedTestRetries"`
	WanUsageRetries      *int       `json:"wanUsageRetries"`
	RequestDeviceConnect bool       `json:"requestDeviceConnect"`
}

// Reactivation is the repetition rule.
type Reactivation struct {
	Type              string     `json:"type"`
	RepeatEvery       *int       `json:"repeatEvery"`
	StartsOn          *time.Time `json:"startsOn"`
	Ends              *string    `json:"ends"`
	ReactivationCount *int       `json:"reactivationCount"`
}

// TestConfig is one fleet selection with its measurement settings. On reads it
// carries the saved condition's name and the frozen fleet's size, and never
// the exclusions (they were applied when the fleet froze).
type TestConfig struct {
	ID                *int64    `json:"id"`
	Manufacturer      string    `json:"manufacturer"`
	Model             string    `json:"model"`
	SourceType        string    `json:"sourceType"`
	ConditionID       *int64    `json:"conditionId"`
	ConditionName     *string   `json:"conditionName,omitempty"`
	SelectedDevices   []int64   `json:"selectedDevices"`
	UnselectedDevices []int64   `json:"unselectedDevices,omitempty"`
	Serials           []string  `json:"serials,omitempty"`
	DeviceCount       *int64    `json:"deviceCount,omitempty"`
	Settings          []Setting `json:"settings"`
}

// Setting is the diagnostics setting element: one shape for both kinds.
// Type selects the half that is read and stored; on reads the other half
// is null.
type Setting struct {
	ID   *int64 `json:"id"`
	Type string `json:"type"`

	// Speed half.
	WanDownloadThreshold             *int64  `json:"wanDownloadThreshold"`
	WanUploadThreshold               *int64  `json:"wanUploadThreshold"`
	SpeedTierDownload                *int64  `json:"speedTierDownload"`
	SpeedTierUpload                  *int64  `json:"speedTierUpload"`
	DownloadURL                      *string `json:"downloadUrl"`
	UploadURL                        *string `json:"uploadUrl"`
	DownloadConnections              *int64  `json:"downloadConnections"`
	UploadConnections                *int64  `json:"uploadConnections"`
	FileSizeUpload                   *int64  `json:"fileSizeUpload"`
	TestMode                         *string `json:"testMode"`
	TimeBasedTestDuration            *int64  `json:"timeBasedTestDuration"`
	TimeBasedTestMeasurementInterval *int64  `json:"timeBasedTestMeasurementInterval"`

	// Latency half.
	TestHost            *string `json:"testHost"`
	NumberOfRepetitions *int64  `json:"numberOfRepetitions"`
	Timeout             *int64  `json:"timeout"`
	DataBlockSize       *int64  `json:"dataBlockSize"`
	DSCP                *int64  `json:"dscp"`
}

// PageNumber is a 1-based page number. Clients send it as a number or, in
// the shape the paging envelope answers (currentPage), as an array holding
// the number; both are accepted.
type PageNumber int

// UnmarshalJSON accepts 3 and [3].
func (p *PageNumber) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, "[") {
		var a []int
		if err := json.Unmarshal(b, &a); err != nil || len(a) > 1 {
			return pageNumberError("array")
		}
		if len(a) == 1 {
			*p = PageNumber(a[0])
		}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return pageNumberError(s)
	}
	*p = PageNumber(n)
	return nil
}

// pageNumberError is a type error, so that the JSON decoder names the
// field and the client reads what was expected.
func pageNumberError(got string) error {
	if len(got) > 20 {
		got = got[:20]
	}
	return &json.UnmarshalTypeError{Value: got, Type: reflect.TypeFor[int]()}
}

// PageDetails is the paging envelope.
type PageDetails struct {
	CurrentPage []int `json:"currentPage"`
	PageItems   int   `json:"pageItems"`
	PageSize    int   `json:"pageSize"`
	TotalItems  int64 `json:"totalItems"`
	TotalPages  int64 `json:"totalPages"`
}

func pageDetails(page, size, items int, total int64) PageDetails {
	pages := int64(0)
	if size > 0 {
		pages = (total + int64(size) - 1) / int64(size)
	}
	return PageDetails{CurrentPage: []int{page}, PageItems: items, PageSize: size, TotalItems: total, TotalPages: pages}
}

// pageParams applies the default and the ceiling of a list: a missing page
// is 1, a missing size the default; out-of-range values are refused rather
// than silently clamped, so a client learns its request was wrong.
func pageParams(number PageNumber, size *int, def, max int) (int, int, error) {
	n := int(number)
	if n == 0 {
		n = 1
	}
	if n < 1 {
		return 0, 0, invalid("pageNumbers must be at least 1 (pages are 1-based)")
	}
	s := def
	if size != nil {
		s = *size
	}
	if s < 1 || s > max {
		return 0, 0, invalid("pageSize must be from 1 to %d", max)
	}
	return n, s, nil
}
