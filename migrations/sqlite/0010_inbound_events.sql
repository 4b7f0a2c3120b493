-- Inbound vendor events (upstreams.<id>.inbound_events): the ids already
-- received per upstream, so a redelivered event (vendors deliver at least
-- once) is answered 202 again without another read of the inventory. Rows
-- older than [events] retention are purged. `received_at` is RFC 3339 UTC
-- text with a fixed width.
CREATE TABLE inbound_events (
    upstream    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (upstream, event_id)
);

CREATE INDEX inbound_events_by_time ON inbound_events (received_at);
