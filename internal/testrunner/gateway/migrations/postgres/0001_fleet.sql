CREATE TABLE gw_stands (
    name        TEXT PRIMARY KEY,
    base_url    TEXT NOT NULL,
    display     TEXT NOT NULL DEFAULT '',
    novnc_url   TEXT NOT NULL DEFAULT '',
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE gw_profiles (
    name        TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
