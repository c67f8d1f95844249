package acs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/cwmp"
)

const sessionCookie = "cwmpsession"

// acsMethods are the RPCs the ACS answers (GetRPCMethodsResponse).
var acsMethods = []string{"Inform", "GetRPCMethods", "TransferComplete", "AutonomousTransferComplete", "RequestDownload",
	"DUStateChangeComplete", "AutonomousDUStateChangeComplete"}

// ServeHTTP is the CWMP endpoint.
func (a *ACS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "CWMP messages are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			a.metrics.rejected.WithLabelValues("too_large").Inc()
			http.Error(w, fmt.Sprintf("message exceeds %d bytes", a.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "message could not be read", http.StatusBadRequest)
		return
	}
	var sess *session
	if c, err := r.Cookie(sessionCookie); err == nil {
		sess = a.sessions.get(c.Value)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if sess == nil {
			a.metrics.rejected.WithLabelValues("no_session").Inc()
			http.Error(w, "an empty message needs a session: start with an Inform", http.StatusBadRequest)
			return
		}
		a.inSession(w, r, sess, nil)
		return
	}
	env, err := cwmp.Decode(body)
	if err != nil {
		a.decodeError(w, env, err)
		return
	}
	if inf, ok := env.Body.(*cwmp.Inform); ok {
		a.handleInform(w, r, env, inf, sess)
		return
	}
	if sess == nil {
		a.metrics.rejected.WithLabelValues("no_session").Inc()
		a.writeEnvelope(w, http.StatusInternalServerError, env.Reply(cwmp.NewFault(cwmp.FaultRequestDenied, "a session must start with an Inform")))
		return
	}
	a.inSession(w, r, sess, env)
}

// decodeError answers a message that did not decode. An unknown method or
// a bad value still has a readable envelope: that gets a CWMP fault with
// the same cwmp:ID; anything else is a plain 400.
func (a *ACS) decodeError(w http.ResponseWriter, env *cwmp.Envelope, err error) {
	var unknown *cwmp.UnknownMethodError
	var badValue *cwmp.ValueError
	switch {
	case env != nil && errors.As(err, &unknown):
		a.metrics.rejected.WithLabelValues("unknown_method").Inc()
		a.writeEnvelope(w, http.StatusInternalServerError, env.Reply(cwmp.NewFault(cwmp.FaultMethodNotSupported, "")))
		return
	case env != nil && errors.As(err, &badValue):
		a.metrics.rejected.WithLabelValues("invalid_arguments").Inc()
		a.writeEnvelope(w, http.StatusInternalServerError, env.Reply(cwmp.NewFault(cwmp.FaultInvalidArguments, badValue.Error())))
		return
	}
	a.metrics.rejected.WithLabelValues("malformed").Inc()
	msg := "malformed CWMP message"
	if errors.Is(err, cwmp.ErrDTD) {
		msg = "DTDs and entity declarations are not allowed"
	}
	http.Error(w, msg, http.StatusBadRequest)
}

