-- State of the legacy import: one row per kind (SPEED, LATENCY), created
-- here so that the claim is a conditional UPDATE and never an insert race.
-- Times of this service are BIGINT microseconds since the epoch (UTC);
-- values that come from the legacy source (cursor start, watermark, pass
-- cutoff) stay naive text 'YYYY-MM-DD HH:MM:SS.ffffff', the form the source
-- is compared in.
CREATE TABLE fcc_legacy_import (
    kind                     TEXT PRIMARY KEY,
    state                    TEXT NOT NULL,
    run_id                   TEXT,
    heartbeat_us             BIGINT,
    started_us               BIGINT,
    stop_requested           BOOLEAN NOT NULL DEFAULT FALSE,
    batch_size               INTEGER NOT NULL DEFAULT 0,
    zone_id                  TEXT,
    pass_cutoff              TEXT,
    pass_max_id              BIGINT,
    rows_read                BIGINT NOT NULL DEFAULT 0,
    total_row_estimate       BIGINT NOT NULL DEFAULT 0,
    rows_written             BIGINT NOT NULL DEFAULT 0,
    rows_skipped             BIGINT NOT NULL DEFAULT 0,
    rows_late_skipped        BIGINT NOT NULL DEFAULT 0,
    rows_invalid             BIGINT NOT NULL DEFAULT 0,
    bytes_overflow_count     BIGINT NOT NULL DEFAULT 0,
    tier_parse_failed        BIGINT NOT NULL DEFAULT 0,
    status_unknown_count     BIGINT NOT NULL DEFAULT 0,
    properties_missing_count BIGINT NOT NULL DEFAULT 0,
    devices_unresolved       BIGINT NOT NULL DEFAULT 0,
    cursor_ug_id             BIGINT,
    cursor_serial            TEXT,
    cursor_direction         TEXT,
    cursor_started_at        TEXT,
    cursor_result_id         BIGINT NOT NULL DEFAULT 0,
    cursor_iteration         INTEGER,
    watermark_started_before TEXT,
    watermark_result_id      BIGINT NOT NULL DEFAULT 0,
    pending_result_id        BIGINT,
    pending_from_id          BIGINT,
    pending_ug_id            BIGINT,
    last_error               TEXT
);
INSERT INTO fcc_legacy_import (kind, state) VALUES ('SPEED', 'IDLE');
INSERT INTO fcc_legacy_import (kind, state) VALUES ('LATENCY', 'IDLE');

-- One anchor campaign per legacy user group: the unique index lets two
-- passes (or two processes) create it with ON CONFLICT DO NOTHING. NULLs
-- (every campaign that is not an anchor) do not collide.
CREATE UNIQUE INDEX fcc_campaigns_legacy_ug ON fcc_campaigns (legacy_ug_id);
