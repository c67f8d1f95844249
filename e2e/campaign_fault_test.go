package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/fcc/results"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/testutil"
)

// Fault campaign shape: 30 CPEs, SPEED (download and upload), a 1-hour
// window of 20-minute slots, so 3 iterations and 180 results. At time
// scale 60 a slot lasts 20 s: long enough for the faults to land while
// diagnostics are in flight and for a restarted process to catch up
// before the window closes, on a loaded 2-core machine.
const (
	faultDevices    = 30
	faultDirections = 2
	faultHours      = 1
	faultSlotMin    = 20
	faultIterations = faultHours * 60 / faultSlotMin
	faultResults    = faultDevices * faultDirections * faultIterations

	// faultDeadline bounds one faulted campaign: a one-minute window plus
	// restarts. A safety net against a hang, not a measure of speed.
	faultDeadline = 8 * time.Minute
)

// faultRig is one campaign chain over real `cpesuite` subprocesses: the
// ACS, the emulated fleet with the speedtest target, and the campaign
// service, talking over the test's own grid server and sharing one data
// directory (SQLite acs.db and fcc.db; the DuckDB file is only opened by
// the process holding fcc).
type faultRig struct {
	t        *testing.T
	p        *platform // addresses and the /FCC client of the other e2e tests
	grid     *gridServer
	tap      *gridTap
	dataDir  string
	acsProc  *proc // the process holding the ACS
	fccProc  *proc // the process holding the campaign service
	procs    []*proc
	campaign int64
	run      int64 // the run (activation) id
	figures  faultFigures
}

// faultFigures is one row of the table in BENCHMARKS.md.
type faultFigures struct {
	publishedAtFault int    // RESULT publishes seen when the fault was injected
	resultsSent      int64  // the ACS's ACTIVATION_FINISHED resultsSent
	measured         int64  // measurements done in the ACS's tables
	pubKeys          int    // distinct RESULT keys published (seen on the tap)
	pubTotal         int    // RESULT publishes seen, re-publishes included
	stored           int64  // rows in the result store (activations/list)
	duckRows         int    // rows read from the DuckDB file afterwards
	duckKeys         int    // distinct natural keys among them
	tasks            int    // diagnostic tasks of the run in acs_tasks
	retried          int    // of which re-tries of a failed diagnostic
	rpcs             int    // RPCs the ACS sent for them (acs_tasks.attempts)
	finishReason     string // the run's reason on the campaign service
}

// TestCampaignFaults runs the campaign chain as it runs in production,
// in separate processes, and breaks one piece mid-campaign: the ACS or the
// campaign service is killed (SIGKILL, no clean-up) and started again, or
// the grid server goes away and comes back. The campaign must still
// complete with every (device, direction, iteration) result stored
// exactly once, and the ACS must not have measured anything twice. Each
// case logs its row of the table in BENCHMARKS.md.
func TestCampaignFaults(t *testing.T) {
	bin := buildCpesuite(t, t.TempDir())
	cases := []struct {
		name string
		// The targets of the two processes: `up --only` lists. The first
		// holds the ACS and starts first, so the campaign service's
		// start-up check of the ACS tables meets a migrated acs.db.
		first, second string
		// beforeActivate runs once the fleet is ready, before POST
		// /FCC/activate; fault runs after it.
		beforeActivate func(r *faultRig)
		fault          func(r *faultRig)
	}{
		// No fault: the figures every faulted row compares with.
		{"no_fault", "acs", "speedtest,tr069-emulator,fcc", nil, func(r *faultRig) {}},
		{"acs_killed_mid_run", "acs", "speedtest,tr069-emulator,fcc", nil, func(r *faultRig) {
			r.waitPublished(10)
			r.acsProc.kill()
			r.acsProc.start()
			r.acsProc.answers(r.p.url("CPESUITE_ACS_API_ADDR", "/actuator/health"))
		}},
		{"fcc_killed_mid_batch", "acs,speedtest,tr069-emulator", "fcc", nil, func(r *faultRig) {
			r.waitPublished(10)
			r.fccProc.kill()
			r.fccProc.start()
			r.fccProc.answers(r.p.url("CPESUITE_FCC_ADDR", "/actuator/health"))
		}},
		{"grid_restarted_mid_dispatch_and_mid_stream", "acs", "speedtest,tr069-emulator,fcc", func(r *faultRig) {
			// Mid-dispatch: the grid is down when the run is created, so
			// the outbox cannot hand the ACTIVATE over until it is back.
			r.grid.shutdown()
		}, func(r *faultRig) {
			poll(r.t, testutil.MinDeadline, "the run waiting for the grid", func() bool {
				r.alive()
				for _, it := range r.list(r.campaign).Items {
					if it.State == "PLANNED" || it.State == "DISPATCHING" {
						return true
					}
					r.t.Fatalf("run %d %s while the grid is down", it.ID, it.State)
				}
				return false
			})
			// Some dispatcher ticks (200 ms) fail against the missing grid.
			time.Sleep(2 * time.Second)
			r.grid.start()
			// Mid-stream: results are being published and ingested.
			r.waitPublished(10)
			r.grid.restart(2 * time.Second)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newFaultRig(t, bin, c.first, c.second)
			r.startCampaign(c.beforeActivate)
			c.fault(r)
			r.verify()
			f := r.figures
			// One row of the table in BENCHMARKS.md.
			t.Logf("| %s | %d | %d | %d | %d | %d / %d | %d | %d | %d | %d | %d (%d re-tries, %d RPCs) | %s |",
				c.name, faultResults, f.publishedAtFault, f.resultsSent, f.measured, f.pubKeys, f.pubTotal, f.stored, f.duckRows,
				faultResults-f.duckKeys, f.duckRows-f.duckKeys, f.tasks, f.retried, f.rpcs, f.finishReason)
		})
	}
}