func (a *ACS) writeEnvelope(w http.ResponseWriter, status int, env *cwmp.Envelope) {
	b, err := cwmp.Encode(env)
	if err != nil {
		a.log.Error("encoding CWMP message", "method", env.Body.Method(), "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	w.Header().Set("SOAPServer", "cpesuite-acs")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// retryLater answers 503 with Retry-After: CPEs back off and Inform again.
func (a *ACS) retryLater(w http.ResponseWriter, reason, msg string) {
	a.metrics.rejected.WithLabelValues(reason).Inc()
	w.Header().Set("Retry-After", strconv.Itoa(int(a.cfg.RetryAfter/time.Second)))
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// handleInform opens a session. prev is the live session the request's
// cookie names, if any.
func (a *ACS) handleInform(w http.ResponseWriter, r *http.Request, env *cwmp.Envelope, inf *cwmp.Inform, prev *session) {
	if !a.authenticated(w, r) {
		return
	}
	if err := validateInform(inf); err != nil {
		a.invalidArguments(w, env, "Inform", err)
		return
	}
	noSession := prev == nil
	if prev != nil {
		// A new Inform ends the old session of this client.
		prev.mu.Lock()
		a.endSession(prev, "reinform")
		prev.mu.Unlock()
	}
	id := inf.DeviceID
	key := DeviceKey{OUI: id.OUI, ProductClass: id.ProductClass, Serial: id.SerialNumber}
	// A CPE runs one session at a time, so a BOOT, or an Inform without
	// the cookie of a live session, means the device left its old session
	// (typically by rebooting mid-session) and must not wait out its
	// time-out.
	takeOver := noSession || slices.ContainsFunc(inf.Event, func(e cwmp.EventStruct) bool { return e.EventCode == cwmp.EventBoot })
	sess, replaced, err := a.sessions.open(key, env.Version, takeOver)
	if replaced != nil {
		a.metrics.sessionsFinished.WithLabelValues("replaced").Inc()
		a.log.Info("device started a new session; its old one ends", "device", replaced.deviceID)
	}
	switch {
	case errors.Is(err, errSessionActive):
		a.retryLater(w, "session_active", "this device already has a session in progress")
		return
	case errors.Is(err, errTooMany):
		a.retryLater(w, "capacity", "too many concurrent sessions")
		return
	}
	defer sess.mu.Unlock()
	up := a.informUpdate(r, env, inf, key)
	res, err := a.batcher.Apply(r.Context(), up)
	if err != nil {
		a.sessions.close(sess)
		a.log.Warn("inform not stored; CPE asked to retry", "device", logClip(key.String()), "err", err)
		a.retryLater(w, "store", "the ACS could not store the Inform; retry later")
		return
	}
	sess.deviceID, sess.dataModel = res.DeviceID, up.DataModel
	if sess.dataModel == "" {
		if d, err := a.store.Device(r.Context(), res.DeviceID); err == nil {
			sess.dataModel = d.DataModel
		}
	}
	a.metrics.sessionsStarted.Inc()
	for _, e := range inf.Event {
		a.metrics.informs.WithLabelValues(e.EventCode).Inc()
		if e.EventCode == cwmp.EventDiagnosticsComplete {
			if _, err := a.store.AdvanceDiagnostics(r.Context(), res.DeviceID); err != nil {
				a.log.Error("advancing diagnostics", "device", res.DeviceID, "err", err)
			}
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sess.id, Path: "/", HttpOnly: true})
	a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.InformResponse{MaxEnvelopes: 1}))
}

// informUpdate extracts the registry fields from an Inform.
func (a *ACS) informUpdate(r *http.Request, env *cwmp.Envelope, inf *cwmp.Inform, key DeviceKey) InformUpdate {
	now := a.now().UTC()
	up := InformUpdate{Key: key, Manufacturer: inf.DeviceID.Manufacturer, CWMPVersion: env.Version.String(), At: now,
		Params: make(Params, len(inf.ParameterList))}
	for _, e := range inf.Event {
		up.Events = append(up.Events, e.EventCode)
		if e.EventCode == cwmp.EventBoot || e.EventCode == cwmp.EventBootstrap {
			up.Boot = true
		}
	}
	for _, p := range inf.ParameterList {
		up.Params[p.Name] = ParamValue{Value: p.Value.Text, Type: p.Value.Type}
		root, rest, _ := strings.Cut(p.Name, ".")
		if up.DataModel == "" {
			switch root {
			case "InternetGatewayDevice":
				up.DataModel = DataModelTR098
			case "Device":
				up.DataModel = DataModelTR181
			}
		}
		switch {
		case rest == "DeviceInfo.SoftwareVersion":
			up.SoftwareVersion = p.Value.Text
		case rest == "DeviceInfo.HardwareVersion":
			up.HardwareVersion = p.Value.Text
		case rest == "DeviceInfo.ModelName":
			up.ModelName = p.Value.Text
		case rest == "ManagementServer.ConnectionRequestURL":
			up.ConnReqURL = p.Value.Text
		case rest == periodicIntervalParam:
			if n, ok := parseInterval(p.Value.Text); ok {
				up.PeriodicInterval = n
			}
		case strings.HasSuffix(rest, ".ExternalIPAddress") && up.ExternalIP == "":
			up.ExternalIP = p.Value.Text
		}
	}
	if up.ExternalIP == "" {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			up.ExternalIP = host
		}
	}
	up.OnlineUntil = a.onlineUntil(now, up.PeriodicInterval)
	return up
}

// periodicIntervalParam is the interval's name below the data model root
// (InternetGatewayDevice. or Device.).
const periodicIntervalParam = "ManagementServer.PeriodicInformInterval"

// parseInterval reads a PeriodicInformInterval value; 0 and junk are no
// interval.
func parseInterval(text string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	return n, err == nil && n > 0
}

// periodicInterval finds the interval among parameter values.
func periodicInterval(p Params) (int, bool) {
	for name, v := range p {
		if _, rest, _ := strings.Cut(name, "."); rest == periodicIntervalParam {
			return parseInterval(v.Value)
		}
	}
	return 0, false
}

// inSession handles a message after the Inform: a CPE request, the answer
// to our RPC, or an empty POST; then hands the CPE the next RPC.
func (a *ACS) inSession(w http.ResponseWriter, r *http.Request, sess *session, env *cwmp.Envelope) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.ended {
		http.Error(w, "session ended", http.StatusBadRequest)
		return
	}
	a.sessions.touch(sess)
	ctx := r.Context()
	if env != nil {
		if err := validateRequest(env.Body); err != nil {
			a.invalidArguments(w, env, env.Body.Method(), err)
			return
		}
		switch m := env.Body.(type) {
		case *cwmp.TransferComplete:
			if err := a.transferComplete(ctx, sess, m); err != nil {
				a.internalError(w, sess, env, err)
				return
			}
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.TransferCompleteResponse{}))
			return
		case *cwmp.AutonomousTransferComplete:
			a.log.Info("autonomous transfer complete", "device", sess.deviceID, "url", logClip(m.TransferURL), "fault", m.FaultStruct.FaultCode)
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.AutonomousTransferCompleteResponse{}))
			return
		case *cwmp.GetRPCMethods:
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.GetRPCMethodsResponse{MethodList: acsMethods}))
			return
		case *cwmp.RequestDownload:
			a.log.Info("CPE requested a download", "device", sess.deviceID, "fileType", logClip(m.FileType))
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.RequestDownloadResponse{}))
			return
		case *cwmp.DUStateChangeComplete:
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.DUStateChangeCompleteResponse{}))
			return
		case *cwmp.AutonomousDUStateChangeComplete:
			a.writeEnvelope(w, http.StatusOK, env.Reply(&cwmp.AutonomousDUStateChangeCompleteResponse{}))
			return
		default:
			if err := a.answer(ctx, sess, env); err != nil {
				a.internalError(w, sess, env, err)
				return
			}
		}
	}
	a.sendNext(w, ctx, sess)
}

