package fcc

import (
	"net/url"
	"slices"
	"strings"

	"cpesuite/internal/fcc/fleet"
)

// maxReactivations is the spec's bound on reactivationCount.
const maxReactivations = 9

func checkEnum(field, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return invalid("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
	}
	return nil
}

// validateShape checks what can be checked on the body alone, before any
// default is looked up or any device read (save rules 1 to 4 and 6 on the
// request; rule 1 is checked again on resolved values by validateSetting).
func validateShape(c *Campaign, maxConfigs int, iotw bool) error {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		return invalid("name is required")
	}
	if n := len([]rune(c.Name)); n > 255 {
		return invalid("name has %d characters; at most 255 are allowed", n)
	}
	if c.Type == "" {
		return invalid("type is required (SPEED or LATENCY)")
	}
	if err := checkEnum("type", c.Type, testTypes); err != nil {
		return err
	}
	if err := validateActivation(c.Activation); err != nil {
		return err
	}
	if err := validateReactivation(c.Reactivation); err != nil {
		return err
	}
	// Rule 6; a campaign has one or more configurations.
	if len(c.Configs) == 0 {
		return invalid("configs must hold at least one configuration")
	}
	if len(c.Configs) > maxConfigs {
		return invalid("a campaign holds at most %d configurations (svc.fcc.max-configs-per-test); got %d", maxConfigs, len(c.Configs))
	}
	for i := range c.Configs {
		if err := validateConfigShape(i, &c.Configs[i], c.Type, iotw); err != nil {
			return err
		}
	}
	return nil
}

func validateActivation(a *Activation) error {
	if a == nil {
		return invalid("activation is required: it carries totalTestDuration and singleTestDuration")
	}
	if a.Type == "" {
		return invalid("activation.type is required (%s)", strings.Join(activationTypes, ", "))
	}
	if err := checkEnum("activation.type", a.Type, activationTypes); err != nil {
		return err
	}
	if a.Type == ActivationScheduled && a.Date == nil {
		return invalid("activation.date is required for a Scheduled activation")
	}
	if a.TotalTestDuration == nil || a.SingleTestDuration == nil {
		return invalid("activation.totalTestDuration (hours) and activation.singleTestDuration (minutes) are required")
	}
	if *a.SingleTestDuration < 1 {
		return invalid("activation.singleTestDuration must be at least 1 minute")
	}
	if *a.TotalTestDuration < 0 {
		return invalid("activation.totalTestDuration must not be negative")
	}
	// Rule 2: integer division, and the message states the count.
	if it := *a.TotalTestDuration * 60 / *a.SingleTestDuration; it < 1 {
		return invalid("iterations = totalTestDuration * 60 / singleTestDuration = %d * 60 / %d = %d; at least 1 iteration is required",
			*a.TotalTestDuration, *a.SingleTestDuration, it)
	}
	for name, p := range map[string]*int{"batchInterval": a.BatchInterval, "failedTestRetries": a.FailedTestRetries, "wanUsageRetries": a.WanUsageRetries} {
		if p != nil && *p < 0 {
			return invalid("activation.%s must not be negative", name)
		}
	}
	return nil
}

func validateReactivation(r *Reactivation) error {
	if r == nil {
		return nil
	}
	if r.Type == "" {
		return invalid("reactivation.type is required when reactivation is given (%s)", strings.Join(reactivationTypes, ", "))
	}
	if err := checkEnum("reactivation.type", r.Type, reactivationTypes); err != nil {
		return err
	}
	if r.RepeatEvery != nil && *r.RepeatEvery < 1 {
		return invalid("reactivation.repeatEvery must be at least 1")
	}
	if r.Ends != nil && *r.Ends != "" && *r.Ends != EndsAfter {
		return invalid("reactivation.ends %q is not supported; the only value is After (with reactivationCount)", *r.Ends)
	}
	// Rule 3: null is accepted and stores 0.
	if r.ReactivationCount == nil {
		zero := 0
		r.ReactivationCount = &zero
	}
	if n := *r.ReactivationCount; n < 0 || n > maxReactivations {
		return invalid("reactivationCount must be from 0 to %d; got %d", maxReactivations, n)
	}
	return nil
}

