-- Covering index of the campaign service's fleet counts (schema.md): a
-- count grouped by model, online and domain reads the index alone. It
-- replaces the single-column model index, which is its prefix.
CREATE INDEX acs_devices_model_online ON acs_devices (product_class_id, online, domain_id);
DROP INDEX acs_devices_model;
