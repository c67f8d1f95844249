package acs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"cpesuite/internal/fcc/fccwire"
	"cpesuite/internal/platform/apperr"
)

// errAborted ends a measurement without a result: the run was stopped,
// its window closed or the executor is shutting down.
var errAborted = errors.New("measurement aborted")

// campaignRun drives one run on this executor.
type campaignRun struct {
	e       *Executor
	id      int64
	head    fccwire.Activate
	groups  map[int64]*fccwire.Group
	devices []*campaignDevice
	// meas holds each device's measurements, as loaded and as they go;
	// the outer map is built before the workers start and each worker
	// owns its device's inner map.
	meas map[int64]map[measKey]*measurement

	stopOnce  sync.Once
	stopped   chan struct{} // closed at STOP
	mu        sync.Mutex
	stoppedAt time.Time
	inflight  map[int64]bool // transactions enqueued and not settled
}

// outboxBatch bounds the messages published per outbox pass.
const outboxBatch = 100

func (e *Executor) startRun(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runs[id] != nil || e.ctx == nil || e.ctx.Err() != nil {
		return
	}
	r := &campaignRun{e: e, id: id, stopped: make(chan struct{}), inflight: map[int64]bool{}}
	e.runs[id] = r
	ctx := e.ctx
	e.wg.Go(func() {
		defer func() {
			e.mu.Lock()
			delete(e.runs, id)
			e.mu.Unlock()
		}()
		if err := r.run(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("campaign run failed; it resumes on the next start", "activationId", id, "err", err)
		}
	})
}

func (e *Executor) stopRun(id int64) {
	e.mu.Lock()
	r := e.runs[id]
	e.mu.Unlock()
	if r != nil {
		r.stop(time.Now())
	}
}

// resume starts every run the tables say is unfinished.
func (e *Executor) resume(ctx context.Context) error {
	if err := e.publishOutbox(ctx); err != nil {
		e.log.Warn("publishing the campaign outbox", "err", err)
	}
	ids, err := e.a.store.unfinishedRuns(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		e.log.Info("resuming campaign run", "activationId", id)
		e.startRun(id)
	}
	return nil
}

func (r *campaignRun) stop(at time.Time) {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		r.stoppedAt = at
		r.mu.Unlock()
		close(r.stopped)
	})
}

func (r *campaignRun) isStopped() bool {
	select {
	case <-r.stopped:
		return true
	default:
		return false
	}
}

