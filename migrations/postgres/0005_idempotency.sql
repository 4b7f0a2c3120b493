-- PostgreSQL twin of migrations/sqlite/0005: the write step's idempotency keys.
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
