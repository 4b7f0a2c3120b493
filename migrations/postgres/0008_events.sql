-- PostgreSQL twin of migrations/sqlite/0008: the event log and the inventory
-- mirror. `event_heads` is what orders writers: the upsert that takes a
-- dealership's next sequences locks its row until the transaction ends.
CREATE TABLE events (
    dealership     TEXT    NOT NULL,
    sequence       BIGINT  NOT NULL,
    schema_version BIGINT  NOT NULL,
    event_type     TEXT    NOT NULL,
    resource_kind  TEXT    NOT NULL,
    resource_id    TEXT    NOT NULL,
    owner          TEXT,
    occurred_at    TEXT    COLLATE "C" NOT NULL,
    observed_at    TEXT    COLLATE "C" NOT NULL,
    data           TEXT    NOT NULL,
    PRIMARY KEY (dealership, sequence)
);

CREATE INDEX events_by_time ON events (observed_at);

CREATE TABLE event_heads (
    dealership    TEXT   PRIMARY KEY,
    last_sequence BIGINT NOT NULL
);

CREATE TABLE mirror_units (
    dealership     TEXT    NOT NULL,
    vehicle_id     TEXT    NOT NULL,
    schema_version BIGINT  NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('listed', 'gone')),
    vin            TEXT,
    stock          TEXT,
    vehicle        TEXT,
    changed_at     TEXT    COLLATE "C" NOT NULL,
    PRIMARY KEY (dealership, vehicle_id)
);

CREATE TABLE mirror_syncs (
    dealership      TEXT PRIMARY KEY,
    last_success_at TEXT COLLATE "C" NOT NULL
);
