-- Task queue: ordered per device, grouped under transactions.

CREATE TABLE acs_transactions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    label      TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE acs_tasks (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id  BIGINT NOT NULL REFERENCES acs_transactions (id),
    device_id       BIGINT NOT NULL REFERENCES acs_devices (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    args            TEXT NOT NULL,
    state           TEXT NOT NULL,
    phase           TEXT NOT NULL DEFAULT '',
    result          TEXT,
    fault_code      INTEGER,
    fault_string    TEXT,
    fault_detail    TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    conn_req_count  INTEGER NOT NULL DEFAULT 0,
    conn_req_error  TEXT NOT NULL DEFAULT '',
    conn_req_at     TIMESTAMP,
    created_at      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP
);
CREATE INDEX acs_tasks_open ON acs_tasks (device_id, id) WHERE state IN ('pending', 'running');
CREATE INDEX acs_tasks_transaction ON acs_tasks (transaction_id);
CREATE INDEX acs_tasks_state ON acs_tasks (state);
