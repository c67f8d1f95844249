package tr069emu

import (
	"context"
	"cpesuite/internal/platform/fsx"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"cpesuite/internal/tr069emu/cpe"
	"cpesuite/internal/tr069emu/tree"
)

// batch is one run of the load-test controller.
type batch struct {
	cancel    context.CancelFunc
	done      chan struct{}
	crEnabled bool

	mu      sync.Mutex
	devices map[string]*cpe.Device
	order   []*cpe.Device
}

func (b *batch) get(serial string) *cpe.Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.devices[serial]
}

func (b *batch) add(d *cpe.Device) {
	b.mu.Lock()
	b.devices[d.Serial()] = d
	b.order = append(b.order, d)
	b.mu.Unlock()
}

func (b *batch) all() []*cpe.Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*cpe.Device(nil), b.order...)
}

// Running reports whether the load test is running (status text).
func (e *Emulator) Running() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.batch != nil
}

// DeviceCounts is /api/deviceCounts.
type DeviceCounts struct {
	Total  int `json:"total"`
	Active int `json:"active"`
}

// DeviceCounts counts the batch's devices and those in a session now;
// single-mode devices are not counted.
func (e *Emulator) DeviceCounts() DeviceCounts {
	e.mu.Lock()
	b := e.batch
	e.mu.Unlock()
	var c DeviceCounts
	if b == nil {
		return c
	}
	for _, d := range b.all() {
		c.Total++
		if d.InSession() {
			c.Active++
		}
	}
	return c
}

// BatchSerial is the serial number of the n-th (1-based) load-test device.
func (e *Emulator) BatchSerial(n int) string { return fmt.Sprintf("%s%07d", e.cfg.SerialPrefix, n) }

