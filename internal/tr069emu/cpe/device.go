// Package cpe is the CWMP client of one emulated CPE: it opens sessions
// with the ACS (Inform, its own requests, then the ACS's RPCs), keeps the
// events it owes the ACS until they are delivered, answers every RPC against
// its parameter tree, and performs what the RPCs ask for after the session
// (reboot, factory reset, transfers, TR-143 diagnostics).
//
// A device costs no goroutine while idle: timers and triggers start one
// session runner when there is work, and it exits when the work is done.
// That, with the shared template tree, is what lets one process emulate tens
// of thousands of devices.
package cpe

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tree"
)

// Settings are the emulator-wide knobs every device reads at the moment it
// needs them, so a properties change applies to running devices at once.
type Settings struct {
	// TaskDelays is the wait before the CPE processes each ACS RPC, by
	// method name; missing or zero means none. Kicked has no delay.
	TaskDelays map[string]time.Duration
	// TransferEmulation replaces the network transfer of Download, Upload
	// and ChangeDUState by TransferDelays (Download, Upload, ChangeDUState).
	TransferEmulation bool
	TransferDelays    [3]time.Duration
	// RandomRetry draws the retry wait from the whole TR-069 back-off
	// window instead of using its lower bound.
	RandomRetry bool
	// LoadingMode makes devices inform-only: RPCs are refused with 9001.
	LoadingMode bool
	// SpeedDelay is what makeSpeedDelay adds to speed diagnostics.
	SpeedDelay time.Duration
}

// Env is what all devices of an emulator share: the transport settings,
// the credentials towards the ACS and the live settings.
type Env struct {
	// Transport is the template of every session's own connection: dialer,
	// proxy, TLS trust and time-outs. Sessions never share a connection (an
	// ACS such as GenieACS binds session state to the socket), so its pool
	// is never used; nil means http.DefaultTransport's settings.
	Transport *http.Transport
	// Credentials returns the username and password towards the ACS; it is
	// called per session so a password file written later is picked up.
	Credentials func() (username, password string)
	Log         *slog.Logger
	// DiagTimeout bounds one TR-143 diagnostic; 0 means 60 s.
	DiagTimeout time.Duration
	// MinRetry is the TR-069 minimum retry wait m; 0 means the standard's
	// 5 s. Tests shorten it.
	MinRetry time.Duration

	settings atomic.Pointer[Settings]

	// Counters for statistics and metrics.
	InSession atomic.Int64
	Sessions  atomic.Int64
	Failures  atomic.Int64
	// SessionNanos is the summed duration of successful sessions.
	SessionNanos atomic.Int64
}

// SetSettings replaces the live settings.
func (e *Env) SetSettings(s Settings) { e.settings.Store(&s) }

// Settings returns the live settings.
func (e *Env) Settings() *Settings {
	if s := e.settings.Load(); s != nil {
		return s
	}
	return &Settings{}
}

// Options create a device.
type Options struct {
	Serial string
	ACSURL string
	Tree   *tree.Tree
	// ConnReqURL is reported as ManagementServer.ConnectionRequestURL; empty
	// leaves the tree's value.
	ConnReqURL string
	// Periodic overrides ManagementServer.PeriodicInformInterval when > 0;
	// PeriodicDisabled turns periodic informs off.
	Periodic         time.Duration
	PeriodicDisabled bool
	// FirstPeriodic is when the first periodic Inform is due (spreads a
	// batch); zero means one interval after start.
	FirstPeriodic time.Duration
	// Bootstrap marks a device's first contact with its ACS (new, or after
	// a factory reset): the start-up Inform carries 0 BOOTSTRAP together
	// with 1 BOOT, as real CPEs send on first power-on; otherwise 1 BOOT.
	Bootstrap bool
	// WithoutInitialInform skips the start-up Inform: the device waits for
	// its first periodic Inform or a connection request.
	WithoutInitialInform bool
	// Log receives this device's log lines.
	Log *slog.Logger
	// FactoryTree returns the tree a factory reset restores.
	FactoryTree func() *tree.Tree
	// Updatable parameters change on their own schedule.
	Updatable []Updatable
	// UpdateEvery is the period of auto-updates; 0 means 30 s.
	UpdateEvery time.Duration
}

