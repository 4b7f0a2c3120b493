-- PostgreSQL twin of migrations/sqlite/0010: inbound vendor event ids.
CREATE TABLE inbound_events (
    upstream    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (upstream, event_id)
);

CREATE INDEX inbound_events_by_time ON inbound_events (received_at);