func newFaultRig(t *testing.T, bin, first, second string) *faultRig {
	r := &faultRig{t: t, dataDir: t.TempDir()}
	r.grid = startGridServer(t)
	r.tap = tapGrid(t, r.grid.addr)
	r.p = &platform{addrs: map[string]string{
		"CPESUITE_ACS_ADDR": testutil.FreeAddr(t), "CPESUITE_ACS_API_ADDR": testutil.FreeAddr(t),
		"CPESUITE_SPEEDTEST_ADDR": testutil.FreeAddr(t), "CPESUITE_TR069_EMULATOR_ADDR": testutil.FreeAddr(t),
		"CPESUITE_FCC_ADDR": testutil.FreeAddr(t),
	}, logs: &testutil.SyncBuffer{}}
	env := map[string]string{
		"CPESUITE_DATA_DIR": r.dataDir, "CPESUITE_LOG_FORMAT": "json", "CPESUITE_LOG_LEVEL": "warn",
		"GRID_MEMBERS":               r.grid.addr,
		"CPESUITE_ACS_SPEEDTEST_URL": "http://" + r.p.addrs["CPESUITE_SPEEDTEST_ADDR"],
		"DEFAULT_ACS_URL":            "http://" + r.p.addrs["CPESUITE_ACS_ADDR"] + "/",
		// Both sides scale campaign time alike: a minute lasts a second.
		"CPESUITE_CAMPAIGN_TIME_SCALE":     "60",
		"SVC_FCC_SCHEDULER_POLL_INTERVAL":  "200ms",
		"SVC_FCC_OUTBOX_DISPATCH_INTERVAL": "200ms",
		"SVC_FCC_RESULT_FLUSH_INTERVAL":    "200ms",
		"SVC_FCC_WATCHDOG_POLL_INTERVAL":   "1s",
		// Scaled: 2 minutes past the window before the watchdog closes a
		// run, so a restarted ACS reports the end itself.
		"SVC_FCC_WATCHDOG_FINISH_GRACE":       "2h",
		"SVC_FCC_OUTBOX_ACK_TIMEOUT_INTERVAL": "500ms",
		// Small batches: a kill of the campaign service lands between
		// and inside many of them.
		"SVC_FCC_RESULT_BATCH_SIZE": "10",
		// A restarted ACS re-asks devices for a session soon.
		"CPESUITE_ACS_CAMPAIGN_CONNECT_RETRY": "2s",
		"CPESUITE_ACS_CAMPAIGN_POLL":          "200ms",
		// A slot's 60 diagnostics run in waves of 10, each a real transfer
		// of megabytes: a slot lasts some seconds, so a fault finds
		// diagnostics in flight.
		"CPESUITE_ACS_MAX_DIAGNOSTICS": "10",
		"CPESUITE_STOP_TIMEOUT":        platformDeadline.String(),
	}
	for k, v := range r.p.addrs {
		env[k] = v
	}
	for _, targets := range []string{first, second} {
		pr := newProc(t, "process "+targets, bin, env, "up", "--only", targets)
		r.procs = append(r.procs, pr)
		pr.start()
		for _, target := range strings.Split(targets, ",") {
			switch target {
			case "acs":
				r.acsProc = pr
				pr.answers(r.p.url("CPESUITE_ACS_API_ADDR", "/actuator/health"))
			case "fcc":
				r.fccProc = pr
				pr.answers(r.p.url("CPESUITE_FCC_ADDR", "/actuator/health"))
			case "tr069-emulator":
				pr.answers(r.p.url("CPESUITE_TR069_EMULATOR_ADDR", "/api/status"))
			}
		}
	}
	return r
}