// Device is one emulated CPE.
type Device struct {
	env    *Env
	serial string
	log    *slog.Logger
	opts   Options

	mu          sync.Mutex
	acsURL      string
	tree        *tree.Tree
	events      []cwmp.EventStruct
	changed     []string       // parameters with notification changes not yet informed
	requests    []cwmp.Message // TransferComplete, DUStateChangeComplete owed to the ACS
	after       []func(context.Context)
	retries     int
	running     bool // a session runner goroutine exists
	again       bool // work arrived while running
	inSession   bool
	stopped     bool
	periodic    time.Duration
	periodicT   *time.Timer
	periodicGen uint64 // tells a periodic timer that lost a race with a reschedule it is stale
	retryT      *time.Timer
	updateT     *time.Timer
	speedDelay  bool
	wan         wanCounters
	updatable   []Updatable
	pendingDU   *cwmp.ChangeDUState
	lastCommand string // CommandKey of the last transfer, for invoke TransferComplete

	boot atomic.Int64 // unix nanoseconds of the last boot; read by the uptime resolver without d.mu

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New creates a device; Start makes it talk.
func New(env *Env, o Options) *Device {
	if o.Log == nil {
		o.Log = env.Log
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	d := &Device{env: env, serial: o.Serial, log: o.Log, opts: o, acsURL: o.ACSURL, tree: o.Tree,
		updatable: slices.Clone(o.Updatable)}
	d.prepareTree(o.Tree)
	return d
}

// prepareTree writes the device's identity and connection request URL into
// a (new) tree and hooks the dynamic parameters.
func (d *Device) prepareTree(t *tree.Tree) {
	root := t.Template().Root()
	sets := []tree.Set{{Name: root + "DeviceInfo.SerialNumber", Value: d.serial}}
	if d.opts.ConnReqURL != "" {
		sets = append(sets, tree.Set{Name: root + "ManagementServer.ConnectionRequestURL", Value: d.opts.ConnReqURL})
	}
	if d.acsURL != "" {
		sets = append(sets, tree.Set{Name: root + "ManagementServer.URL", Value: d.acsURL})
	}
	setPresent(t, sets...)
	if d.opts.Periodic > 0 || d.opts.PeriodicDisabled {
		setPresent(t, periodicSets(root, !d.opts.PeriodicDisabled, d.opts.Periodic)...)
	}
	uptime, localTime := root+"DeviceInfo.UpTime", root+"Time.CurrentLocalTime"
	wan := wanParams(t.Template())
	t.SetResolver(func(name string) (string, bool) {
		switch name {
		case uptime:
			b := d.boot.Load()
			if b == 0 {
				return "0", true
			}
			return strconv.FormatInt(int64(time.Since(time.Unix(0, b))/time.Second), 10), true
		case localTime:
			return time.Now().UTC().Format(time.RFC3339), true
		}
		return d.resolveWAN(wan, name)
	})
}

// Serial returns the serial number.
func (d *Device) Serial() string { return d.serial }

// Tree returns the device's current parameter tree (a factory reset
// replaces it).
func (d *Device) Tree() *tree.Tree {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tree
}

// ACSURL returns the ACS URL the device talks to.
func (d *Device) ACSURL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.acsURL
}

// InSession reports whether a CWMP session is open now.
func (d *Device) InSession() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inSession
}

// Start boots the device: the start-up Inform (unless disabled), then
// periodic informs and auto-updates.
func (d *Device) Start(ctx context.Context) {
	d.mu.Lock()
	d.ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	now := time.Now()
	d.boot.Store(now.UnixNano())
	d.wan.boot(now)
	d.periodic = d.periodicFromTree()
	first := d.opts.FirstPeriodic
	if first <= 0 {
		first = d.periodic
	}
	d.schedulePeriodicLocked(first)
	d.scheduleUpdateLocked()
	d.mu.Unlock()
	if d.opts.WithoutInitialInform {
		d.log.Info("started without initial Inform")
		return
	}
	evs := []cwmp.EventStruct{{EventCode: cwmp.EventBoot}}
	if d.opts.Bootstrap {
		// Every start is a power-on, so 1 BOOT is owed too; ACSs that
		// provision on BOOTSTRAP and re-apply on BOOT see both.
		evs = []cwmp.EventStruct{{EventCode: cwmp.EventBootstrap}, {EventCode: cwmp.EventBoot}}
	}
	d.log.Info("started", "events", eventCodes(evs))
	d.Trigger(evs...)
}

// Stop ends the device: timers stop, an open session is abandoned and
// Stop waits for the runner to exit.
func (d *Device) Stop() {
	d.mu.Lock()
	if d.stopped || d.cancel == nil {
		d.stopped = true
		d.mu.Unlock()
		return
	}
	d.stopped = true
	for _, t := range []*time.Timer{d.periodicT, d.retryT, d.updateT} {
		if t != nil {
			t.Stop()
		}
	}
	d.cancel()
	d.mu.Unlock()
	d.wg.Wait()
	d.log.Info("stopped")
}

