package fccxml

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

// ReadCampaign reads a document holding exactly one campaign (see the
// package documentation for the shape and the rules on untrusted input).
//
// The root must be fccExport holding exactly one test element: a missing
// test is an error, and a second one is an error saying that the document
// must hold exactly one campaign ("found a second test element at line N").
// formatVersion is read as a child of the root (as written) or inside test,
// once; it must be present and equal FormatVersion. type is required and
// must be SPEED or LATENCY; the other fields are optional. Unknown elements
// inside known blocks, duplicated fields and text where elements belong are
// errors naming them. The serials of all fleet pages of a config are
// concatenated in document order into Config.Serials (blank ones skipped,
// duplicates kept). All input problems are errors wrapping ErrInvalid.
//
// The settings block is not checked against the campaign type and
// sourceType is not checked against a list: the result fills a campaign
// form, and the campaign service validates that form on save.
func ReadCampaign(r io.Reader) (Campaign, error) {
	p := newDecoder(r)
	c, err := p.campaign()
	if err != nil {
		return Campaign{}, err
	}
	return c, nil
}

// campaignReader holds what is seen across the document.
type campaignReader struct {
	*decoder
	c          Campaign
	hasVersion bool // formatVersion seen
	hasTest    bool // test seen
	serials    int  // serials read so far, all configs
	testLine   int
}

func (p *decoder) campaign() (Campaign, error) {
	cr := &campaignReader{decoder: p}
	root, err := p.root()
	if err != nil {
		return Campaign{}, err
	}
	if root.Name.Local != "fccExport" {
		return Campaign{}, p.errorf("the root element must be <fccExport>, found <%s>", root.Name.Local)
	}
	err = p.children("fccExport", func(se xml.StartElement) error {
		switch se.Name.Local {
		case "formatVersion":
			return cr.formatVersion()
		case "test":
			return cr.test()
		}
		return p.unknown(se, "fccExport")
	})
	if err != nil {
		return Campaign{}, err
	}
	if err := cr.epilog(); err != nil {
		return Campaign{}, err
	}
	switch {
	case !cr.hasTest:
		return Campaign{}, p.errorf("the document holds no <test> element")
	case !cr.hasVersion:
		return Campaign{}, p.errorf("the document holds no <formatVersion>; supported version is %s", FormatVersion)
	}
	return cr.c, nil
}

// root skips the prolog (XML declaration, comments, white space) and
// returns the root element's start.
func (p *decoder) root() (xml.StartElement, error) {
	for {
		tok, err := p.token()
		if err == io.EOF {
			return xml.StartElement{}, p.errorf("the document holds no elements")
		}
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return xml.StartElement{}, p.errorf("text before the root element")
			}
		}
	}
}

// epilog reads what follows the root element. encoding/xml accepts several
// root elements, so a second campaign could hide there.
func (cr *campaignReader) epilog() error {
	stray := ""
	strayLine := 0
	for {
		tok, err := cr.token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "test" {
				return cr.secondTest()
			}
			if stray == "" {
				stray, strayLine = t.Name.Local, cr.line()
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 && stray == "" {
				stray, strayLine = "text", cr.line()
			}
		}
	}
	if stray != "" {
		return cr.errorfAt(strayLine, "content after the root element (%s)", stray)
	}
	return nil
}

func (cr *campaignReader) secondTest() error {
	return cr.errorf("the document must hold exactly one campaign: found a second test element (the first is at line %d)", cr.testLine)
}

func (cr *campaignReader) formatVersion() error {
	if cr.hasVersion {
		return cr.errorf("duplicate <formatVersion>")
	}
	cr.hasVersion = true
	s, err := cr.text("formatVersion")
	if err != nil {
		return err
	}
	if v := strings.TrimSpace(s); v != FormatVersion {
		return cr.errorf("unsupported formatVersion %s; supported version is %s", quote(v), FormatVersion)
	}
	cr.c.FormatVersion = FormatVersion
	return nil
}

