-- PostgreSQL twin of migrations/sqlite/0012: leases on work one process does for all.
CREATE TABLE work_leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    lease_until TEXT COLLATE "C" NOT NULL
);

CREATE INDEX mirror_units_by_change ON mirror_units (dealership, changed_at);
