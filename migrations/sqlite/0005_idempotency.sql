-- One row per (dealership, principal, tool, key): the turn of a write that
-- must happen at most once per key, and the answer it gave. A running row is
-- a claim held until `lease_until` (a process that died mid-call lets it
-- lapse); a done row replays its answer until `expires_at`. Shared by every
-- process on this store, so the rule holds across replicas.
CREATE TABLE idempotency (
    dealership   TEXT    NOT NULL,
    principal    TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('running', 'done')),
    answer       TEXT,
    lease_until  BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    PRIMARY KEY (dealership, principal, tool, key)
);

CREATE INDEX idempotency_expiry ON idempotency (expires_at);
