-- Webhook delivery: one cursor per (endpoint, dealership) over the event log.
-- `delivered_through` is the last sequence the endpoint has (or that was
-- dead-lettered or skipped as a type it does not take); a new endpoint starts
-- at the dealership's head when first seen, so it gets no history. `attempts`
-- and `next_attempt_at` are those of the event after the cursor, so a restart
-- resumes its backoff. `last_error` is an error class, never a response body.
-- Times are RFC 3339 UTC text with a fixed width.
CREATE TABLE webhook_cursors (
    endpoint          TEXT    NOT NULL,
    dealership        TEXT    NOT NULL,
    delivered_through BIGINT  NOT NULL,
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   TEXT,
    last_error        TEXT,
    updated_at        TEXT    NOT NULL,
    PRIMARY KEY (endpoint, dealership)
);

-- Events an endpoint never took within its attempts; its cursor moved past them.
CREATE TABLE webhook_dead_letters (
    endpoint   TEXT    NOT NULL,
    dealership TEXT    NOT NULL,
    sequence   BIGINT  NOT NULL,
    attempts   INTEGER NOT NULL,
    last_error TEXT    NOT NULL,
    dead_at    TEXT    NOT NULL,
    PRIMARY KEY (endpoint, dealership, sequence)
);
