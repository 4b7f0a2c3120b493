-- One record per tool call, written by the dispatch pipeline.
-- Argument *shape* only (key paths, never values): no customer data here.
CREATE TABLE IF NOT EXISTS audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT    NOT NULL,   -- RFC 3339, UTC
    trace_id    TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    dealership  TEXT,
    tool        TEXT    NOT NULL,
    adapter     TEXT,
    outcome     TEXT    NOT NULL,   -- "ok" or the error code
    latency_us  INTEGER NOT NULL,
    cache_hit   INTEGER NOT NULL,   -- 0 or 1
    arg_shape   TEXT    NOT NULL    -- JSON array of key paths
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);
CREATE INDEX IF NOT EXISTS audit_log_dealership_at ON audit_log (dealership, at);