// authenticated checks the CPE's credentials and answers the refusal.
// With AllowUnauthenticated a CPE that presents none is let in; one that
// presents credentials still has them checked, so a wrong password is
// never taken for no password.
func (a *ACS) authenticated(w http.ResponseWriter, r *http.Request) bool {
	if a.cfg.AllowUnauthenticated && r.Header.Get("Authorization") == "" {
		return true
	}
	if _, err := a.auth.Verify(r); err != nil {
		a.metrics.rejected.WithLabelValues("unauthenticated").Inc()
		a.auth.Reject(w, r, err)
		return false
	}
	return true
}

// invalidArguments answers a CPE request whose fields break TR-069's
// limits with fault 8003, before anything of it is stored.
func (a *ACS) invalidArguments(w http.ResponseWriter, env *cwmp.Envelope, method string, err error) {
	a.metrics.rejected.WithLabelValues("invalid_arguments").Inc()
	a.log.Warn("CPE request refused", "method", method, "err", err)
	a.writeEnvelope(w, http.StatusInternalServerError, env.Reply(cwmp.NewFault(cwmp.FaultInvalidArguments, err.Error())))
}

func (a *ACS) internalError(w http.ResponseWriter, sess *session, env *cwmp.Envelope, err error) {
	a.log.Error("CWMP session error", "device", sess.deviceID, "err", err)
	a.writeEnvelope(w, http.StatusInternalServerError, env.Reply(cwmp.NewFault(cwmp.FaultInternalError, "")))
}

// answer applies the CPE's response (or fault) to the outstanding task.
func (a *ACS) answer(ctx context.Context, sess *session, env *cwmp.Envelope) error {
	t := sess.current
	if t == nil {
		a.log.Warn("CPE sent a response with no request outstanding", "device", sess.deviceID, "method", env.Body.Method())
		return nil
	}
	if env.ID != sess.rpcID && env.ID != "" {
		a.log.Debug("response cwmp:ID differs from the request's", "device", sess.deviceID, "want", sess.rpcID, "got", logClip(env.ID))
	}
	a.metrics.rpcLatency.WithLabelValues(strings.TrimSuffix(env.Body.Method(), "Response")).Observe(a.now().Sub(sess.rpcSent).Seconds())
	sess.current, sess.rpcID = nil, ""
	var out outcome
	if err := validateResponse(env.Body); err != nil {
		a.log.Warn("CPE answer refused", "device", sess.deviceID, "task", t.ID, "method", env.Body.Method(), "err", err)
		out = outcome{state: TaskFault, fault: &Fault{Code: FaultCodeInvalidArguments, Message: "the CPE's " + env.Body.Method() + " is unusable: " + err.Error()}}
	} else {
		out = applyResponse(t, sess.dataModel, env.Body)
	}
	periodic := -1
	// The interval drives the online window, so a value read or set in a
	// session counts as much as one from an Inform.
	if n, ok := periodicInterval(out.params); ok && len(out.params) > 0 {
		periodic = n
	}
	t.State, t.Phase = out.state, out.phase
	if out.result != nil {
		b, err := json.Marshal(out.result)
		if err != nil {
			return err
		}
		t.Result = b
	}
	t.Fault = out.fault
	if !t.Open() {
		now := a.now().UTC()
		t.FinishedAt = &now
	}
	if err := a.store.SaveAnswer(ctx, sess.deviceID, out.params, periodic, t); err != nil {
		return err
	}
	if !t.Open() {
		a.notify.notify(t.TransactionID)
	}
	return nil
}

