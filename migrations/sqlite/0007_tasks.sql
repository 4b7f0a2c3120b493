-- A tool call that outlived its inline wait and became an MCP task (the
-- `io.modelcontextprotocol/tasks` extension): the client polls `tasks/get`
-- for it. Bound to the principal that made it and the dealership it ran
-- against; nobody else can see it. A working row is held by the process
-- running the call until `lease_until`, which that process keeps renewing: a
-- row whose lease lapsed belongs to a process that died, and reads as failed.
-- Times are Unix milliseconds.
CREATE TABLE tasks (
    task_id        TEXT    PRIMARY KEY,
    schema_version INTEGER NOT NULL,
    principal      TEXT    NOT NULL,
    dealership     TEXT,
    tool           TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('working', 'completed', 'failed', 'cancelled')),
    status_message TEXT,
    outcome        TEXT,    -- JSON of the domain TaskOutcome, once completed or failed
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL,
    lease_until    BIGINT  NOT NULL,
    expires_at     BIGINT  NOT NULL
);

CREATE INDEX tasks_expiry ON tasks (expires_at);
