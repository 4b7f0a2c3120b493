-- PostgreSQL twin of migrations/sqlite/0007: MCP tasks. Times are Unix milliseconds.
CREATE TABLE tasks (
    task_id        TEXT    PRIMARY KEY,
    schema_version BIGINT  NOT NULL,
    principal      TEXT    NOT NULL,
    dealership     TEXT,
    tool           TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('working', 'completed', 'failed', 'cancelled')),
    status_message TEXT,
    outcome        TEXT,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL,
    lease_until    BIGINT  NOT NULL,
    expires_at     BIGINT  NOT NULL
);

CREATE INDEX tasks_expiry ON tasks (expires_at);
