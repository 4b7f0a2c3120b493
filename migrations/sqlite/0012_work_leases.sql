-- Work that one process of a deployment does for all (a dealership's mirror
-- reads, its repair-order watch, a webhook endpoint's deliveries, the event
-- purge), by name: the process holding the lease does it until `lease_until`
-- (RFC 3339 UTC text with a fixed width) and renews it well before; when it
-- stops renewing, another takes the name over.
CREATE TABLE work_leases (
    name        TEXT PRIMARY KEY NOT NULL,
    holder      TEXT NOT NULL,
    lease_until TEXT NOT NULL
);

-- Processes that do not read a dealership's inventory themselves compare
-- their copy with the newest `changed_at` of its stored units.
CREATE INDEX mirror_units_by_change ON mirror_units (dealership, changed_at);