// Trigger queues events and starts a session unless one is running, in
// which case the events go out in the session that follows it. Single
// events (codes 0 to 14) are kept once; "M " events once per CommandKey.
func (d *Device) Trigger(evs ...cwmp.EventStruct) {
	d.mu.Lock()
	for _, e := range evs {
		d.addEventLocked(e)
	}
	d.kickLocked()
	d.mu.Unlock()
}

func (d *Device) addEventLocked(e cwmp.EventStruct) {
	for _, have := range d.events {
		if have.EventCode == e.EventCode && (have.CommandKey == e.CommandKey || !strings.HasPrefix(e.EventCode, "M ")) {
			return
		}
	}
	d.events = append(d.events, e)
}

// kickLocked makes sure a runner will deliver the queued work.
func (d *Device) kickLocked() {
	if d.stopped || d.ctx == nil {
		return
	}
	if d.running {
		d.again = true
		return
	}
	if d.retryT != nil {
		// A retry is already scheduled: the back-off wins, the events wait.
		return
	}
	d.running = true
	d.wg.Add(1)
	go d.run()
}

// ConnectionRequest is an ACS connection request: it starts a session with
// 6 CONNECTION REQUEST unless one is open, and reports whether it did.
func (d *Device) ConnectionRequest() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inSession || d.stopped {
		return false
	}
	d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventConnectionRequest})
	if d.retryT != nil {
		// An ACS asking now overrides our back-off.
		d.retryT.Stop()
		d.retryT = nil
	}
	d.kickLocked()
	return true
}

// run delivers queued work in sessions until there is none left.
func (d *Device) run() {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		d.again = false
		has := len(d.events) > 0 || len(d.requests) > 0
		d.mu.Unlock()
		if has {
			d.sessionWithRetry()
		}
		d.runAfter()
		d.mu.Lock()
		if !d.again || d.stopped || d.retryT != nil {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
	}
}

// runAfter performs what the last session asked for.
func (d *Device) runAfter() {
	d.mu.Lock()
	fns := d.after
	d.after = nil
	ctx := d.ctx
	d.mu.Unlock()
	for _, fn := range fns {
		if ctx.Err() != nil {
			return
		}
		fn(ctx)
	}
}

// sessionWithRetry runs one session; on failure it schedules the retry
// with the TR-069 back-off and keeps the events.
func (d *Device) sessionWithRetry() {
	began := time.Now()
	err := d.session(d.ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		d.env.SessionNanos.Add(int64(time.Since(began)))
		d.retries = 0
		return
	}
	if d.stopped || d.ctx.Err() != nil {
		return
	}
	d.env.Failures.Add(1)
	d.retries++
	m := d.env.MinRetry
	if m <= 0 {
		m = 5 * time.Second
	}
	wait := retryWait(d.retries, m, d.env.Settings().RandomRetry, rand.Int64N)
	var ra *retryAfterError
	if errors.As(err, &ra) && ra.wait > wait {
		wait = ra.wait
	}
	d.log.Warn("session failed; retrying", "err", err, "retry", d.retries, "wait", wait.String())
	d.retryT = time.AfterFunc(wait, func() {
		d.mu.Lock()
		d.retryT = nil
		d.kickLocked()
		d.mu.Unlock()
	})
}

// periodicFromTree reads the periodic interval: 0 when disabled.
func (d *Device) periodicFromTree() time.Duration {
	root := d.tree.Template().Root()
	if p, ok := d.tree.Get(root + "ManagementServer.PeriodicInformEnable"); ok {
		if on, err := cwmp.ParseBool(p.Value); err == nil && !on {
			return 0
		}
	}
	if p, ok := d.tree.Get(root + "ManagementServer.PeriodicInformInterval"); ok {
		if n, err := strconv.Atoi(p.Value); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

func (d *Device) schedulePeriodicLocked(first time.Duration) {
	if d.periodicT != nil {
		d.periodicT.Stop()
		d.periodicT = nil
	}
	// A timer that has already fired cannot be stopped: its callback may be
	// waiting for d.mu. The generation tells it not to inform nor re-arm.
	d.periodicGen++
	if d.periodic <= 0 || d.stopped {
		return
	}
	if first <= 0 {
		first = d.periodic
	}
	gen := d.periodicGen
	d.periodicT = time.AfterFunc(first, func() { d.periodicFire(gen) })
}

func (d *Device) periodicFire(gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || gen != d.periodicGen {
		return
	}
	d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventPeriodic})
	d.kickLocked()
	if d.periodic > 0 {
		d.periodicT = time.AfterFunc(d.periodic, func() { d.periodicFire(gen) })
	}
}

