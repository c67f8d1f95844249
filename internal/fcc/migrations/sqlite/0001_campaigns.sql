-- Campaign service tables. Runs, outbox rows and audit rows are here from
-- the start so that activation, dispatch and reporting add behaviour, not
-- a schema rewrite.
-- SQLite: AUTOINCREMENT so that ids are never reused after a delete.

CREATE TABLE fcc_campaigns (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_id              BIGINT NOT NULL,
    name                   TEXT NOT NULL,
    type                   TEXT NOT NULL,
    state                  TEXT NOT NULL,
    activation_type        TEXT,
    activation_date        TIMESTAMP,
    only_online_devices    BOOLEAN NOT NULL DEFAULT 0,
    total_test_duration    INTEGER,
    single_test_duration   INTEGER,
    batch_interval         INTEGER,
    failed_test_retries    INTEGER,
    wan_usage_retries      INTEGER,
    request_device_connect BOOLEAN NOT NULL DEFAULT 0,
    reactivation_type      TEXT,
    repeat_every           INTEGER,
    starts_on              TIMESTAMP,
    reactivation_count     INTEGER NOT NULL DEFAULT 0,
    activation_count       INTEGER NOT NULL DEFAULT 0,
    legacy_ug_id           BIGINT,
    version                BIGINT NOT NULL DEFAULT 1,
    created_at             TIMESTAMP NOT NULL,
    created_by             TEXT NOT NULL,
    updated_at             TIMESTAMP NOT NULL,
    updated_by             TEXT NOT NULL
);
CREATE INDEX fcc_campaigns_domain ON fcc_campaigns (domain_id);
CREATE INDEX fcc_campaigns_state ON fcc_campaigns (state);

CREATE TABLE fcc_configs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id      BIGINT NOT NULL REFERENCES fcc_campaigns (id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    manufacturer     TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL DEFAULT '',
    source_type      TEXT NOT NULL,
    condition_id     BIGINT,
    condition_name   TEXT,
    selected_devices TEXT NOT NULL DEFAULT '[]',
    unselected_devices TEXT NOT NULL DEFAULT '[]',
    serials          TEXT NOT NULL DEFAULT '[]',
    device_count     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX fcc_configs_campaign ON fcc_configs (campaign_id, position);

-- Resolved settings: one row per configuration, the half of its type as a
-- JSON object of wire names.
CREATE TABLE fcc_settings (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    config_id BIGINT NOT NULL UNIQUE REFERENCES fcc_configs (id) ON DELETE CASCADE,
    type      TEXT NOT NULL,
    "values"  TEXT NOT NULL
);

-- The frozen fleet: what a save resolved, snapshotted so that activation
-- and reports do not depend on later changes in the ACS.
CREATE TABLE fcc_fleet (
    config_id        BIGINT NOT NULL REFERENCES fcc_configs (id) ON DELETE CASCADE,
    campaign_id      BIGINT NOT NULL,
    cpe_id           BIGINT NOT NULL,
    serial           TEXT NOT NULL,
    model_id         BIGINT,
    manufacturer     TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL DEFAULT '',
    domain_id        BIGINT,
    protocol         TEXT NOT NULL,
    supported_by_acs BOOLEAN NOT NULL,
    PRIMARY KEY (config_id, cpe_id)
);
CREATE INDEX fcc_fleet_campaign ON fcc_fleet (campaign_id, serial);

CREATE TABLE fcc_audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id BIGINT NOT NULL,
    action      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    client_type TEXT NOT NULL DEFAULT '',
    at          TIMESTAMP NOT NULL,
    details     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX fcc_audit_campaign ON fcc_audit (campaign_id, id);

CREATE TABLE fcc_runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_id      BIGINT NOT NULL REFERENCES fcc_campaigns (id),
    run_number       INTEGER NOT NULL,
    state            TEXT NOT NULL,
    reason           TEXT,
    snapshot         TEXT NOT NULL DEFAULT '{}',
    fleet_size       BIGINT NOT NULL DEFAULT 0,
    window_start_at  TIMESTAMP NOT NULL,
    window_end_at    TIMESTAMP,
    acked_at         TIMESTAMP,
    started_at       TIMESTAMP,
    stopped_at       TIMESTAMP,
    finished_at      TIMESTAMP,
    in_flight        BIGINT NOT NULL DEFAULT 0,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    UNIQUE (campaign_id, run_number)
);
CREATE INDEX fcc_runs_state ON fcc_runs (state, window_start_at);

CREATE TABLE fcc_outbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       BIGINT NOT NULL REFERENCES fcc_runs (id),
    command      TEXT NOT NULL,
    payload      TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_sent_at TIMESTAMP,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
CREATE INDEX fcc_outbox_state ON fcc_outbox (state, id);

-- Default settings: domain_id 0 is the global level below every domain.
CREATE TABLE fcc_domain_settings (
    domain_id  BIGINT NOT NULL,
    type       TEXT NOT NULL,
    "values"   TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (domain_id, type)
);

CREATE TABLE fcc_model_capabilities (
    model_id                 BIGINT PRIMARY KEY,
    max_download_connections INTEGER NOT NULL,
    max_upload_connections   INTEGER NOT NULL,
    updated_at               TIMESTAMP NOT NULL
);
