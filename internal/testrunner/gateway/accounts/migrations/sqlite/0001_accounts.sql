-- Accounts, sessions and the audit log of the test-runner gateway.
-- Times are Unix milliseconds in BIGINT columns: one representation on
-- every engine, no time-zone conversion on the way in or out.
CREATE TABLE gw_users (
    username_key  TEXT    PRIMARY KEY,
    username      TEXT    NOT NULL,
    role          TEXT    NOT NULL,
    stand         TEXT    NOT NULL DEFAULT '',
    password_hash TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL
);

-- token_hash is the hex SHA-256 of the bearer token; the token itself is
-- never stored.
CREATE TABLE gw_tokens (
    token_hash   TEXT   PRIMARY KEY,
    username_key TEXT   NOT NULL REFERENCES gw_users (username_key) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX gw_tokens_user ON gw_tokens (username_key);
CREATE INDEX gw_tokens_expires ON gw_tokens (expires_at);

CREATE TABLE gw_activity (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          BIGINT  NOT NULL,
    username    TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    target      TEXT    NOT NULL DEFAULT '',
    detail      TEXT    NOT NULL DEFAULT '',
    client_addr TEXT    NOT NULL DEFAULT '',
    success     INTEGER NOT NULL
);
CREATE INDEX gw_activity_at ON gw_activity (at, id);
CREATE INDEX gw_activity_username ON gw_activity (username, at, id);
CREATE INDEX gw_activity_action ON gw_activity (action, at, id);
