package iotemu

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"

	"cpesuite/internal/iotemu/proto"
	"cpesuite/internal/platform/fsx"
)

// Template is DeviceTemplateDto: one device's own settings. clientId is
// required; every empty or zero field falls back to the global
// configuration when the device starts.
type Template struct {
	ClientID         string            `json:"clientId"`
	Protocol         string            `json:"protocol,omitempty"`
	SerialNumber     string            `json:"serialNumber,omitempty"`
	Manufacturer     string            `json:"manufacturer,omitempty"`
	ModelName        string            `json:"modelName,omitempty"`
	ServerIP         string            `json:"serverIp,omitempty"`
	ServerPort       int               `json:"serverPort,omitempty"`
	ClientIP         string            `json:"clientIp,omitempty"`
	ClientPort       int               `json:"clientPort,omitempty"`
	SecurityMode     string            `json:"securityMode,omitempty"`
	PSKID            string            `json:"pskId,omitempty"`
	PSKKey           string            `json:"pskKey,omitempty"`
	AuthKeyStorePath string            `json:"authKeyStorePath,omitempty"`
	AuthKeyStorePass string            `json:"authKeyStorePass,omitempty"`
	TrustStorePath   string            `json:"trustStorePath,omitempty"`
	TrustStorePass   string            `json:"trustStorePass,omitempty"`
	AuthCertAlias    string            `json:"authCertAlias,omitempty"`
	AliasPass        string            `json:"aliasPass,omitempty"`
	ProtocolOptions  map[string]string `json:"protocolOptions,omitempty"`
	Parameters       map[string]string `json:"parameters,omitempty"`
}

// templateSecrets are the four template secrets masked in every read.
func (t *Template) templateSecrets() []*string {
	return []*string{&t.PSKKey, &t.AuthKeyStorePass, &t.TrustStorePass, &t.AliasPass}
}

// normalize checks a posted template and applies the template masking
// rule: a posted "*" is dropped so the device inherits the configured
// value. p is the protocol the template resolves to.
func (t *Template) normalize(p proto.Protocol) error {
	if t.ClientID == "" {
		return badRequest("clientId is required")
	}
	if err := checkID("clientId", t.ClientID); err != nil {
		return err
	}
	if t.SerialNumber != "" {
		if err := checkID("serialNumber", t.SerialNumber); err != nil {
			return err
		}
	}
	for _, s := range t.templateSecrets() {
		if *s == mask {
			*s = ""
		}
	}
	t.SecurityMode = strings.ToUpper(t.SecurityMode)
	opts, err := mergeOptions(p, nil, t.ProtocolOptions, true)
	if err != nil {
		return err
	}
	if len(opts) == 0 {
		opts = nil
	}
	t.ProtocolOptions = opts
	return nil
}

// masked returns t as GET /api/storedDevices shows it.
func (t Template) masked(p proto.Protocol) Template {
	for _, s := range t.templateSecrets() {
		if *s != "" {
			*s = mask
		}
	}
	if p != nil {
		t.ProtocolOptions = maskOptionMap(p, t.ProtocolOptions)
	} else if len(t.ProtocolOptions) > 0 {
		// A protocol not loaded here: which options are secret is unknown,
		// so every value is masked.
		m := make(map[string]string, len(t.ProtocolOptions))
		for k, v := range t.ProtocolOptions {
			m[k] = v
			if v != "" {
				m[k] = mask
			}
		}
		t.ProtocolOptions = m
	}
	t.Parameters = maps.Clone(t.Parameters)
	return t
}

// resolve overlays t on the global settings and checks the result.
func (t Template) resolve(s Settings, avail []string, maxDevices int) (Settings, error) {
	r := s
	r.ClientsCount, r.ClientPort = 1, 0
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&r.Protocol, strings.ToUpper(t.Protocol))
	r.ClientID = t.ClientID
	r.SerialNumber = t.ClientID
	set(&r.SerialNumber, t.SerialNumber)
	set(&r.Manufacturer, t.Manufacturer)
	set(&r.ModelName, t.ModelName)
	set(&r.ServerIP, t.ServerIP)
	set(&r.ClientIP, t.ClientIP)
	set(&r.SecurityMode, t.SecurityMode)
	set(&r.PSKID, t.PSKID)
	set(&r.PSKKey, t.PSKKey)
	set(&r.AuthKeyStorePath, t.AuthKeyStorePath)
	set(&r.AuthKeyStorePass, t.AuthKeyStorePass)
	set(&r.TrustStorePath, t.TrustStorePath)
	set(&r.TrustStorePass, t.TrustStorePass)
	set(&r.AuthCertAlias, t.AuthCertAlias)
	set(&r.AliasPass, t.AliasPass)
	if t.ServerPort != 0 {
		r.ServerPort = t.ServerPort
	}
	if t.ClientPort != 0 {
		r.ClientPort = t.ClientPort
	}
	if err := r.validate(avail, maxDevices); err != nil {
		return r, err
	}
	return r, nil
}

// saveStoredLocked writes the templates file; caller holds mu.
func (e *Emulator) saveStoredLocked() error {
	ts := slices.Collect(maps.Values(e.stored))
	sort.Slice(ts, func(i, j int) bool { return ts[i].ClientID < ts[j].ClientID })
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(e.path(storedFile), b); err != nil {
		return fileError("write", e.path(storedFile), err)
	}
	return nil
}

// StoredDevices lists the templates, masked, sorted by client id.
func (e *Emulator) StoredDevices() []Template {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Template, 0, len(e.stored))
	for _, t := range e.stored {
		out = append(out, t.masked(e.protos[strings.ToUpper(t.Protocol)]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClientID < out[j].ClientID })
	return out
}
