-- Inbound vendor events: the hash of each body received, so a captured
-- signed push sent again under another event id is refused instead of
-- spending the vendor's quota on another read (issue 27). A body signature
-- covers the body only; an event id or a time is not part of it.
ALTER TABLE inbound_events ADD COLUMN body_hash TEXT;
CREATE UNIQUE INDEX inbound_events_body ON inbound_events (upstream, body_hash);