// startCampaign starts the fleet, saves the campaign over it and activates
// it.
func (r *faultRig) startCampaign(beforeActivate func(r *faultRig)) {
	t := r.t
	emu := r.p.url("CPESUITE_TR069_EMULATOR_ADDR", "")
	noTaskDelays(t, emu)
	var serials []string
	for i := 1; i <= faultDevices; i++ {
		proto := []string{"TR-098", "TR-181"}[i%2]
		s := fmt.Sprintf("FLT%s-%02d", strings.ReplaceAll(proto, "-", ""), i)
		serials = append(serials, s)
		post(t, emu+"/apiV2/startProtocol", map[string]string{"protocol": proto, "serial": s})
	}
	waitResolvable(t, r.p, serials)
	status, body := fccCall(t, r.p, "PUT", "/FCC/item/details", map[string]any{
		"name": "fault " + t.Name(), "type": "SPEED", "domainId": 1,
		"activation": map[string]any{"type": "Immediately", "totalTestDuration": faultHours, "singleTestDuration": faultSlotMin,
			"batchInterval": 0, "failedTestRetries": 1, "wanUsageRetries": 0, "requestDeviceConnect": true},
		"configs": []any{map[string]any{"sourceType": "SERIAL_LIST", "serials": serials, "settings": []any{map[string]any{
			"type": "SPEED", "testMode": "FILE_BASED",
			"downloadUrl": r.p.url("CPESUITE_SPEEDTEST_ADDR", "/download?size=5000000"),
			"uploadUrl":   r.p.url("CPESUITE_SPEEDTEST_ADDR", "/upload"), "fileSizeUpload": 2000000}}}},
	})
	if status != 200 {
		t.Fatalf("save: %d %s", status, body)
	}
	var saved struct{ ID int64 }
	_ = json.Unmarshal(body, &saved)
	if beforeActivate != nil {
		beforeActivate(r)
	}
	if status, body := fccCall(t, r.p, "POST", "/FCC/activate", map[string]any{"id": saved.ID}); status != 200 {
		t.Fatalf("activate: %d %s", status, body)
	}
	r.campaign = saved.ID
	// The scheduler creates the run on its next tick.
	poll(t, testutil.MinDeadline, "the run of the activation", func() bool {
		r.alive()
		list := r.list(saved.ID)
		if len(list.Items) > 1 {
			t.Fatalf("want one run, got %+v", list)
		}
		if len(list.Items) == 1 {
			r.run = list.Items[0].ID
		}
		return r.run != 0
	})
}

// list reads POST /FCC/activations/list; a zero list while the campaign
// service is down.
func (r *faultRig) list(id int64) runList {
	var list runList
	status, body := fccCall(r.t, r.p, "POST", "/FCC/activations/list", map[string]any{"id": id})
	if status == 200 {
		_ = json.Unmarshal(body, &list)
	}
	return list
}

// stored is the run's row count in the result store, -1 while unknown.
func (r *faultRig) stored() int64 {
	for _, it := range r.list(r.campaign).Items {
		if it.ID == r.run && it.Results != nil {
			return *it.Results
		}
	}
	return -1
}