// StartBatch starts the load test in the background: groups x concurrent
// devices registered in waves of registrationGroup, delay ms apart, from
// startDateTime on.
func (e *Emulator) StartBatch() error {
	p := e.Properties()
	tmpl, err := e.files.Template(p.ParamsXML)
	if err != nil {
		return err
	}
	var start time.Time
	if p.StartDateTime != "" {
		if start, err = time.ParseInLocation(StartDateTimeLayout, p.StartDateTime, time.Local); err != nil {
			return errf("startDateTime %q must be DD-MM-YYYY HH24:MI:SS", p.StartDateTime)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.batch != nil {
		return conflict("the load test is already running")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.ctx))
	b := &batch{cancel: cancel, done: make(chan struct{}), crEnabled: p.ConnectionRequestEnabled, devices: map[string]*cpe.Device{}}
	e.batch = b
	e.propsMu.Lock()
	updatable := e.globalUpdatable
	e.propsMu.Unlock()
	go func() {
		defer close(b.done)
		e.register(ctx, b, p, tmpl, start, updatable)
	}()
	return nil
}

func (e *Emulator) register(ctx context.Context, b *batch, p Properties, tmpl *tree.Template, start time.Time, updatable []cpe.Updatable) {
	total := p.Groups * p.Concurrent
	if wait := time.Until(start); wait > 0 {
		e.log.Info("load test scheduled", "start", start.Format(time.RFC3339), "devices", total)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	wave := p.RegistrationGroup
	if wave <= 0 {
		wave = p.Concurrent
	}
	periodic := time.Duration(p.periodicSeconds) * time.Second
	e.log.Info("load test starting", "devices", total, "wave", wave, "delay_ms", p.Delay, "tree", p.ParamsXML, "acs", p.ACSURL())
	began := time.Now()
	nextReport := total / 10
	for n := 1; n <= total; n++ {
		if ctx.Err() != nil {
			return
		}
		serial := e.BatchSerial(n)
		t := tree.New(tmpl)
		if !p.ConnectionRequestEnabled {
			_, _ = t.SetValues([]tree.Set{{Name: tmpl.Root() + "ManagementServer.ConnectionRequestURL", Value: ""}}, tree.SetOptions{})
		}
		o := cpe.Options{Serial: serial, ACSURL: p.ACSURL(), Tree: t, Periodic: periodic,
			PeriodicDisabled: !p.PeriodicInformEnabled || periodic == 0, Bootstrap: true,
			WithoutInitialInform: p.WithoutInitialInform, Updatable: updatable, UpdateEvery: e.cfg.AutoUpdate}
		if p.ConnectionRequestEnabled {
			o.ConnReqURL = e.crURL(serial)
		}
		if periodic > 0 && p.Spread > 0 {
			o.FirstPeriodic = periodic + time.Duration(rand.Int64N(int64(time.Duration(p.Spread)*time.Second)))
		}
		if p.FileLogEnabled {
			o.Log = e.logs.Logger(serial, e.log)
		} else {
			o.Log = e.log.With("serial", serial)
		}
		d := cpe.New(e.env, o)
		b.add(d)
		d.Start(ctx)
		if n == nextReport && total >= 100 {
			e.log.Info("load test registering", "started", n, "of", total, "elapsed", time.Since(began).Round(time.Millisecond).String())
			nextReport += total / 10
		}
		if n%wave == 0 && n < total && p.Delay > 0 {
			t := time.NewTimer(time.Duration(p.Delay) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
	e.log.Info("load test registered", "devices", total, "elapsed", time.Since(began).Round(time.Millisecond).String())
}

// StopBatch stops the load test; clearCaches also drops the parsed trees.
// Stopping a stopped emulator is not an error.
func (e *Emulator) StopBatch(clearCaches bool) {
	e.mu.Lock()
	b := e.batch
	e.batch = nil
	e.mu.Unlock()
	if b != nil {
		b.cancel()
		<-b.done
		devs := b.all()
		stopAll(devs)
		e.log.Info("load test stopped", "devices", len(devs))
	}
	if clearCaches {
		e.files.ClearCache()
		e.log.Info("caches cleared")
	}
}

// SetPeriodic sets the load test's periodic interval (seconds; 0 disables)
// and applies it to running batch devices.
func (e *Emulator) SetPeriodic(seconds int) error {
	if seconds < 0 {
		return errf("periodic must not be negative, got %d", seconds)
	}
	enabled := true
	if err := e.updateProperties(func(p *Properties) error {
		p.periodicSeconds, enabled = seconds, p.PeriodicInformEnabled
		return nil
	}); err != nil {
		return err
	}
	e.mu.Lock()
	b := e.batch
	e.mu.Unlock()
	if b != nil && enabled {
		for _, d := range b.all() {
			d.SetPeriodic(time.Duration(seconds) * time.Second)
		}
	}
	return nil
}

// Periodic returns the load test's periodic interval in seconds.
func (e *Emulator) Periodic() int {
	e.propsMu.Lock()
	defer e.propsMu.Unlock()
	return e.props.periodicSeconds
}

// SetGlobalUpdatable replaces the load test's auto-update list, applying
// it to running batch devices.
func (e *Emulator) SetGlobalUpdatable(list []cpe.Updatable) error {
	for i := range list {
		if err := list[i].Normalize(); err != nil {
			return errf("parameters[%d]: %v", i, err)
		}
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	e.propsMu.Lock()
	if err := fsx.WriteFileAtomic(e.updatablePath(), data); err != nil {
		e.propsMu.Unlock()
		return fmt.Errorf("saving the auto-update list: %w", err)
	}
	e.globalUpdatable = list
	e.propsMu.Unlock()
	// e.mu is taken after propsMu is released: StartBatch nests them the
	// other way round.
	e.mu.Lock()
	b := e.batch
	e.mu.Unlock()
	if b != nil {
		for _, d := range b.all() {
			d.SetUpdatable(list)
		}
	}
	return nil
}

func (e *Emulator) updatablePath() string {
	return filepath.Join(e.cfg.DataDir, "updatable-parameters.json")
}

// loadGlobalUpdatable reads the saved auto-update list, if any.
func (e *Emulator) loadGlobalUpdatable() error {
	data, err := os.ReadFile(e.updatablePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var list []cpe.Updatable
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(e.updatablePath()), err)
	}
	for i := range list {
		if err := list[i].Normalize(); err != nil {
			return fmt.Errorf("%s: entry %d: %w", filepath.Base(e.updatablePath()), i, err)
		}
	}
	e.globalUpdatable = list
	return nil
}

// GlobalUpdatable returns the load test's auto-update list.
func (e *Emulator) GlobalUpdatable() []cpe.Updatable {
	e.propsMu.Lock()
	defer e.propsMu.Unlock()
	if e.globalUpdatable == nil {
		return []cpe.Updatable{}
	}
	return append([]cpe.Updatable(nil), e.globalUpdatable...)
}
