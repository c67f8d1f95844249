package fcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"cpesuite/internal/fcc/fccxml"
	"cpesuite/internal/fcc/fleet"
)

// exportPage is how many serials of a frozen fleet one <fleet> element and
// one read carry.
const exportPage = 1000

// Export prepares the configuration document of a campaign. Every refusal
// (404, 400 for a legacy anchor) happens here, before the first byte; the
// returned write function streams the document.
func (s *Service) Export(ctx context.Context, id Identity, campaign int64) (fileName string, write func(io.Writer) error, err error) {
	st, err := s.visibleCampaign(ctx, id, campaign)
	if err != nil {
		return "", nil, err
	}
	if st.LegacyUGID != nil {
		return "", nil, invalid("campaign %d is the anchor of legacy measurements (legacy id %d) and cannot be exported", campaign, *st.LegacyUGID)
	}
	doc := fccxml.Campaign{FormatVersion: fccxml.FormatVersion, Name: st.Name, Type: st.Type, Domain: st.DomainID, ReactivationDays: reactivationDays(st.Reactivation)}
	write = func(out io.Writer) error {
		w := fccxml.NewWriter(out)
		if err := w.Begin(doc); err != nil {
			return err
		}
		for _, cfg := range st.Configs {
			xc := fccxml.Config{Manufacturer: cfg.Manufacturer, Model: cfg.Model, SourceType: cfg.SourceType, ConditionID: cfg.ConditionID}
			if len(cfg.Settings) > 0 {
				xc.SettingsType, xc.Settings = cfg.Settings[0].Type, settingsToXML(cfg.Settings[0])
			}
			if err := w.BeginConfig(xc); err != nil {
				return err
			}
			if err := s.store.fleetSerialPages(ctx, *cfg.ID, exportPage, w.Serials); err != nil {
				return err
			}
			if err := w.EndConfig(); err != nil {
				return err
			}
		}
		return w.End()
	}
	return fccxml.FileName(st.Name, campaign, s.now()), write, nil
}

// reactivationDays is the repetition period in days, or nil without one.
func reactivationDays(r *Reactivation) *int {
	if r == nil || r.RepeatEvery == nil {
		return nil
	}
	d := *r.RepeatEvery
	if r.Type == ReactivationWeekly {
		d *= 7
	}
	return &d
}

// settingsToXML lists the set fields of a setting's half in field order.
func settingsToXML(st Setting) []fccxml.Setting {
	var out []fccxml.Setting
	v := reflect.ValueOf(st)
	for _, f := range settingFields {
		if f.kind != st.Type {
			continue
		}
		fv := v.Field(f.index)
		if fv.IsNil() {
			continue
		}
		out = append(out, fccxml.Setting{Name: f.name, Value: fmt.Sprint(fv.Elem().Interface())})
	}
	return out
}

// settingFromXML reads a settings block back into an element.
func settingFromXML(typ string, list []fccxml.Setting) (Setting, error) {
	st := Setting{Type: typ}
	dst := reflect.ValueOf(&st).Elem()
	byName := map[string]settingField{}
	for _, f := range settingFields {
		byName[f.name] = f
	}
	for _, x := range list {
		f, ok := byName[x.Name]
		if !ok || f.kind != typ {
			return st, invalid("the document's %s settings block holds an unknown field %q", typ, x.Name)
		}
		field := dst.Field(f.index)
		switch field.Type().Elem().Kind() {
		case reflect.String:
			v := x.Value
			field.Set(reflect.ValueOf(&v))
		default:
			n, err := strconv.ParseInt(x.Value, 10, 64)
			if err != nil {
				return st, invalid("the document's setting %s must be an integer; got %q", x.Name, x.Value)
			}
			field.Set(reflect.ValueOf(&n))
		}
	}
	return st, nil
}

// Import reads a configuration document into a campaign form. It creates
// nothing: the client reviews the form and saves it with PUT
// /FCC/item/details. A frozen fleet in the document becomes a SERIAL_LIST
// selection, since cpe ids do not carry over between systems.
func (s *Service) Import(doc []byte) (Campaign, error) {
	x, err := fccxml.ReadCampaign(bytes.NewReader(doc))
	if err != nil {
		if errors.Is(err, fccxml.ErrInvalid) {
			return Campaign{}, invalid("%v", err)
		}
		return Campaign{}, err
	}
	c := Campaign{Name: x.Name, Type: x.Type, DomainID: x.Domain, Configs: []TestConfig{}}
	if x.ReactivationDays != nil {
		days := *x.ReactivationDays
		c.Reactivation = &Reactivation{Type: ReactivationDaily, RepeatEvery: &days}
	}
	for i, xc := range x.Configs {
		cfg := TestConfig{Manufacturer: xc.Manufacturer, Model: xc.Model, SourceType: xc.SourceType, ConditionID: xc.ConditionID,
			SelectedDevices: []int64{}, Settings: []Setting{}}
		if len(xc.Serials) > 0 {
			cfg.SourceType, cfg.ConditionID, cfg.Serials = string(fleet.SourceSerials), nil, xc.Serials
		}
		if xc.SettingsType != "" {
			st, err := settingFromXML(xc.SettingsType, xc.Settings)
			if err != nil {
				return Campaign{}, invalid("configs[%d]: %s", i, err.Error())
			}
			cfg.Settings = append(cfg.Settings, onlyHalf(st))
		}
		c.Configs = append(c.Configs, cfg)
	}
	return c, nil
}

// fleetSerialPages hands a config's frozen fleet to fn in pages, reading
// one page per statement (keyset on cpe id) so memory stays flat.
func (s *Store) fleetSerialPages(ctx context.Context, config int64, size int, fn func([]string) error) error {
	after := int64(-1 << 62)
	for {
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT cpe_id, serial FROM fcc_fleet WHERE config_id = ? AND cpe_id > ? ORDER BY cpe_id LIMIT ?`), config, after, size)
		if err != nil {
			return fmt.Errorf("reading the fleet of config %d: %w", config, err)
		}
		page := make([]string, 0, size)
		for rows.Next() {
			var serial string
			if err := rows.Scan(&after, &serial); err != nil {
				rows.Close()
				return err
			}
			page = append(page, serial)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < size {
			return nil
		}
	}
}
