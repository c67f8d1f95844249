package fcc

import (
	"reflect"
	"strings"
)

// settingField describes one field of the settings element: its wire name,
// which half it belongs to, and whether it only makes sense for time-based
// transfers.
type settingField struct {
	name     string
	kind     string // TypeSpeed or TypeLatency
	timeOnly bool
	index    int // struct field index in Setting
}

var settingFields = func() []settingField {
	halves := map[string]string{
		"wanDownloadThreshold": TypeSpeed, "wanUploadThreshold": TypeSpeed,
		"speedTierDownload": TypeSpeed, "speedTierUpload": TypeSpeed,
		"downloadUrl": TypeSpeed, "uploadUrl": TypeSpeed,
		"downloadConnections": TypeSpeed, "uploadConnections": TypeSpeed,
		"fileSizeUpload": TypeSpeed, "testMode": TypeSpeed,
		"timeBasedTestDuration": TypeSpeed, "timeBasedTestMeasurementInterval": TypeSpeed,
		"testHost": TypeLatency, "numberOfRepetitions": TypeLatency, "timeout": TypeLatency,
		"dataBlockSize": TypeLatency, "dscp": TypeLatency,
	}
	t := reflect.TypeFor[Setting]()
	var out []settingField
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		kind, ok := halves[name]
		if !ok {
			continue // id, type
		}
		out = append(out, settingField{name: name, kind: kind, index: i,
			timeOnly: name == "timeBasedTestDuration" || name == "timeBasedTestMeasurementInterval"})
	}
	if len(out) != len(halves) {
		panic("fcc: settingFields out of step with Setting")
	}
	return out
}()

// fieldValue returns the field's pointer value, or nil when it is absent;
// a blank string counts as absent.
func fieldValue(s *Setting, f settingField) reflect.Value {
	if s == nil {
		return reflect.Value{}
	}
	v := reflect.ValueOf(s).Elem().Field(f.index)
	if v.IsNil() {
		return reflect.Value{}
	}
	if sp, ok := v.Interface().(*string); ok && strings.TrimSpace(*sp) == "" {
		return reflect.Value{}
	}
	return v
}

// Defaults are the two default levels of the settings chain for one
// campaign: its own domain's defaults and the global level, by type.
type Defaults struct {
	Domain map[string]*Setting
	Global map[string]*Setting
}

// resolveSetting walks the chain for one setting element: the request
// value, the campaign domain's default, the global default; a blank string
// counts as absent, and a field no level sets stays null. Only the half of
// the element's type is kept. Time-based-only fields are inherited only
// when the resolved mode is TIME_BASED: a default meant for time-based
// campaigns must not make every file-based campaign of the domain invalid.
func resolveSetting(req Setting, d Defaults) Setting {
	out := Setting{Type: req.Type}
	levels := []*Setting{&req, d.Domain[req.Type], d.Global[req.Type]}
	dst := reflect.ValueOf(&out).Elem()
	for _, f := range settingFields {
		if f.kind != req.Type || f.timeOnly {
			continue
		}
		for _, l := range levels {
			if v := fieldValue(l, f); v.IsValid() {
				dst.Field(f.index).Set(v)
				break
			}
		}
	}
	timeBased := out.TestMode != nil && *out.TestMode == ModeTimeBased
	for _, f := range settingFields {
		if f.kind != req.Type || !f.timeOnly {
			continue
		}
		chain := levels[:1]
		if timeBased {
			chain = levels
		}
		for _, l := range chain {
			if v := fieldValue(l, f); v.IsValid() {
				dst.Field(f.index).Set(v)
				break
			}
		}
	}
	// Strings are stored trimmed: " http://x " and "http://x" are one URL.
	for _, p := range []**string{&out.DownloadURL, &out.UploadURL, &out.TestHost, &out.TestMode} {
		if *p != nil {
			s := strings.TrimSpace(**p)
			*p = &s
		}
	}
	return out
}

// presentFields names the fields of s that are set (blank strings count as
// absent), of the given half or of every half when kind is "".
func presentFields(s Setting, kind string) []string {
	var out []string
	for _, f := range settingFields {
		if (kind == "" || f.kind == kind) && fieldValue(&s, f).IsValid() {
			out = append(out, f.name)
		}
	}
	return out
}

// otherKind is the half a setting of type t must not carry.
func otherKind(t string) string {
	if t == TypeSpeed {
		return TypeLatency
	}
	return TypeSpeed
}

// onlyHalf returns s with the other half nulled, for storage and reads.
func onlyHalf(s Setting) Setting {
	out := Setting{ID: s.ID, Type: s.Type}
	src, dst := reflect.ValueOf(&s).Elem(), reflect.ValueOf(&out).Elem()
	for _, f := range settingFields {
		if f.kind == s.Type {
			dst.Field(f.index).Set(src.Field(f.index))
		}
	}
	return out
}
