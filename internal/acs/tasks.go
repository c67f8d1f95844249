package acs

import (
	"encoding/json"
	"time"

	"cpesuite/internal/cwmp"
)

// TaskKind names what a task asks of a CPE.
type TaskKind string

// Task kinds: one per CWMP RPC the ACS issues, plus TR-143 diagnostics,
// which take several RPCs across sessions.
const (
	KindGetParameterValues     TaskKind = "GetParameterValues"
	KindSetParameterValues     TaskKind = "SetParameterValues"
	KindGetParameterNames      TaskKind = "GetParameterNames"
	KindGetParameterAttributes TaskKind = "GetParameterAttributes"
	KindSetParameterAttributes TaskKind = "SetParameterAttributes"
	KindAddObject              TaskKind = "AddObject"
	KindDeleteObject           TaskKind = "DeleteObject"
	KindReboot                 TaskKind = "Reboot"
	KindFactoryReset           TaskKind = "FactoryReset"
	KindDownload               TaskKind = "Download"
	KindUpload                 TaskKind = "Upload"
	KindScheduleInform         TaskKind = "ScheduleInform"
	KindDownloadDiagnostics    TaskKind = "DownloadDiagnostics"
	KindUploadDiagnostics      TaskKind = "UploadDiagnostics"
	KindIPPing                 TaskKind = "IPPing"
)

// TaskKinds lists every kind, for validation and documentation.
var TaskKinds = []TaskKind{
	KindGetParameterValues, KindSetParameterValues, KindGetParameterNames, KindGetParameterAttributes,
	KindSetParameterAttributes, KindAddObject, KindDeleteObject, KindReboot, KindFactoryReset,
	KindDownload, KindUpload, KindScheduleInform, KindDownloadDiagnostics, KindUploadDiagnostics, KindIPPing,
}

// IsDiagnostics reports whether the kind is a TR-143 diagnostic.
func (k TaskKind) IsDiagnostics() bool {
	return k == KindDownloadDiagnostics || k == KindUploadDiagnostics || k == KindIPPing
}

// TaskState is where a task is in its life.
type TaskState string

// Task states. pending and running tasks are "open": they are handed to
// the CPE in the next session, in id order.
const (
	TaskPending TaskState = "pending"
	TaskRunning TaskState = "running"
	TaskDone    TaskState = "done"
	TaskFault   TaskState = "fault"
)

// Task phases of multi-step tasks (diagnostics; Download/Upload waiting
// for TransferComplete).
const (
	PhaseNone       = ""
	PhaseSet        = "set"        // SPV of the diagnostic parameters sent
	PhaseWaiting    = "waiting"    // waiting for 8 DIAGNOSTICS COMPLETE / TransferComplete
	PhaseGetResults = "get"        // GPV of the results sent
	PhaseTransfer   = "transfer"   // Download/Upload accepted, transfer pending
	PhaseSent       = "sent"       // single RPC sent, response pending
	PhaseAwaitBoot  = "await-boot" // Reboot/FactoryReset accepted
)

// Task is one queued RPC (or diagnostic) for one device.
type Task struct {
	ID            int64           `json:"id"`
	TransactionID int64           `json:"transactionId"`
	DeviceID      int64           `json:"deviceId"`
	Kind          TaskKind        `json:"kind"`
	Args          json.RawMessage `json:"args"`
	State         TaskState       `json:"state"`
	Phase         string          `json:"phase,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Fault         *Fault          `json:"fault,omitempty"`
	Attempts      int             `json:"attempts"`
	ConnReqCount  int             `json:"connectionRequests"`
	ConnReqError  string          `json:"connectionRequestError,omitempty"`
	ConnReqAt     *time.Time      `json:"connectionRequestAt,omitempty"`
	CreatedAt     time.Time       `json:"created"`
	UpdatedAt     time.Time       `json:"updated"`
	StartedAt     *time.Time      `json:"started,omitempty"`
	FinishedAt    *time.Time      `json:"finished,omitempty"`
}

// Open reports whether the task still waits for the CPE.
func (t *Task) Open() bool { return t.State == TaskPending || t.State == TaskRunning }

// Fault records why a task failed: a CWMP fault from the CPE (its own code,
// 9000-9899), or an ACS-side reason with one of the FaultCode constants.
type Fault struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// ACS-side fault codes of tasks: TR-069's ACS fault codes (Amendment 6,
// A.5.1), so that every fault a client reads is a CWMP code. openapi.json
// documents which reasons give which code.
const (
	// FaultCodeRequestDenied: the operator cancelled the task, or the CPE
	// answered with another method than the one asked.
	FaultCodeRequestDenied = int(cwmp.FaultRequestDenied) // 8001
	// FaultCodeInternal: the task could not be turned into an RPC, or a
	// diagnostic ended in an error state on the CPE.
	FaultCodeInternal = int(cwmp.FaultInternalError) // 8002
	// FaultCodeInvalidArguments: the CPE's answer was unusable (fields over
	// TR-069's limits, invalid UTF-8, unreadable diagnostic results).
	FaultCodeInvalidArguments = int(cwmp.FaultInvalidArguments) // 8003
	// FaultCodeRetry: the ACS gave up waiting: no answer after the maximum
	// attempts, or no TransferComplete / 8 DIAGNOSTICS COMPLETE within the
	// time-out. Enqueueing the task again may succeed.
	FaultCodeRetry = int(cwmp.FaultRetryRequest) // 8005
)

// NewTask is a task to enqueue.
type NewTask struct {
	DeviceID int64
	Kind     TaskKind
	Args     json.RawMessage
}

// Transaction groups the tasks enqueued by one request.
type Transaction struct {
	ID        int64     `json:"id"`
	Label     string    `json:"label,omitempty"`
	CreatedAt time.Time `json:"created"`
	// State summarises the tasks: pending while any task is open, fault
	// when any failed, done when all succeeded.
	State TaskState `json:"state"`
	Tasks []Task    `json:"tasks"`
}

// Summarise derives the transaction state from its tasks.
func Summarise(tasks []Task) TaskState {
	state := TaskDone
	for _, t := range tasks {
		switch t.State {
		case TaskPending, TaskRunning:
			return TaskPending
		case TaskFault:
			state = TaskFault
		}
	}
	return state
}
