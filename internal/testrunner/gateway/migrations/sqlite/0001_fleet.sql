CREATE TABLE gw_stands (
    name        TEXT PRIMARY KEY,
    base_url    TEXT NOT NULL,
    display     TEXT NOT NULL DEFAULT '',
    novnc_url   TEXT NOT NULL DEFAULT '',
    enabled     INTEGER NOT NULL DEFAULT 1,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);

CREATE TABLE gw_profiles (
    name        TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