// sendNext sends the next RPC of the device's queue, or ends the session
// with 204 when nothing is left.
func (a *ACS) sendNext(w http.ResponseWriter, ctx context.Context, sess *session) {
	for {
		t, err := a.store.NextTask(ctx, sess.deviceID)
		if err != nil {
			a.log.Error("reading the task queue", "device", sess.deviceID, "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		if t == nil {
			a.endSession(sess, "done")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if t.Attempts >= a.cfg.MaxAttempts && t.Phase != PhaseGetResults {
			now := a.now().UTC()
			t.State, t.FinishedAt = TaskFault, &now
			t.Fault = &Fault{Code: FaultCodeRetry, Message: fmt.Sprintf("no answer from the CPE after %d attempts", t.Attempts)}
			if err := a.finish(ctx, t); err != nil {
				a.log.Error("faulting task", "task", t.ID, "err", err)
				http.Error(w, "internal error", http.StatusInternalServerError)
				return
			}
			continue
		}
		if t.Kind.IsDiagnostics() && t.State == TaskPending && !a.diagnosticsSlot(ctx) {
			// Diagnostics are bounded ACS-wide; the queue keeps its order,
			// so this device waits for its next session.
			a.endSession(sess, "done")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		msg, phase, err := buildRPC(t, sess.dataModel, a.cfg.SpeedtestURL)
		if err != nil {
			now := a.now().UTC()
			t.State, t.FinishedAt, t.Fault = TaskFault, &now, &Fault{Code: FaultCodeInternal, Message: err.Error()}
			_ = a.finish(ctx, t)
			continue
		}
		now := a.now().UTC()
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
		t.State, t.Phase = TaskRunning, phase
		t.Attempts++
		if err := a.store.SaveTask(ctx, t); err != nil {
			a.log.Error("saving task", "task", t.ID, "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		sess.current, sess.rpcID, sess.rpcSent = t, fmt.Sprintf("%d.%d", t.ID, t.Attempts), a.now()
		a.writeEnvelope(w, http.StatusOK, cwmp.NewEnvelope(sess.version, sess.rpcID, msg))
		return
	}
}

// diagnosticsSlot reports whether another diagnostic may start. The count
// comes from the store, so it survives restarts and cancellations.
func (a *ACS) diagnosticsSlot(ctx context.Context) bool {
	a.diagMu.Lock()
	defer a.diagMu.Unlock()
	n, err := a.store.DiagnosticsInFlight(ctx)
	if err != nil {
		a.log.Error("counting diagnostics", "err", err)
		return false
	}
	return n < int64(a.cfg.MaxDiagnostics)
}

func (a *ACS) endSession(sess *session, reason string) {
	sess.ended = true
	a.sessions.close(sess)
	a.metrics.sessionsFinished.WithLabelValues(reason).Inc()
}

// transferComplete ends the Download/Upload task whose command key the
// CPE reports.
func (a *ACS) transferComplete(ctx context.Context, sess *session, m *cwmp.TransferComplete) error {
	tasks, err := a.store.TransferTasks(ctx, sess.deviceID)
	if err != nil {
		return err
	}
	for i := range tasks {
		t := &tasks[i]
		var args TransferArgs
		_ = json.Unmarshal(t.Args, &args)
		if transferCommandKey(t, args.CommandKey) != m.CommandKey {
			continue
		}
		now := a.now().UTC()
		t.FinishedAt = &now
		res, _ := json.Marshal(transferResult(m.StartTime, m.CompleteTime, &m.FaultStruct))
		t.Result = res
		if m.FaultStruct.FaultCode != 0 {
			t.State, t.Fault = TaskFault, &Fault{Code: int(m.FaultStruct.FaultCode), Message: m.FaultStruct.FaultString}
		} else {
			t.State = TaskDone
		}
		return a.finish(ctx, t)
	}
	a.log.Info("TransferComplete matches no waiting task", "device", sess.deviceID, "commandKey", logClip(m.CommandKey))
	return nil
}
