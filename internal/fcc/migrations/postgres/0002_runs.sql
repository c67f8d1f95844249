-- Activation, runs and the outbox (issue 20). The campaign row carries its
-- next due run (the scheduler's work list); a run freezes the stop grace it
-- was created with; outbox rows know their part, their lease and their ack.

ALTER TABLE fcc_campaigns ADD COLUMN next_run_at TIMESTAMPTZ;
ALTER TABLE fcc_campaigns ADD COLUMN next_run_number INTEGER;
-- The first run of the current activation and its window start: the
-- reactivation schedule counts from them.
ALTER TABLE fcc_campaigns ADD COLUMN cycle_first_run INTEGER;
ALTER TABLE fcc_campaigns ADD COLUMN cycle_started_at TIMESTAMPTZ;
-- A stop request ends the activation: no further reactivation.
ALTER TABLE fcc_campaigns ADD COLUMN stop_requested BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX fcc_campaigns_due ON fcc_campaigns (next_run_at);

ALTER TABLE fcc_runs ADD COLUMN stop_grace_sec BIGINT NOT NULL DEFAULT 900;
CREATE INDEX fcc_runs_campaign ON fcc_runs (campaign_id, run_number);

ALTER TABLE fcc_outbox ADD COLUMN command_id TEXT;
ALTER TABLE fcc_outbox ADD COLUMN part INTEGER NOT NULL DEFAULT 1;
ALTER TABLE fcc_outbox ADD COLUMN parts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE fcc_outbox ADD COLUMN lease_owner TEXT;
ALTER TABLE fcc_outbox ADD COLUMN lease_until TIMESTAMPTZ;
ALTER TABLE fcc_outbox ADD COLUMN acked_at TIMESTAMPTZ;
ALTER TABLE fcc_outbox ADD COLUMN ack_status TEXT;
ALTER TABLE fcc_outbox ADD COLUMN abandon_reason TEXT;
CREATE INDEX fcc_outbox_run ON fcc_outbox (run_id, part);
CREATE INDEX fcc_outbox_command ON fcc_outbox (command_id, part);

CREATE TABLE fcc_run_devices (
    run_id     BIGINT NOT NULL REFERENCES fcc_runs (id),
    cpe_id     BIGINT NOT NULL,
    serial     TEXT NOT NULL,
    state      TEXT NOT NULL,
    reason     TEXT,
    seq        BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, cpe_id)
);
CREATE INDEX fcc_run_devices_state ON fcc_run_devices (run_id, state);
