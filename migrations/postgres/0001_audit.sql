-- PostgreSQL twin of migrations/sqlite/0001 (same version, same schema).
-- Every integer is BIGINT: the store binds integers as 64-bit. Times are
-- RFC 3339 UTC text with a fixed width, compared byte by byte (COLLATE "C"),
-- as SQLite compares them.
CREATE TABLE IF NOT EXISTS audit_log (
    id          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TEXT    COLLATE "C" NOT NULL,
    trace_id    TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    dealership  TEXT,
    tool        TEXT    NOT NULL,
    adapter     TEXT,
    outcome     TEXT    NOT NULL,   -- "ok" or the error code
    latency_us  BIGINT  NOT NULL,
    cache_hit   BIGINT  NOT NULL,   -- 0 or 1
    arg_shape   TEXT    NOT NULL    -- JSON array of key paths
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);
CREATE INDEX IF NOT EXISTS audit_log_dealership_at ON audit_log (dealership, at);