func validateConfigShape(i int, cfg *TestConfig, campaignType string, iotw bool) error {
	cfg.Manufacturer, cfg.Model = strings.TrimSpace(cfg.Manufacturer), strings.TrimSpace(cfg.Model)
	// Rule 4: no default source.
	if cfg.SourceType == "" {
		return invalid("configs[%d].sourceType is required (%s)", i, sourceTypeList)
	}
	src, err := fleet.ParseSourceType(cfg.SourceType)
	if err != nil {
		return invalid("configs[%d].sourceType: %v", i, err)
	}
	// Rule 5, the feature switch.
	if cfg.ConditionID != nil && !iotw {
		return invalid("configs[%d].conditionId is refused: saved conditions are switched off (svc.fcc.iotw.enabled=false)", i)
	}
	if src == fleet.SourceCondition && cfg.ConditionID == nil {
		return invalid("configs[%d]: sourceType CONDITION needs conditionId", i)
	}
	if src != fleet.SourceCondition && cfg.ConditionID != nil {
		return invalid("configs[%d]: conditionId is only read with sourceType CONDITION", i)
	}
	if src == fleet.SourceDevices && len(cfg.SelectedDevices) == 0 {
		return invalid("configs[%d]: sourceType DEVICE_LIST needs selectedDevices", i)
	}
	if src == fleet.SourceSerials {
		var kept []string
		for _, s := range cfg.Serials {
			if s = strings.TrimSpace(s); s != "" {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return invalid("configs[%d]: sourceType SERIAL_LIST needs serials", i)
		}
		cfg.Serials = kept
	} else if len(cfg.Serials) > 0 {
		return invalid("configs[%d]: serials are only read with sourceType SERIAL_LIST", i)
	}
	// Rule 1, on the request: exactly one element of the campaign's kind,
	// carrying no field of the other kind.
	if len(cfg.Settings) == 0 {
		return invalid("configs[%d]: a %s campaign needs a %s settings element", i, campaignType, campaignType)
	}
	if len(cfg.Settings) > 1 {
		return invalid("configs[%d].settings holds %d elements; exactly one is allowed", i, len(cfg.Settings))
	}
	st := cfg.Settings[0]
	if st.Type == "" {
		return invalid("configs[%d].settings[0].type is required (%s)", i, strings.Join(testTypes, ", "))
	}
	if err := checkEnum("configs["+itoa(i)+"].settings[0].type", st.Type, testTypes); err != nil {
		return err
	}
	if st.Type != campaignType {
		return invalid("configs[%d]: a %s campaign needs a %s settings element, not %s", i, campaignType, campaignType, st.Type)
	}
	if other := presentFields(st, otherKind(campaignType)); len(other) > 0 {
		return invalid("configs[%d].settings[0] carries %s fields (%s) in a %s campaign", i, otherKind(campaignType), strings.Join(other, ", "), campaignType)
	}
	return nil
}

// validateSetting checks a resolved setting: the rules apply to resolved
// values, so a value inherited from a default is held to them too.
func validateSetting(i int, st Setting) error {
	at := func(f string) string { return "configs[" + itoa(i) + "].settings[0]." + f }
	if st.TestMode != nil {
		if err := checkEnum(at("testMode"), *st.TestMode, testModes); err != nil {
			return err
		}
		if *st.TestMode == ModeFileBased {
			if st.TimeBasedTestDuration != nil || st.TimeBasedTestMeasurementInterval != nil {
				return invalid("%s: a FILE_BASED transfer refuses timeBasedTestDuration and timeBasedTestMeasurementInterval (they only make sense for TIME_BASED)", at("testMode"))
			}
		}
	}
	for f, u := range map[string]*string{"downloadUrl": st.DownloadURL, "uploadUrl": st.UploadURL} {
		if u != nil {
			if err := checkDiagnosticURL(*u); err != nil {
				return invalid("%s: %v", at(f), err)
			}
		}
	}
	for f, v := range map[string]*int64{
		"wanDownloadThreshold": st.WanDownloadThreshold, "wanUploadThreshold": st.WanUploadThreshold,
		"speedTierDownload": st.SpeedTierDownload, "speedTierUpload": st.SpeedTierUpload,
		"fileSizeUpload": st.FileSizeUpload, "dataBlockSize": st.DataBlockSize, "timeout": st.Timeout,
	} {
		if v != nil && *v < 0 {
			return invalid("%s must not be negative", at(f))
		}
	}
	for f, v := range map[string]*int64{
		"downloadConnections": st.DownloadConnections, "uploadConnections": st.UploadConnections,
		"numberOfRepetitions": st.NumberOfRepetitions, "timeBasedTestDuration": st.TimeBasedTestDuration,
		"timeBasedTestMeasurementInterval": st.TimeBasedTestMeasurementInterval,
	} {
		if v != nil && *v < 1 {
			return invalid("%s must be at least 1", at(f))
		}
	}
	if st.DSCP != nil && (*st.DSCP < 0 || *st.DSCP > 63) {
		return invalid("%s must be from 0 to 63", at("dscp"))
	}
	if st.Type == TypeLatency {
		if st.TestHost == nil {
			return invalid("%s is required for a LATENCY campaign: no request value and no domain or global default", at("testHost"))
		}
		if err := checkHost(*st.TestHost); err != nil {
			return invalid("%s: %v", at("testHost"), err)
		}
	}
	return nil
}

// checkDiagnosticURL accepts what TR-143 diagnostics can use: an absolute
// http or https URL with a host.
func checkDiagnosticURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return errorString("must be an absolute http or https URL with a host and no credentials")
	}
	return nil
}

// checkHost accepts a host name or an IP literal, nothing with a scheme,
// port or path: the ACS writes it into IPPingDiagnostics.Host.
func checkHost(h string) error {
	if h == "" || len(h) > 253 {
		return errorString("must be a host name or an IP address")
	}
	for _, r := range h {
		if !(r == '.' || r == '-' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return errorString("must be a host name or an IP address")
		}
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

var sourceTypeList = strings.Join([]string{string(fleet.SourceAll), string(fleet.SourceCondition), string(fleet.SourceDevices), string(fleet.SourceSerials)}, ", ")
