-- Change events (AutomotiveMCP Level 3): one ordered log per dealership.
-- `sequence` is gap-free and increasing per dealership: it is taken from
-- `event_heads` inside the transaction that records the change, so events
-- commit in sequence order and a reader resuming after sequence N never skips
-- one committed later with a smaller number. `data` is PII-free JSON; `owner`
-- is the principal whose record (lead, booking) the event is about, for
-- scoping. Times are RFC 3339 UTC text with a fixed width.
CREATE TABLE events (
    dealership     TEXT    NOT NULL,
    sequence       BIGINT  NOT NULL,
    schema_version INTEGER NOT NULL,
    event_type     TEXT    NOT NULL,
    resource_kind  TEXT    NOT NULL,
    resource_id    TEXT    NOT NULL,
    owner          TEXT,
    occurred_at    TEXT    NOT NULL,
    observed_at    TEXT    NOT NULL,
    data           TEXT    NOT NULL,
    PRIMARY KEY (dealership, sequence)
);

CREATE INDEX events_by_time ON events (observed_at);

-- The last sequence given out per dealership (kept when old events are purged).
CREATE TABLE event_heads (
    dealership    TEXT   PRIMARY KEY,
    last_sequence BIGINT NOT NULL
);

-- The inventory mirror: every unit last seen in each dealership's inventory,
-- so that reads are answered locally and a restart diffs the next sync against
-- what was seen before it (no change is lost or reported twice). Only units
-- that changed are written by a sync. `vehicle` is JSON of the domain Vehicle.
CREATE TABLE mirror_units (
    dealership     TEXT    NOT NULL,
    vehicle_id     TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('listed', 'gone')),
    vin            TEXT,
    stock          TEXT,
    vehicle        TEXT,   -- while listed
    changed_at     TEXT    NOT NULL,
    PRIMARY KEY (dealership, vehicle_id)
);

-- Per dealership: when its inventory was last read successfully.
CREATE TABLE mirror_syncs (
    dealership      TEXT PRIMARY KEY,
    last_success_at TEXT NOT NULL
);
