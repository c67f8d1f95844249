-- Campaign executor: the runs the campaign service hands over (ACTIVATE
-- parts, STOP), their frozen fleets, one row per measurement, and the
-- outbox of messages still to publish. A restarted ACS resumes every run
-- that is not finished from these tables. Finished runs are kept.

CREATE TABLE acs_campaign_runs (
    activation_id   BIGINT PRIMARY KEY,
    fcc_test_id     BIGINT NOT NULL,
    command_id      TEXT NOT NULL DEFAULT '',
    test_type       TEXT NOT NULL DEFAULT '',
    parts           INTEGER NOT NULL DEFAULT 0,
    head            TEXT,
    state           TEXT NOT NULL,
    stop_command_id TEXT NOT NULL DEFAULT '',
    stop_reason     TEXT NOT NULL DEFAULT '',
    stopped_at      TIMESTAMP,
    finish_reason   TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP
);
CREATE INDEX acs_campaign_runs_state ON acs_campaign_runs (state);

CREATE TABLE acs_campaign_parts (
    activation_id BIGINT NOT NULL REFERENCES acs_campaign_runs (activation_id),
    part          INTEGER NOT NULL,
    command_id    TEXT NOT NULL,
    received_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (activation_id, part)
);

CREATE TABLE acs_campaign_devices (
    activation_id BIGINT NOT NULL REFERENCES acs_campaign_runs (activation_id),
    cpe_id        BIGINT NOT NULL,
    serial        TEXT NOT NULL,
    protocol      TEXT NOT NULL,
    config_id     BIGINT NOT NULL,
    part          INTEGER NOT NULL,
    idx           INTEGER NOT NULL,
    state         TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    seq           BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (activation_id, cpe_id)
);

CREATE TABLE acs_campaign_measurements (
    activation_id  BIGINT NOT NULL REFERENCES acs_campaign_runs (activation_id),
    cpe_id         BIGINT NOT NULL,
    direction      TEXT NOT NULL,
    iteration      INTEGER NOT NULL,
    state          TEXT NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    failures       INTEGER NOT NULL DEFAULT 0,
    transaction_id BIGINT,
    started_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP,
    status         TEXT NOT NULL DEFAULT '',
    natural_key    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (activation_id, cpe_id, direction, iteration)
);

CREATE TABLE acs_campaign_outbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    activation_id BIGINT NOT NULL,
    queue         TEXT NOT NULL,
    msg_id        TEXT NOT NULL DEFAULT '',
    payload       TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL
);