// waitPublished waits until the ACS has published n results, so that the
// fault lands in the first slot with diagnostics in flight (at most
// CPESUITE_ACS_MAX_DIAGNOSTICS of the slot's 60 at once) and results on
// their way to the store; it records the count it saw.
func (r *faultRig) waitPublished(n int) {
	testutil.Eventually(r.t, faultDeadline, fmt.Sprintf("%d results published before the fault", n), func() bool {
		r.alive()
		_, total := r.tap.publishes()
		r.figures.publishedAtFault = total
		return total >= n
	})
}

// alive fails the test when a process has died on its own.
func (r *faultRig) alive() {
	for _, pr := range r.procs {
		pr.running()
	}
}

// verify waits for the campaign to complete and every result to be stored
// once, then checks both sides' tables.
func (r *faultRig) verify() {
	t := r.t
	var list runList
	poll(t, faultDeadline, "the campaign COMPLETED", func() bool {
		r.alive()
		list = r.list(r.campaign)
		if list.State == "ERROR" {
			t.Fatalf("campaign in ERROR: %+v", list)
		}
		return list.State == "COMPLETED"
	})
	run := list.Items[0]
	r.figures.finishReason = deref(run.Reason)
	if run.State != "FINISHED" || run.Devices["DONE"] != faultDevices {
		t.Errorf("run: state %s reason %s devices %v; want FINISHED with %d DONE", run.State, deref(run.Reason), run.Devices, faultDevices)
	}
	// The ACS's tables are final once the run is: they say what was
	// measured, and so published.
	r.checkACSTables()
	// Results flush in batches after the run is over; wait for what the
	// ACS measured, then compare with what should have been.
	deadline := time.Now().Add(testutil.MinDeadline)
	for r.figures.stored = r.stored(); r.figures.stored < r.figures.measured && time.Now().Before(deadline); r.figures.stored = r.stored() {
		time.Sleep(250 * time.Millisecond) // the poll interval
	}
	if r.figures.stored != faultResults || r.figures.stored != r.figures.measured {
		t.Errorf("stored %d results; the ACS measured %d; want %d", r.figures.stored, r.figures.measured, faultResults)
	}
	r.figures.pubKeys, r.figures.pubTotal = r.tap.publishes()
	sent, reason, ok := r.tap.finishedRun(r.run)
	if ok {
		r.figures.resultsSent = sent
		if reason != "COMPLETED" {
			t.Errorf("ACTIVATION_FINISHED reason %s, want COMPLETED", reason)
		}
	} else {
		r.figures.resultsSent = -1 // published while the tap was reconnecting
	}
	// DuckDB is one process's file: read it once that process is gone.
	r.fccProc.stop()
	r.checkDuckDB()
}