func (r *campaignRun) run(ctx context.Context) error {
	st := r.e.a.store
	row, err := st.campaignRun(ctx, r.id)
	if err != nil {
		return err
	}
	r.head = row.head
	if row.stoppedAt != nil && row.state == runStopping {
		r.stop(*row.stoppedAt)
	}
	r.groups = map[int64]*fccwire.Group{}
	for i := range r.head.Config.Groups {
		g := &r.head.Config.Groups[i]
		r.groups[g.ConfigID] = g
	}
	if r.devices, err = st.campaignDevices(ctx, r.id); err != nil {
		return err
	}
	loaded, err := st.campaignMeasurements(ctx, r.id)
	if err != nil {
		return err
	}
	r.meas = make(map[int64]map[measKey]*measurement, len(r.devices))
	for _, d := range r.devices {
		r.meas[d.CpeID] = map[measKey]*measurement{}
	}
	for k, m := range loaded {
		if dm := r.meas[k.CpeID]; dm != nil {
			dm[k] = m
		}
	}
	scale := r.e.a.cfg.TimeScale
	windowCtx, closeWindow := context.WithDeadline(ctx, r.head.Window.EndAt.Time)
	defer closeWindow()
	startCtx, noMoreStarts := context.WithCancel(windowCtx)
	defer noMoreStarts()
	drainCtx, endDrain := context.WithCancel(windowCtx)
	defer endDrain()
	go func() {
		select {
		case <-r.stopped:
		case <-windowCtx.Done():
			return
		}
		noMoreStarts()
		r.mu.Lock()
		at := r.stoppedAt
		r.mu.Unlock()
		grace := scale.Seconds(r.head.Config.Retry.StopDrainGraceSec)
		t := time.NewTimer(time.Until(at.Add(grace)))
		defer t.Stop()
		select {
		case <-t.C:
			endDrain()
		case <-windowCtx.Done():
		}
	}()

	// QUEUED, or SKIPPED for the protocols this ACS cannot drive, before
	// anything else: the service sees the whole fleet accounted for.
	var active []*campaignDevice
	var first []deviceChange
	for _, d := range r.devices {
		if d.State == "" {
			c := deviceChange{d: d, state: fccwire.DeviceQueued}
			if d.Protocol != fccwire.ProtocolTR069 && d.Protocol != fccwire.ProtocolTR181 {
				c.state, c.reason = fccwire.DeviceSkipped, fccwire.ReasonUnsupported
			}
			first = append(first, c)
		}
		if d.Protocol == fccwire.ProtocolTR069 || d.Protocol == fccwire.ProtocolTR181 {
			active = append(active, d)
		}
	}
	if err := st.setDeviceStates(ctx, r.id, first); err != nil {
		return err
	}
	r.e.wakeOutbox()

	var wg sync.WaitGroup
	for i, d := range active {
		if d.terminal() {
			continue
		}
		batch := i / r.e.batch
		wg.Go(func() {
			if err := r.device(ctx, startCtx, drainCtx, d, batch); err != nil && !errors.Is(err, errAborted) && ctx.Err() == nil {
				r.e.log.Warn("campaign device stopped on an error", "activationId", r.id, "cpeId", d.CpeID, "err", err)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil // shutting down: the tables keep the run for the next start
	}
	reason, failWith := fccwire.FinishCompleted, fccwire.ReasonError
	switch {
	case r.isStopped():
		reason, failWith = fccwire.FinishStopped, fccwire.ReasonStopped
	case windowCtx.Err() != nil:
		reason, failWith = fccwire.FinishWindowClosed, fccwire.ReasonWindowClosed
	}
	fin := context.WithoutCancel(ctx)
	r.cancelInflight(fin)
	if err := st.finishRun(fin, &r.head, r.devices, reason, failWith); err != nil {
		return err
	}
	r.e.wakeOutbox()
	r.e.log.Info("campaign run finished", "activationId", r.id, "reason", reason)
	return nil
}

// cancelInflight ends the tasks of measurements the run gave up on.
func (r *campaignRun) cancelInflight(ctx context.Context) {
	r.mu.Lock()
	ids := make([]int64, 0, len(r.inflight))
	for id := range r.inflight {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		txn, err := r.e.a.store.Transaction(ctx, id)
		if err != nil {
			continue
		}
		for _, t := range txn.Tasks {
			if t.Open() {
				if _, err := r.e.a.store.CancelTask(ctx, t.ID); err == nil {
					r.e.a.notify.notify(t.TransactionID)
				}
			}
		}
	}
}

func (r *campaignRun) directions() []fccwire.Direction {
	if r.head.Type == fccwire.TypeLatency {
		return []fccwire.Direction{fccwire.Ping}
	}
	return []fccwire.Direction{fccwire.Download, fccwire.Upload}
}

// device runs every iteration of one device in its slots.
func (r *campaignRun) device(ctx, startCtx, drainCtx context.Context, d *campaignDevice, batch int) error {
	st := r.e.a.store
	scale := r.e.a.cfg.TimeScale
	s := r.head.Schedule
	measured := 0 // results that measured something (not ERROR)
	for it := 1; it <= s.Iterations; it++ {
		pending := false
		for _, dir := range r.directions() {
			m := r.meas[d.CpeID][measKey{r.id, d.CpeID, dir, it}]
			if m == nil || m.State != measDone {
				pending = true
			} else if m.Status != fccwire.OutcomeError {
				measured++
			}
		}
		if !pending {
			continue
		}
		at := r.head.Window.StartAt.Add(scale.Minutes(int64(it-1)*int64(s.SingleTestDuration)) + scale.Minutes(int64(batch)*int64(s.BatchInterval)))
		// A measurement in flight at a restart is waited for, slot or not.
		resuming := false
		for _, dir := range r.directions() {
			if m := r.meas[d.CpeID][measKey{r.id, d.CpeID, dir, it}]; m != nil && m.State == measRunning && m.TransactionID != 0 {
				resuming = true
			}
		}
		if !resuming && !sleepUntil(startCtx, at) {
			return errAborted
		}
		if d.State == fccwire.DeviceQueued {
			if s.OnlyOnlineDevices {
				dev, err := st.Device(ctx, d.CpeID)
				if err != nil || !dev.Online {
					err := st.setDeviceState(ctx, r.id, d, fccwire.DeviceSkipped, fccwire.ReasonOffline, "")
					r.e.wakeOutbox()
					return err
				}
			}
			if err := st.setDeviceState(ctx, r.id, d, fccwire.DeviceRunning, "", ""); err != nil {
				return err
			}
			r.e.wakeOutbox()
		}
		for _, dir := range r.directions() {
			k := measKey{r.id, d.CpeID, dir, it}
			if m := r.meas[d.CpeID][k]; m != nil && m.State == measDone {
				continue
			}
			res, err := r.measure(ctx, startCtx, drainCtx, d, k)
			if err != nil {
				return err
			}
			if res.Status != fccwire.OutcomeError {
				measured++
			}
		}
	}
	if measured == 0 {
		return st.setDeviceState(ctx, r.id, d, fccwire.DeviceFailed, fccwire.ReasonError, "every diagnostic failed")
	}
	err := st.setDeviceState(ctx, r.id, d, fccwire.DeviceDone, "", "")
	r.e.wakeOutbox()
	return err
}

func sleepUntil(ctx context.Context, at time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	return sleep(ctx, d)
}

// measure takes one measurement to its result: WAN-usage checks, the
// diagnostic and its retries. A diagnostic in flight at a restart is
// waited for, never enqueued again.
func (r *campaignRun) measure(ctx, startCtx, drainCtx context.Context, d *campaignDevice, k measKey) (*fccwire.Result, error) {
	st := r.e.a.store
	g := r.groups[d.ConfigID]
	if g == nil {
		return nil, fmt.Errorf("device %d: no group %d", d.CpeID, d.ConfigID)
	}
	m := r.meas[d.CpeID][k]
	if m == nil {
		m = &measurement{State: measRunning, StartedAt: time.Now().UTC()}
		if err := st.beginMeasurement(ctx, k, m.StartedAt); err != nil {
			return nil, err
		}
		r.meas[d.CpeID][k] = m
	}
	plan := r.plan(d, g, k.Direction)
	var wan wanReading
	var lastFault string
	wanBusy := 0
	for {
		txnID := m.TransactionID
		m.TransactionID = 0
		if txnID == 0 {
			if startCtx.Err() != nil {
				return nil, errAborted
			}
			if plan.wanDl != nil || plan.wanUl != nil {
				w, err := r.wanUsage(startCtx, d)
				switch {
				case startCtx.Err() != nil:
					return nil, errAborted
				case err != nil:
					// An unreadable counter is no proof of a busy WAN.
					r.e.log.Info("WAN usage not read; measuring anyway", "activationId", r.id, "cpeId", d.CpeID, "err", err)
				default:
					wan = w
					if plan.busy(w) {
						m.Attempts++
						wanBusy++
						if wanBusy > r.head.Schedule.WanUsageRetries {
							res := r.result(d, g, k, plan, m, wan)
							res.Status = fccwire.OutcomeWANBusy
							res.Description = fmt.Sprintf("WAN busy at every check: %d Kbps down, %d Kbps up", w.dl, w.ul)
							return r.record(ctx, k, res)
						}
						if err := st.setMeasurementAttempts(ctx, k, m.Attempts); err != nil {
							return nil, err
						}
						if !sleep(startCtx, r.e.cfg.WANRetryInterval) {
							return nil, errAborted
						}
						continue
					}
				}
			}
			select {
			case r.e.slots <- struct{}{}:
			case <-startCtx.Done():
				return nil, errAborted
			}
			m.Attempts++
			label := "campaign " + strconv.FormatInt(r.id, 10) + " " + string(k.Direction) + " " + strconv.Itoa(k.Iteration) + " #" + strconv.Itoa(m.Attempts)
			txn, err := st.enqueueMeasurement(ctx, k, m.Attempts, m.Failures, label, NewTask{DeviceID: d.CpeID, Kind: plan.kind, Args: plan.args})
			if err != nil {
				<-r.e.slots
				if isNotFound(err) {
					m.Failures = r.head.Schedule.FailedTestRetries + 1
					lastFault = "the device is no longer in the ACS"
					return r.record(ctx, k, r.errorResult(d, g, k, plan, m, wan, lastFault))
				}
				return nil, err
			}
			txnID = txn.ID
			if r.head.Schedule.RequestDeviceConnect {
				r.connect(ctx, d.CpeID)
			}
		} else {
			select {
			case r.e.slots <- struct{}{}:
			case <-drainCtx.Done():
				return nil, errAborted
			}
		}
		r.mu.Lock()
		r.inflight[txnID] = true
		r.mu.Unlock()
		r.e.m.diagnostics.Inc()
		task, err := r.wait(drainCtx, txnID, d.CpeID)
		r.e.m.diagnostics.Dec()
		<-r.e.slots
		if err != nil {
			if drainCtx.Err() != nil || ctx.Err() != nil {
				return nil, errAborted // left in flight; cancelled when the run ends
			}
			return nil, err
		}
		r.mu.Lock()
		delete(r.inflight, txnID)
		r.mu.Unlock()
		if task.State == TaskDone {
			res, err := r.measured(d, g, k, plan, m, wan, task)
			if err == nil {
				return r.record(ctx, k, res)
			}
			lastFault = err.Error()
		} else {
			lastFault = faultText(task)
		}
		m.Failures++
		if m.Failures > r.head.Schedule.FailedTestRetries {
			return r.record(ctx, k, r.errorResult(d, g, k, plan, m, wan, lastFault))
		}
		if startCtx.Err() != nil {
			return nil, errAborted // no retry after a STOP
		}
	}
}

func isNotFound(err error) bool { return errors.Is(err, apperr.ErrNotFound) }

func faultText(t Task) string {
	if t.Fault == nil {
		return "diagnostic failed"
	}
	return fmt.Sprintf("%d %s", t.Fault.Code, t.Fault.Message)
}

// record stores a result, then wakes the outbox that publishes it.
func (r *campaignRun) record(ctx context.Context, k measKey, res *fccwire.Result) (*fccwire.Result, error) {
	res.FinishedAt = fccwire.At(time.Now())
	if res.FinishedAt.Before(res.StartedAt.Time) {
		res.FinishedAt = res.StartedAt
	}
	res.AfterStop = r.isStopped()
	b, err := fccwire.Encode(res)
	if err != nil {
		// A CPE's figures the contract refuses are no measurement.
		desc := "unusable diagnostic result: " + err.Error()
		res.Status, res.Description, res.Speed, res.Latency = fccwire.OutcomeError, clip(desc, 1024), nil, nil
		if b, err = fccwire.Encode(res); err != nil {
			return nil, err
		}
	}
	if err := r.e.a.store.finishMeasurement(context.WithoutCancel(ctx), k, res, b); err != nil {
		return nil, err
	}
	if m := r.meas[k.CpeID][k]; m != nil {
		m.State, m.Status = measDone, res.Status
	}
	r.e.m.results.WithLabelValues(string(res.Status)).Inc()
	r.e.wakeOutbox()
	return res, nil
}

// connect sends a connection request; a failure leaves the task to the
// device's next periodic Inform.
func (r *campaignRun) connect(ctx context.Context, cpeID int64) {
	if err := r.e.a.ConnectionRequest(ctx, cpeID); err != nil && ctx.Err() == nil {
		r.e.log.Info("campaign connection request failed; waiting for the next Inform", "activationId", r.id, "cpeId", cpeID, "err", err)
	}
}

// wait blocks until transaction txnID is settled and returns its task.
func (r *campaignRun) wait(ctx context.Context, txnID, cpeID int64) (Task, error) {
	wake, unsubscribe := r.e.a.notify.subscribe(txnID)
	defer unsubscribe()
	tick := time.NewTicker(r.e.cfg.PollInterval)
	defer tick.Stop()
	lastConnect := time.Now()
	for {
		txn, err := r.e.a.store.Transaction(ctx, txnID)
		if err != nil {
			return Task{}, err
		}
		if txn.State != TaskPending && len(txn.Tasks) > 0 {
			return txn.Tasks[0], nil
		}
		// A task an ACS restart cut off mid-session (SPV or results' GPV sent) needs a session too.
		if r.head.Schedule.RequestDeviceConnect && len(txn.Tasks) > 0 && (txn.Tasks[0].State == TaskPending || txn.Tasks[0].Phase == PhaseSet || txn.Tasks[0].Phase == PhaseGetResults) &&
			time.Since(lastConnect) >= r.e.cfg.ConnectRetry {
			lastConnect = time.Now()
			r.connect(ctx, cpeID)
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
			return Task{}, ctx.Err()
		}
	}
}

// runTask enqueues one plain task (a WAN counter read) and waits for it.
func (r *campaignRun) runTask(ctx context.Context, cpeID int64, kind TaskKind, args any) (Task, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return Task{}, err
	}
	txn, err := r.e.a.store.Enqueue(ctx, "campaign "+strconv.FormatInt(r.id, 10)+" wan", []NewTask{{DeviceID: cpeID, Kind: kind, Args: raw}})
	if err != nil {
		return Task{}, err
	}
	if r.head.Schedule.RequestDeviceConnect {
		r.connect(ctx, cpeID)
	}
	t, err := r.wait(ctx, txn.ID, cpeID)
	if err != nil && ctx.Err() != nil {
		_, _ = r.e.a.store.CancelTask(context.WithoutCancel(ctx), txn.Tasks[0].ID)
	}
	return t, err
}

// wakeOutbox asks the publisher to run now.
func (e *Executor) wakeOutbox() {
	select {
	case e.outboxWake <- struct{}{}:
	default:
	}
}

// publishLoop publishes the outbox in order whenever woken, and at the
// poll interval so that a failed publish is retried.
func (e *Executor) publishLoop(ctx context.Context) {
	t := time.NewTicker(e.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.outboxWake:
		case <-t.C:
		}
		if err := e.publishOutbox(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("publishing the campaign outbox; retrying", "err", err)
		}
	}
}

// publishOutbox publishes what the outbox holds, oldest first, and
// deletes what the grid took. A result published twice (a crash between
// publish and delete) carries the same message id: the grid drops it.
func (e *Executor) publishOutbox(ctx context.Context) error {
	for {
		rows, err := e.a.store.nextOutbox(ctx, outboxBatch)
		if err != nil || len(rows) == 0 {
			return err
		}
		var done int64
		var pubErr error
		for _, row := range rows {
			q := e.out[row.Queue]
			if q == nil {
				e.log.Error("campaign outbox row for an unknown queue dropped", "queue", row.Queue, "id", row.ID)
				done = row.ID
				continue
			}
			if pubErr = q.Publish(ctx, row.Payload, row.MsgID); pubErr != nil {
				break
			}
			e.m.outbox.Inc()
			done = row.ID
		}
		if done > 0 {
			if err := e.a.store.deleteOutbox(context.WithoutCancel(ctx), done); err != nil {
				return err
			}
		}
		if pubErr != nil {
			return pubErr
		}
	}
}
