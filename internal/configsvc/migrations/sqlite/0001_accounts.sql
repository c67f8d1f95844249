-- Times are Unix milliseconds in BIGINT columns: one representation on all
-- three engines, no time-zone conversions on the way in or out.
CREATE TABLE cfg_users (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    username             TEXT    NOT NULL,
    username_key         TEXT    NOT NULL UNIQUE,
    email                TEXT,
    locale               TEXT,
    role                 TEXT    NOT NULL,
    password_hash        TEXT    NOT NULL,
    must_change_password INTEGER NOT NULL DEFAULT 0,
    created_at           BIGINT  NOT NULL,
    updated_at           BIGINT  NOT NULL
);

CREATE TABLE cfg_deletion_requests (
    user_id       BIGINT  PRIMARY KEY REFERENCES cfg_users (id) ON DELETE CASCADE,
    token         TEXT    NOT NULL UNIQUE,
    requested_by  BIGINT  NOT NULL,
    otp_hash      TEXT,
    otp_required  INTEGER NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    attempt_limit INTEGER NOT NULL,
    expires_at    BIGINT  NOT NULL,
    created_at    BIGINT  NOT NULL
);

CREATE TABLE cfg_refresh_tokens (
    jti        TEXT    PRIMARY KEY,
    family     TEXT    NOT NULL,
    user_id    BIGINT  NOT NULL REFERENCES cfg_users (id) ON DELETE CASCADE,
    expires_at BIGINT  NOT NULL,
    used_at    BIGINT,
    revoked    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX cfg_refresh_tokens_family ON cfg_refresh_tokens (family);
CREATE INDEX cfg_refresh_tokens_user ON cfg_refresh_tokens (user_id);

CREATE TABLE cfg_revoked_tokens (
    jti        TEXT   PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

CREATE TABLE cfg_audit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    occurred_at BIGINT  NOT NULL,
    actor       TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    target      TEXT,
    outcome     TEXT    NOT NULL,
    details     TEXT,
    client_ip   TEXT,
    request_id  TEXT
);
CREATE INDEX cfg_audit_events_occurred ON cfg_audit_events (occurred_at);

CREATE TABLE cfg_product_class_groups (
    name            TEXT   PRIMARY KEY,
    description     TEXT,
    product_classes TEXT   NOT NULL,
    updated_at      BIGINT NOT NULL
);
