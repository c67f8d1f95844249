-- Device tables. They are a contract: the campaign service reads them
-- directly (see internal/acs/schema.md).
-- SQLite: AUTOINCREMENT so that ids (cpe ids) are never reused after a delete.

CREATE TABLE acs_protocols (
    id               SMALLINT PRIMARY KEY,
    name             TEXT NOT NULL UNIQUE,
    supported_by_acs BOOLEAN NOT NULL
);
INSERT INTO acs_protocols (id, name, supported_by_acs) VALUES
    (1, 'TR069', 1), (2, 'TR181', 1), (3, 'USP', 0), (4, 'UNKNOWN', 0);

CREATE TABLE acs_domains (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id  BIGINT REFERENCES acs_domains (id),
    name       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX acs_domains_parent ON acs_domains (parent_id);
INSERT INTO acs_domains (id, parent_id, name) VALUES (1, NULL, 'Root');

CREATE TABLE acs_manufacturers (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE acs_product_classes (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    manufacturer_id BIGINT REFERENCES acs_manufacturers (id),
    oui             TEXT NOT NULL,
    product_class   TEXT NOT NULL,
    model_name      TEXT NOT NULL DEFAULT '',
    protocol_id     SMALLINT REFERENCES acs_protocols (id),
    created_at      TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (oui, product_class)
);
CREATE INDEX acs_product_classes_manufacturer ON acs_product_classes (manufacturer_id);

CREATE TABLE acs_devices (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    oui               TEXT NOT NULL,
    product_class     TEXT NOT NULL,
    serial            TEXT NOT NULL,
    product_class_id  BIGINT REFERENCES acs_product_classes (id),
    domain_id         BIGINT REFERENCES acs_domains (id),
    software_version  TEXT NOT NULL DEFAULT '',
    hardware_version  TEXT NOT NULL DEFAULT '',
    cwmp_version      TEXT NOT NULL DEFAULT '',
    data_model        TEXT NOT NULL DEFAULT '',
    conn_req_url      TEXT NOT NULL DEFAULT '',
    conn_req_username TEXT NOT NULL DEFAULT '',
    conn_req_password TEXT NOT NULL DEFAULT '',
    auth_username     TEXT NOT NULL DEFAULT '',
    auth_password     TEXT NOT NULL DEFAULT '',
    external_ip       TEXT NOT NULL DEFAULT '',
    periodic_interval INTEGER NOT NULL DEFAULT 0,
    params            TEXT NOT NULL DEFAULT '{}',
    last_events       TEXT NOT NULL DEFAULT '',
    last_inform_at    TIMESTAMP,
    last_boot_at      TIMESTAMP,
    last_contact_at   TIMESTAMP,
    online            BOOLEAN NOT NULL DEFAULT 0,
    online_until      TIMESTAMP,
    created_at        TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at        TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (oui, product_class, serial)
);
CREATE INDEX acs_devices_serial_ci ON acs_devices (lower(serial));
CREATE INDEX acs_devices_model ON acs_devices (product_class_id);
CREATE INDEX acs_devices_domain ON acs_devices (domain_id);
CREATE INDEX acs_devices_online ON acs_devices (online, online_until);

CREATE TABLE acs_conditions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    domain_id  BIGINT REFERENCES acs_domains (id),
    criteria   TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX acs_conditions_domain ON acs_conditions (domain_id);
