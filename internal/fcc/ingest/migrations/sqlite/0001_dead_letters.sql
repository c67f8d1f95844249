-- Result rows the ingester could not store in the result store: LATE
-- (arrived after stopped_at + stop-grace), BUFFER_FULL (the in-memory
-- buffer was at svc.fcc.result.queue-capacity) and INVALID (the message
-- broke the wire contract). payload keeps the message bytes as received,
-- so a resend stores exactly what the ACS sent. One row per natural key and
-- reason: parking again after a redelivery changes nothing.
CREATE TABLE fcc_result_dead_letters (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    natural_key   TEXT NOT NULL,
    reason        TEXT NOT NULL,
    activation_id BIGINT,
    detail        TEXT NOT NULL DEFAULT '',
    payload       BLOB NOT NULL,
    parked_at     TIMESTAMP NOT NULL,
    resent_at     TIMESTAMP,
    UNIQUE (natural_key, reason)
);

CREATE INDEX fcc_result_dead_letters_pending ON fcc_result_dead_letters (id)
    WHERE resent_at IS NULL AND reason <> 'INVALID';