// checkACSTables counts the executor's measurements and the diagnostic
// tasks it enqueued: one measurement per (device, direction, iteration),
// and no diagnostic sent twice for one of them. A transaction's label is
// "campaign <run> <direction> <iteration> #<attempt>"; a second task for
// the same measurement is only right as a re-try after a failed one.
func (r *faultRig) checkACSTables() {
	t := r.t
	ctx := context.Background()
	db, err := sqlstore.OpenService(ctx, "sqlite", "", filepath.Join(r.dataDir, "acs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM acs_campaign_measurements WHERE activation_id = ? AND state = 'done'`, r.run).Scan(&r.figures.measured); err != nil {
		t.Fatal(err)
	}
	if r.figures.measured != faultResults {
		t.Errorf("the ACS measured %d, want %d", r.figures.measured, faultResults)
		dumpUnfinished(t, db, r.run)
	}
	rows, err := db.QueryContext(ctx, `SELECT t.device_id, t.kind, t.state, t.attempts, x.label FROM acs_tasks t JOIN acs_transactions x ON x.id = t.transaction_id
		WHERE x.label LIKE ? ORDER BY t.id`, "campaign "+strconv.FormatInt(r.run, 10)+" %")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type key struct {
		device          int64
		direction, iter string
	}
	type task struct{ state, attempt string }
	byKey := map[key][]task{}
	// Tasks by device and kind, first attempts only: one per iteration.
	perKind := map[string]int{}
	for rows.Next() {
		var dev int64
		var kind, state, label string
		var attempts int
		if err := rows.Scan(&dev, &kind, &state, &attempts, &label); err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(label) // campaign <run> <direction> <iteration> #<attempt>
		if len(f) != 5 {
			continue // e.g. a WAN counter read
		}
		k := key{dev, f[2], f[3]}
		byKey[k] = append(byKey[k], task{state, f[4]})
		if f[4] == "#1" {
			perKind[fmt.Sprintf("device %d %s", dev, kind)]++
		}
		r.figures.tasks++
		r.figures.rpcs += attempts
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(byKey) != faultResults {
		t.Errorf("diagnostics for %d measurements, want %d", len(byKey), faultResults)
	}
	for k, tasks := range byKey {
		seen := map[string]bool{}
		for i, tk := range tasks {
			if seen[tk.attempt] {
				t.Errorf("device %d %s iteration %s: attempt %s enqueued twice: %v", k.device, k.direction, k.iter, tk.attempt, tasks)
			}
			seen[tk.attempt] = true
			if i < len(tasks)-1 && tk.state == "done" {
				t.Errorf("device %d %s iteration %s: a diagnostic after a done one: %v", k.device, k.direction, k.iter, tasks)
			}
		}
		r.figures.retried += len(tasks) - 1
	}
	if len(perKind) != faultDevices*faultDirections {
		t.Errorf("diagnostics of %d device and kind pairs, want %d", len(perKind), faultDevices*faultDirections)
	}
	for dk, n := range perKind {
		if n != faultIterations {
			t.Errorf("%s: %d first diagnostics for %d iterations", dk, n, faultIterations)
		}
	}
}

// dumpUnfinished logs what the executor left open: the devices not DONE
// with their measurements and the task each one waits on, to tell a bug
// report where the chain stopped.
func dumpUnfinished(t *testing.T, db *sqlstore.DB, run int64) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT d.cpe_id, d.serial, d.state, d.reason, d.seq,
		COALESCE(m.direction, ''), COALESCE(m.iteration, 0), COALESCE(m.state, ''), COALESCE(m.attempts, 0), COALESCE(m.transaction_id, 0),
		COALESCE(tk.id, 0), COALESCE(tk.state, ''), COALESCE(tk.phase, ''), COALESCE(tk.attempts, 0), COALESCE(tk.fault_string, '')
		FROM acs_campaign_devices d
		LEFT JOIN acs_campaign_measurements m ON m.activation_id = d.activation_id AND m.cpe_id = d.cpe_id AND m.state <> 'done'
		LEFT JOIN acs_tasks tk ON tk.transaction_id = m.transaction_id
		WHERE d.activation_id = ? AND d.state <> 'DONE' ORDER BY d.cpe_id`, run)
	if err != nil {
		t.Errorf("reading the unfinished devices: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var cpe, seq, txn, task int64
		var iter, mAttempts, tAttempts int
		var serial, dState, reason, dir, mState, tState, phase, fault string
		if err := rows.Scan(&cpe, &serial, &dState, &reason, &seq, &dir, &iter, &mState, &mAttempts, &txn, &task, &tState, &phase, &tAttempts, &fault); err != nil {
			t.Errorf("reading the unfinished devices: %v", err)
			return
		}
		t.Logf("unfinished: device %d %s %s/%s seq %d; measurement %s #%d %s attempts %d txn %d; task %d %s phase %q attempts %d fault %q",
			cpe, serial, dState, reason, seq, dir, iter, mState, mAttempts, txn, task, tState, phase, tAttempts, fault)
	}
}

// checkDuckDB reads the run's rows from the result store's file: each
// natural key once, none missing.
func (r *faultRig) checkDuckDB() {
	t := r.t
	store, err := results.OpenDuckDB(filepath.Join(r.dataDir, results.DuckDBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.Rows(context.Background(), r.run)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, row := range rows {
		keys[row.NaturalKey()] = true
	}
	r.figures.duckRows, r.figures.duckKeys = len(rows), len(keys)
	if len(rows) != faultResults || len(keys) != faultResults {
		t.Errorf("DuckDB holds %d rows with %d distinct keys, want %d once each", len(rows), len(keys), faultResults)
	}
}

// poll is testutil.Eventually at a pace that does not load the processes
// under test: each check reads the result store.
func poll(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	first := true
	testutil.Eventually(t, within, what, func() bool {
		if !first {
			time.Sleep(250 * time.Millisecond) // the poll interval
		}
		first = false
		return cond()
	})
}