// SetPeriodic changes the periodic inform interval (0 disables) and writes
// it to the tree, as an ACS setting it would.
func (d *Device) SetPeriodic(interval time.Duration) {
	d.mu.Lock()
	t := d.tree
	d.mu.Unlock()
	setPresent(t, periodicSets(t.Template().Root(), interval > 0, interval)...)
	d.mu.Lock()
	d.periodic = interval
	d.schedulePeriodicLocked(interval)
	d.mu.Unlock()
}

// periodicSets are the ManagementServer values of a periodic setting; the
// interval is written only when at least a second.
func periodicSets(root string, enabled bool, interval time.Duration) []tree.Set {
	sets := []tree.Set{{Name: root + "ManagementServer.PeriodicInformEnable", Value: strconv.FormatBool(enabled)}}
	if secs := int(interval / time.Second); secs > 0 {
		sets = append(sets, tree.Set{Name: root + "ManagementServer.PeriodicInformInterval", Value: strconv.Itoa(secs)})
	}
	return sets
}

// setPresent writes each value whose parameter the tree has, one by one:
// device-managed values must not fail on a tree file that lacks one.
func setPresent(t *tree.Tree, sets ...tree.Set) {
	for _, s := range sets {
		if _, ok := t.Get(s.Name); ok {
			_, _ = t.SetValues([]tree.Set{s}, tree.SetOptions{})
		}
	}
}

// Periodic returns the periodic interval, 0 when disabled.
func (d *Device) Periodic() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.periodic
}

// SetSpeedDelay turns the makeSpeedDelay delay on or off for this device.
func (d *Device) SetSpeedDelay(on bool) {
	d.mu.Lock()
	d.speedDelay = on
	d.mu.Unlock()
}

// SpeedDelay reports whether the speed delay is on.
func (d *Device) SpeedDelay() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.speedDelay
}

// Notify records parameter changes made outside the ACS (the API, auto
// updates): passive ones ride on the next Inform, an active one starts a
// session with 4 VALUE CHANGE. It reports whether such a session was
// triggered.
func (d *Device) Notify(changes []tree.Change) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	active := false
	for _, c := range changes {
		if c.Notification == 0 {
			continue
		}
		if !slices.Contains(d.changed, c.Name) {
			d.changed = append(d.changed, c.Name)
		}
		if c.Notification == 2 {
			active = true
		}
	}
	if active {
		d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventValueChange})
		d.kickLocked()
	}
	return active
}

// Reboot emulates a reboot asked by the operator: uptime restarts and the
// device informs 1 BOOT (with "M Reboot" when the ACS asked, commandKey
// non-empty or fromACS).
func (d *Device) Reboot(commandKey string, fromACS bool) {
	d.mu.Lock()
	now := time.Now()
	d.boot.Store(now.UnixNano())
	d.wan.boot(now)
	d.changed = nil
	d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventBoot})
	if fromACS {
		d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventMReboot, CommandKey: commandKey})
	}
	d.periodic = d.periodicFromTree()
	d.schedulePeriodicLocked(d.periodic)
	d.kickLocked()
	d.mu.Unlock()
	d.log.Info("rebooted", "commandKey", commandKey)
}

// FactoryReset restores the factory tree and informs 0 BOOTSTRAP and
// 1 BOOT, as TR-069 3.7.1.5 asks after a reset.
func (d *Device) FactoryReset() {
	var nt *tree.Tree
	if d.opts.FactoryTree != nil {
		nt = d.opts.FactoryTree()
	}
	d.mu.Lock()
	if nt == nil {
		nt = tree.New(d.tree.Template())
	}
	d.prepareTreeLockedSwap(nt)
	now := time.Now()
	d.boot.Store(now.UnixNano())
	d.wan.boot(now)
	d.changed = nil
	d.requests = nil
	d.events = nil
	d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventBootstrap})
	d.addEventLocked(cwmp.EventStruct{EventCode: cwmp.EventBoot})
	d.periodic = d.periodicFromTree()
	d.schedulePeriodicLocked(d.periodic)
	d.kickLocked()
	d.mu.Unlock()
	d.log.Info("factory reset")
}

// prepareTreeLockedSwap installs a new tree; prepareTree takes d.mu inside
// the resolver only, so it is safe to call here.
func (d *Device) prepareTreeLockedSwap(nt *tree.Tree) {
	d.tree = nt
	d.prepareTree(nt)
}
