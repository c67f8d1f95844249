package tr069emu

import (
	"cpesuite/internal/platform/fsx"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"cpesuite/internal/tr069emu/cpe"
)

// InitDeviceDto is a single device's configuration, as started and stored.
type InitDeviceDto struct {
	Serial                      string          `json:"serial"`
	ACSURL                      string          `json:"acsUrl,omitempty"`
	ParameterFile               string          `json:"parameterFile,omitempty"`
	EnableHTTPConnectionRequest bool            `json:"enableHttpConnectionRequest"`
	UpdatableParameters         []cpe.Updatable `json:"updatableParameters"`
	Running                     bool            `json:"running"`
}

// normalize fills the defaults and checks every field.
func (d *InitDeviceDto) normalize(defaultACS, defaultTree string) error {
	d.Serial = strings.TrimSpace(d.Serial)
	if err := checkSerial(d.Serial); err != nil {
		return err
	}
	if d.ACSURL == "" {
		d.ACSURL = defaultACS
	}
	if err := checkACSURL(d.ACSURL); err != nil {
		return err
	}
	if d.ParameterFile == "" {
		d.ParameterFile = defaultTree
	}
	if err := checkFileName(d.ParameterFile); err != nil {
		return err
	}
	if d.UpdatableParameters == nil {
		d.UpdatableParameters = []cpe.Updatable{}
	}
	for i := range d.UpdatableParameters {
		if err := d.UpdatableParameters[i].Normalize(); err != nil {
			return errf("updatableParameters[%d]: %v", i, err)
		}
	}
	return nil
}

// storedDevices keeps saved configurations in one JSON file, rewritten
// atomically on every change.
type storedDevices struct {
	path string
	mu   sync.Mutex
	m    map[string]InitDeviceDto
}

func openStored(path string) (*storedDevices, error) {
	s := &storedDevices{path: path, m: map[string]InitDeviceDto{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var list []InitDeviceDto
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, d := range list {
		s.m[d.Serial] = d
	}
	return s, nil
}

func (s *storedDevices) saveLocked() error {
	list := make([]InitDeviceDto, 0, len(s.m))
	for _, d := range s.m {
		list = append(list, d)
	}
	slices.SortFunc(list, func(a, b InitDeviceDto) int { return strings.Compare(a.Serial, b.Serial) })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomic(s.path, data)
}

func (s *storedDevices) Get(serial string) (InitDeviceDto, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.m[serial]
	return d, ok
}

func (s *storedDevices) List() []InitDeviceDto {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]InitDeviceDto, 0, len(s.m))
	for _, d := range s.m {
		list = append(list, d)
	}
	slices.SortFunc(list, func(a, b InitDeviceDto) int { return strings.Compare(a.Serial, b.Serial) })
	return list
}

func (s *storedDevices) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Put stores d; on a write failure the previous state is kept.
func (s *storedDevices) Put(d InitDeviceDto) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.m[d.Serial]
	s.m[d.Serial] = d
	if err := s.saveLocked(); err != nil {
		if had {
			s.m[d.Serial] = old
		} else {
			delete(s.m, d.Serial)
		}
		return fmt.Errorf("saving stored devices: %w", err)
	}
	return nil
}

// Delete removes serial, reporting whether it was stored.
func (s *storedDevices) Delete(serial string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.m[serial]
	if !had {
		return false, nil
	}
	delete(s.m, serial)
	if err := s.saveLocked(); err != nil {
		s.m[serial] = old
		return true, fmt.Errorf("saving stored devices: %w", err)
	}
	return true, nil
}

// setRunning records the running flag without failing the caller: it is
// informative.
func (s *storedDevices) setRunning(serial string, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.m[serial]; ok && d.Running != running {
		d.Running = running
		s.m[serial] = d
		_ = s.saveLocked()
	}
}
