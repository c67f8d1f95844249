package cwmp

import (
	"encoding/base64"
	"strings"
	"time"
)

// Kicked is the CPE relaying a web page's request (the optional "kicked"
// mechanism) to the ACS.
type Kicked struct {
	Command string
	Referer string
	Arg     string
	Next    string
}

// KickedResponse tells the CPE where to send the browser next.
type KickedResponse struct {
	NextURL string
}

// SetVouchers installs signed option vouchers on the CPE.
type SetVouchers struct {
	// VoucherList holds the vouchers, base64-encoded on the wire.
	VoucherList [][]byte
}

// SetVouchersResponse acknowledges SetVouchers.
type SetVouchersResponse struct{ noArgs }

// GetOptions lists the options enabled by vouchers; an empty OptionName
// asks for all.
type GetOptions struct {
	OptionName string
}

// GetOptionsResponse lists the options.
type GetOptionsResponse struct {
	OptionList []OptionStruct
}

// OptionStruct describes one option. A zero ExpirationDate is written as
// absent, as for options without expiry (Mode 2).
type OptionStruct struct {
	OptionName     string
	VoucherSN      uint32
	State          uint32
	Mode           int32
	StartDate      time.Time
	ExpirationDate time.Time
	IsTransferable int32
}

// Method returns "Kicked".
func (*Kicked) Method() string { return "Kicked" }

// Method returns "KickedResponse".
func (*KickedResponse) Method() string { return "KickedResponse" }

// Method returns "SetVouchers".
func (*SetVouchers) Method() string { return "SetVouchers" }

// Method returns "SetVouchersResponse".
func (*SetVouchersResponse) Method() string { return "SetVouchersResponse" }

// Method returns "GetOptions".
func (*GetOptions) Method() string { return "GetOptions" }

// Method returns "GetOptionsResponse".
func (*GetOptionsResponse) Method() string { return "GetOptionsResponse" }

func (m *Kicked) appendXML(e *encoder) {
	e.str("Command", m.Command)
	e.str("Referer", m.Referer)
	e.str("Arg", m.Arg)
	e.str("Next", m.Next)
}

func (m *Kicked) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "Command":
			return d.str(&m.Command)
		case "Referer":
			return d.str(&m.Referer)
		case "Arg":
			return d.str(&m.Arg)
		case "Next":
			return d.str(&m.Next)
		}
		return d.skip()
	})
}

func (m *KickedResponse) appendXML(e *encoder) { e.str("NextURL", m.NextURL) }

func (m *KickedResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "NextURL" {
			return d.str(&m.NextURL)
		}
		return d.skip()
	})
}

func (m *SetVouchers) appendXML(e *encoder) {
	e.startArray("VoucherList", "SOAP-ENC:base64", len(m.VoucherList))
	for _, v := range m.VoucherList {
		e.str("base64", base64.StdEncoding.EncodeToString(v))
	}
	e.end("VoucherList")
}

func (m *SetVouchers) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name != "VoucherList" {
			return d.skip()
		}
		return d.children(func(name string) error {
			var s string
			if err := d.str(&s); err != nil {
				return err
			}
			// Vouchers are long; senders may wrap the base64 in lines.
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
			if err != nil {
				d.invalid(name, "base64", s)
			}
			m.VoucherList = append(m.VoucherList, b)
			return nil
		})
	})
}

func (m *GetOptions) appendXML(e *encoder) { e.str("OptionName", m.OptionName) }

func (m *GetOptions) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "OptionName" {
			return d.str(&m.OptionName)
		}
		return d.skip()
	})
}

func (m *GetOptionsResponse) appendXML(e *encoder) {
	appendArray(e, "OptionList", "OptionStruct", m.OptionList)
}

func (m *GetOptionsResponse) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		if name == "OptionList" {
			return decodeArray(d, &m.OptionList)
		}
		return d.skip()
	})
}

func (s *OptionStruct) appendFields(e *encoder) {
	e.str("OptionName", s.OptionName)
	e.uint("VoucherSN", uint64(s.VoucherSN))
	e.uint("State", uint64(s.State))
	e.int("Mode", int64(s.Mode))
	e.time("StartDate", s.StartDate)
	if !s.ExpirationDate.IsZero() {
		e.time("ExpirationDate", s.ExpirationDate)
	}
	e.int("IsTransferable", int64(s.IsTransferable))
}

func (s *OptionStruct) decodeXML(d *decoder) error {
	return d.children(func(name string) error {
		switch name {
		case "OptionName":
			return d.str(&s.OptionName)
		case "VoucherSN":
			return d.uint32(&s.VoucherSN)
		case "State":
			return d.uint32(&s.State)
		case "Mode":
			return d.int32(&s.Mode)
		case "StartDate":
			return d.dateTime(&s.StartDate)
		case "ExpirationDate":
			return d.dateTime(&s.ExpirationDate)
		case "IsTransferable":
			return d.int32(&s.IsTransferable)
		}
		return d.skip()
	})
}