func (cr *campaignReader) test() error {
	if cr.hasTest {
		return cr.secondTest()
	}
	cr.hasTest = true
	cr.testLine = cr.line()
	c := &cr.c
	seen := map[string]bool{}
	once := func(name string) error {
		if seen[name] {
			return cr.errorf("duplicate <%s> in <test>", name)
		}
		seen[name] = true
		return nil
	}
	err := cr.children("test", func(se xml.StartElement) error {
		name := se.Name.Local
		switch name {
		case "formatVersion":
			return cr.formatVersion()
		case "name", "type", "domain", "reactivationDays", "configs":
			if err := once(name); err != nil {
				return err
			}
		default:
			return cr.unknown(se, "test")
		}
		switch name {
		case "name":
			s, err := cr.text(name)
			c.Name = s
			return err
		case "type":
			s, err := cr.text(name)
			if err != nil {
				return err
			}
			t := strings.TrimSpace(s)
			if t != typeSpeed && t != typeLatency {
				return cr.errorf("<type> must be SPEED or LATENCY, found %s", quote(t))
			}
			c.Type = t
		case "domain":
			n, err := cr.integer(name, 64)
			if err != nil {
				return err
			}
			c.Domain = &n
		case "reactivationDays":
			n, err := cr.integer(name, 32)
			if err != nil {
				return err
			}
			days := int(n)
			c.ReactivationDays = &days
		case "configs":
			return cr.children("configs", func(se xml.StartElement) error {
				if se.Name.Local != "config" {
					return cr.unknown(se, "configs")
				}
				if len(c.Configs) == maxConfigs {
					return cr.errorf("more than %d configs", maxConfigs)
				}
				cfg, err := cr.config()
				if err != nil {
					return err
				}
				c.Configs = append(c.Configs, cfg)
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !seen["type"] {
		return cr.errorf("<test> holds no <type>")
	}
	return nil
}

func (cr *campaignReader) config() (Config, error) {
	var c Config
	seen := map[string]bool{}
	err := cr.children("config", func(se xml.StartElement) error {
		name := se.Name.Local
		switch name {
		case "manufacturer", "model", "sourceType", "conditionId":
			if seen[name] {
				return cr.errorf("duplicate <%s> in <config>", name)
			}
			seen[name] = true
		case "speedSettings", "latencySettings":
			if c.SettingsType != "" {
				return cr.errorf("a <config> holds at most one settings block, found <%s> after another", name)
			}
		}
		switch name {
		case "manufacturer":
			s, err := cr.text(name)
			c.Manufacturer = s
			return err
		case "model":
			s, err := cr.text(name)
			c.Model = s
			return err
		case "sourceType":
			s, err := cr.text(name)
			c.SourceType = strings.TrimSpace(s)
			return err
		case "conditionId":
			n, err := cr.integer(name, 64)
			if err != nil {
				return err
			}
			c.ConditionID = &n
			return nil
		case "speedSettings":
			c.SettingsType = typeSpeed
			return cr.settings(name, &c)
		case "latencySettings":
			c.SettingsType = typeLatency
			return cr.settings(name, &c)
		case "fleet":
			return cr.fleet(&c)
		}
		return cr.unknown(se, "config")
	})
	return c, err
}

func (cr *campaignReader) settings(block string, c *Config) error {
	seen := map[string]bool{}
	return cr.children(block, func(se xml.StartElement) error {
		name := se.Name.Local
		if !validName(name) {
			return cr.errorf("setting <%s> in <%s> is not a plain name of the form [A-Za-z_][A-Za-z0-9_.-]*", name, block)
		}
		if seen[name] {
			return cr.errorf("duplicate setting <%s> in <%s>", name, block)
		}
		seen[name] = true
		if len(c.Settings) == maxSettings {
			return cr.errorf("more than %d settings in <%s>", maxSettings, block)
		}
		v, err := cr.text(name)
		if err != nil {
			return err
		}
		c.Settings = append(c.Settings, Setting{Name: name, Value: v})
		return nil
	})
}

func (cr *campaignReader) fleet(c *Config) error {
	return cr.children("fleet", func(se xml.StartElement) error {
		if se.Name.Local != "serial" {
			return cr.unknown(se, "fleet")
		}
		s, err := cr.text("serial")
		if err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		if cr.serials == maxCampaignSerials {
			return cr.errorf("more than %d serials in the document", maxCampaignSerials)
		}
		cr.serials++
		c.Serials = append(c.Serials, s)
		return nil
	})
}
