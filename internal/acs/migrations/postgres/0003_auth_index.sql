-- Per-device CPE credentials are looked up by username on every session start.
CREATE INDEX acs_devices_auth_username ON acs_devices (auth_username) WHERE auth_username <> '';
