-- PostgreSQL twin of migrations/sqlite/0002: leads, their consent audit trail
-- and the outbox. Ids and times that are sorted or compared use COLLATE "C".
CREATE TABLE IF NOT EXISTS leads (
    lead_id      TEXT COLLATE "C" PRIMARY KEY,
    dealership   TEXT NOT NULL,
    created_at   TEXT COLLATE "C" NOT NULL,
    fingerprint  TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    request      TEXT NOT NULL,
    appointment  TEXT
);
CREATE INDEX IF NOT EXISTS leads_duplicates ON leads (dealership, fingerprint, created_at);
CREATE INDEX IF NOT EXISTS leads_by_time ON leads (dealership, created_at, lead_id);

CREATE TABLE IF NOT EXISTS lead_submissions (
    submission_id   TEXT PRIMARY KEY,
    lead_id         TEXT COLLATE "C" NOT NULL REFERENCES leads (lead_id),
    dealership      TEXT NOT NULL,
    principal       TEXT NOT NULL,
    received_at     TEXT COLLATE "C" NOT NULL,
    status          TEXT NOT NULL,
    idempotency_key TEXT,
    payload_hash    TEXT NOT NULL,
    consent         TEXT NOT NULL,
    answer          TEXT NOT NULL,
    UNIQUE (dealership, principal, idempotency_key)
);
CREATE INDEX IF NOT EXISTS lead_submissions_lead ON lead_submissions (lead_id);

CREATE TABLE IF NOT EXISTS lead_deliveries (
    lead_id         TEXT COLLATE "C" PRIMARY KEY REFERENCES leads (lead_id),
    upstream        TEXT NOT NULL,
    channel         TEXT NOT NULL,
    document        TEXT NOT NULL,
    traceparent     TEXT,
    state           TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    lease_until     TEXT COLLATE "C",
    last_attempt_at TEXT COLLATE "C",
    last_error      TEXT,
    delivered_at    TEXT COLLATE "C",
    receipt         TEXT
);
CREATE INDEX IF NOT EXISTS lead_deliveries_due ON lead_deliveries (state, next_attempt_at);
