-- Covering indexes of the campaign service's fleet reads (schema.md).
-- (product_class_id, online, domain_id): a count grouped by model, online and
-- domain reads the index alone; it replaces the single-column model index,
-- which is its prefix.
CREATE INDEX acs_devices_model_online ON acs_devices (product_class_id, online, domain_id);
DROP INDEX acs_devices_model;
-- lower(serial) with the columns of a resolved device: a 20,000-serial list
-- is an index-only scan instead of 20,000 random heap reads. It replaces the
-- plain lower(serial) index.
CREATE INDEX acs_devices_serial_ci_cover ON acs_devices (lower(serial))
    INCLUDE (id, serial, product_class_id, domain_id, online, software_version);
DROP INDEX acs_devices_serial_ci;
