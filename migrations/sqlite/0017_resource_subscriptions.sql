-- resources/subscribe of clients of the initialize era over stateless HTTP
-- (issue 28): bound to the principal, not a session, so the GET stream that
-- tells them of updates may be on any replica. At most 256 per principal
-- (the oldest give way); `created_at` is RFC 3339 UTC; `after_sequence` is
-- the dealership's event head when subscribed: updates are told from there.
CREATE TABLE resource_subscriptions (
    principal      TEXT NOT NULL,
    uri            TEXT NOT NULL,
    after_sequence BIGINT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (principal, uri)
);
