package acs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/sqlstore"
)

const taskSelect = `SELECT id, transaction_id, device_id, kind, args, state, phase, result, fault_code, fault_string,
	fault_detail, attempts, conn_req_count, conn_req_error, conn_req_at, created_at, updated_at, started_at, finished_at
	FROM acs_tasks`

func scanTask(sc scanner) (Task, error) {
	var t Task
	var args string
	var result, faultString, faultDetail sql.NullString
	var faultCode sql.NullInt64
	var connAt, started, finished sql.NullTime
	err := sc.Scan(&t.ID, &t.TransactionID, &t.DeviceID, &t.Kind, &args, &t.State, &t.Phase, &result, &faultCode,
		&faultString, &faultDetail, &t.Attempts, &t.ConnReqCount, &t.ConnReqError, &connAt, &t.CreatedAt, &t.UpdatedAt,
		&started, &finished)
	if err != nil {
		return t, err
	}
	t.Args = json.RawMessage(args)
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	if faultCode.Valid || faultString.Valid {
		t.Fault = &Fault{Code: int(faultCode.Int64), Message: faultString.String}
		if faultDetail.Valid && faultDetail.String != "" {
			t.Fault.Detail = json.RawMessage(faultDetail.String)
		}
	}
	t.ConnReqAt, t.StartedAt, t.FinishedAt = nullTime(connAt), nullTime(started), nullTime(finished)
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

func scanTasks(rows *sql.Rows) ([]Task, error) {
	defer rows.Close()
	out := []Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Enqueue stores tasks under a new transaction, atomically.
func (s *Store) Enqueue(ctx context.Context, label string, tasks []NewTask) (Transaction, error) {
	var txn Transaction
	err := s.db.InTx(ctx, func(tx *sql.Tx) (err error) {
		txn, err = s.enqueueTx(ctx, tx, label, tasks)
		return err
	})
	if err != nil {
		return Transaction{}, err
	}
	return txn, nil
}

// enqueueTx is Enqueue inside the caller's transaction, so that the
// campaign executor records which transaction measures what in the same
// commit that creates it.
func (s *Store) enqueueTx(ctx context.Context, tx *sql.Tx, label string, tasks []NewTask) (Transaction, error) {
	if len(tasks) == 0 {
		return Transaction{}, apperr.Invalid("NO_TASKS", "no tasks to enqueue")
	}
	now := time.Now().UTC()
	txn := Transaction{Label: label, CreatedAt: now, State: TaskPending}
	if err := s.txQueryRow(ctx, tx, s.q(`INSERT INTO acs_transactions (label, created_at) VALUES (?, ?) RETURNING id`), label, now).Scan(&txn.ID); err != nil {
		return txn, fmt.Errorf("transaction: %w", err)
	}
	txn.Tasks = make([]Task, 0, len(tasks))
	for _, nt := range tasks {
		args := nt.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		row := s.txQueryRow(ctx, tx, s.q(`INSERT INTO acs_tasks (transaction_id, device_id, kind, args, state, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`), txn.ID, nt.DeviceID, string(nt.Kind), string(args), string(TaskPending), now, now)
		t := Task{TransactionID: txn.ID, DeviceID: nt.DeviceID, Kind: nt.Kind, Args: args, State: TaskPending, CreatedAt: now, UpdatedAt: now}
		if err := row.Scan(&t.ID); err != nil {
			if sqlstore.IsForeignKeyViolation(err) {
				return txn, apperr.NotFound("DEVICE_NOT_FOUND", "device %d not found", nt.DeviceID)
			}
			return txn, fmt.Errorf("task: %w", err)
		}
		txn.Tasks = append(txn.Tasks, t)
	}
	return txn, nil
}

// NextTask returns the device's oldest open task that can move in a
// session, or nil. Tasks waiting for the CPE to report back (a diagnostic
// before 8 DIAGNOSTICS COMPLETE, a transfer before TransferComplete) are
// skipped.
func (s *Store) NextTask(ctx context.Context, deviceID int64) (*Task, error) {
	t, err := scanTask(s.queryRow(ctx, s.q(taskSelect+` WHERE device_id = ? AND state IN ('pending', 'running')
		AND phase NOT IN ('waiting', 'transfer') ORDER BY id LIMIT 1`), deviceID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// OpenTasks returns the device's open tasks in queue order.
func (s *Store) OpenTasks(ctx context.Context, deviceID int64) ([]Task, error) {
	rows, err := s.query(ctx, s.q(taskSelect+` WHERE device_id = ? AND state IN ('pending', 'running') ORDER BY id`), deviceID)
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

// Task returns one task.
func (s *Store) Task(ctx context.Context, id int64) (Task, error) {
	t, err := scanTask(s.queryRow(ctx, s.q(taskSelect+` WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("task", id)
	}
	return t, err
}

// Transaction returns a transaction with its tasks.
func (s *Store) Transaction(ctx context.Context, id int64) (Transaction, error) {
	txn := Transaction{ID: id}
	err := s.queryRow(ctx, s.q(`SELECT label, created_at FROM acs_transactions WHERE id = ?`), id).Scan(&txn.Label, &txn.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return txn, notFound("transaction", id)
	}
	if err != nil {
		return txn, err
	}
	txn.CreatedAt = txn.CreatedAt.UTC()
	rows, err := s.query(ctx, s.q(taskSelect+` WHERE transaction_id = ? ORDER BY id`), id)
	if err != nil {
		return txn, err
	}
	if txn.Tasks, err = scanTasks(rows); err != nil {
		return txn, err
	}
	txn.State = Summarise(txn.Tasks)
	return txn, nil
}

// DeviceTasks lists a device's tasks, newest first.
func (s *Store) DeviceTasks(ctx context.Context, deviceID int64, limit int) ([]Task, error) {
	rows, err := s.query(ctx, s.q(taskSelect+` WHERE device_id = ? ORDER BY id DESC LIMIT ?`), deviceID, limit)
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

// SaveTask persists the mutable fields of t.
func (s *Store) SaveTask(ctx context.Context, t *Task) error {
	return s.saveTask(ctx, s.exec, t)
}

// SaveAnswer stores what a CPE's answer brought in one commit: params
// merged into the device's cache, its periodic interval when the answer
// carried one (periodic >= 0), and the task. Sessions made these three
// commits per answer; a diagnostic has two answers.
func (s *Store) SaveAnswer(ctx context.Context, deviceID int64, params Params, periodic int, t *Task) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		exec := func(ctx context.Context, q string, args ...any) (sql.Result, error) {
			return s.txExec(ctx, tx, q, args...)
		}
		if len(params) > 0 {
			if _, err := exec(ctx, s.mergeParamsQuery(), params.JSON(), time.Now().UTC(), deviceID); err != nil {
				return err
			}
		}
		if periodic >= 0 {
			if _, err := exec(ctx, s.q(periodicQuery), periodic, time.Now().UTC(), deviceID); err != nil {
				return err
			}
		}
		return s.saveTask(ctx, exec, t)
	})
}

type execFunc func(ctx context.Context, query string, args ...any) (sql.Result, error)

func (s *Store) saveTask(ctx context.Context, exec execFunc, t *Task) error {
	t.UpdatedAt = time.Now().UTC()
	var result, faultString, faultDetail any
	var faultCode any
	if len(t.Result) > 0 {
		result = string(t.Result)
	}
	if t.Fault != nil {
		faultCode, faultString = t.Fault.Code, t.Fault.Message
		if len(t.Fault.Detail) > 0 {
			faultDetail = string(t.Fault.Detail)
		}
	}
	var started, finished any
	if t.StartedAt != nil {
		started = t.StartedAt.UTC()
	}
	if t.FinishedAt != nil {
		finished = t.FinishedAt.UTC()
	}
	res, err := exec(ctx, s.q(`UPDATE acs_tasks SET state = ?, phase = ?, result = ?, fault_code = ?, fault_string = ?,
		fault_detail = ?, attempts = ?, updated_at = ?, started_at = ?, finished_at = ? WHERE id = ?`),
		string(t.State), t.Phase, result, faultCode, faultString, faultDetail, t.Attempts, t.UpdatedAt, started, finished, t.ID)
	if err != nil {
		return fmt.Errorf("save task %d: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("task", t.ID)
	}
	return nil
}

// CancelTask ends an open task with an ACS-side fault.
func (s *Store) CancelTask(ctx context.Context, id int64) (Task, error) {
	t, err := s.Task(ctx, id)
	if err != nil {
		return t, err
	}
	if !t.Open() {
		return t, apperr.Conflict("TASK_FINISHED", "task %d is already %s", id, t.State)
	}
	now := time.Now().UTC()
	t.State, t.FinishedAt = TaskFault, &now
	t.Fault = &Fault{Code: FaultCodeRequestDenied, Message: "cancelled by operator"}
	return t, s.SaveTask(ctx, &t)
}

// RecordConnectionRequest notes a connection request attempt on the
// device's open tasks, so a failure is visible on each task it delayed.
func (s *Store) RecordConnectionRequest(ctx context.Context, deviceID int64, at time.Time, failure string) error {
	_, err := s.exec(ctx, s.q(recordConnReqQuery), failure, at.UTC(), deviceID)
	return err
}

const recordConnReqQuery = `UPDATE acs_tasks SET conn_req_count = conn_req_count + 1, conn_req_error = ?, conn_req_at = ?
		WHERE device_id = ? AND state IN ('pending', 'running')`

// recordConnectionRequestOnline is RecordConnectionRequest of a
// successful request and MarkOnline, in one commit.
func (s *Store) recordConnectionRequestOnline(ctx context.Context, deviceID int64, requestAt, contactAt, until time.Time) error {
	return s.db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, s.q(recordConnReqQuery), "", requestAt.UTC(), deviceID); err != nil {
			return err
		}
		_, err := s.txExec(ctx, tx, s.q(markOnlineQuery), true, until.UTC(), contactAt.UTC(), deviceID)
		return err
	})
}

// QueueDepth counts open tasks by state.
func (s *Store) QueueDepth(ctx context.Context) (pending, running int64, err error) {
	rows, err := s.query(ctx, `SELECT state, COUNT(*) FROM acs_tasks WHERE state IN ('pending', 'running') GROUP BY state`)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return 0, 0, err
		}
		if st == string(TaskPending) {
			pending = n
		} else {
			running = n
		}
	}
	return pending, running, rows.Err()
}

// DevicesWithOpenTasks returns the ids of devices that have open tasks of
// the given kinds (all kinds when none given).
func (s *Store) DevicesWithOpenTasks(ctx context.Context, kinds ...TaskKind) ([]int64, error) {
	q := `SELECT DISTINCT device_id FROM acs_tasks WHERE state IN ('pending', 'running')`
	var args []any
	if len(kinds) > 0 {
		q += ` AND kind IN (` + placeholders(len(kinds)) + `)`
		for _, k := range kinds {
			args = append(args, string(k))
		}
	}
	rows, err := s.query(ctx, s.q(q+` ORDER BY device_id`), args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// diagKinds is the SQL list of diagnostic task kinds.
const diagKinds = `('DownloadDiagnostics', 'UploadDiagnostics', 'IPPing')`

// AdvanceDiagnostics makes the device's diagnostics that waited for
// 8 DIAGNOSTICS COMPLETE ready to fetch their results.
func (s *Store) AdvanceDiagnostics(ctx context.Context, deviceID int64) (int64, error) {
	res, err := s.exec(ctx, s.q(`UPDATE acs_tasks SET phase = 'get', updated_at = ?
		WHERE device_id = ? AND state = 'running' AND phase = 'waiting' AND kind IN `+diagKinds), time.Now().UTC(), deviceID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DiagnosticsInFlight counts diagnostics started and not finished.
func (s *Store) DiagnosticsInFlight(ctx context.Context) (int64, error) {
	var n int64
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM acs_tasks WHERE state = 'running' AND kind IN `+diagKinds+` AND phase <> 'sent'`).Scan(&n)
	return n, err
}

// TransferTasks returns the device's transfers waiting for TransferComplete.
func (s *Store) TransferTasks(ctx context.Context, deviceID int64) ([]Task, error) {
	rows, err := s.query(ctx, s.q(taskSelect+` WHERE device_id = ? AND state = 'running' AND phase = 'transfer' ORDER BY id`), deviceID)
	if err != nil {
		return nil, err
	}
	return scanTasks(rows)
}

// ExpireWaiting faults tasks that waited for the CPE (diagnostics,
// transfers) since before cutoff, and returns them.
func (s *Store) ExpireWaiting(ctx context.Context, cutoff time.Time) ([]Task, error) {
	rows, err := s.query(ctx, s.q(taskSelect+` WHERE state = 'running' AND phase IN ('set', 'waiting', 'get', 'transfer') AND updated_at < ? ORDER BY id`), cutoff.UTC())
	if err != nil {
		return nil, err
	}
	tasks, err := scanTasks(rows)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	for i := range tasks {
		t := &tasks[i]
		t.State, t.FinishedAt = TaskFault, &now
		t.Fault = &Fault{Code: FaultCodeRetry, Message: "the CPE did not report back within the time-out (phase " + t.Phase + ")"}
		if err := s.SaveTask(ctx, t); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}
