-- Leads taken through leads.create, their consent audit trail and the outbox
-- that delivers them to the dealership's CRM. Times are RFC 3339 UTC text with
-- a fixed width, so they compare and sort as strings (in SQLite and PostgreSQL).

-- One row per lead sent (or to be sent) to the CRM. Customer data lives only in
-- `request` and `document`: never in logs, audit rows or error messages.
CREATE TABLE IF NOT EXISTS leads (
    lead_id      TEXT PRIMARY KEY,
    dealership   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,   -- hash of customer + vehicles + appointment type (duplicates)
    source_agent TEXT NOT NULL,
    request      TEXT NOT NULL,   -- the lead as accepted (JSON)
    appointment  TEXT             -- the appointment outcome (JSON)
);
CREATE INDEX IF NOT EXISTS leads_duplicates ON leads (dealership, fingerprint, created_at);
CREATE INDEX IF NOT EXISTS leads_by_time ON leads (dealership, created_at, lead_id);

-- Every accepted submission, duplicates included: the idempotency record and the
-- full consent grant, kept as the audit trail of what the customer agreed to.
CREATE TABLE IF NOT EXISTS lead_submissions (
    submission_id   TEXT PRIMARY KEY,
    lead_id         TEXT NOT NULL REFERENCES leads (lead_id),
    dealership      TEXT NOT NULL,
    principal       TEXT NOT NULL,
    received_at     TEXT NOT NULL,
    status          TEXT NOT NULL,   -- received | duplicate
    idempotency_key TEXT,
    payload_hash    TEXT NOT NULL,
    consent         TEXT NOT NULL,   -- the ConsentGrant exactly as sent (JSON)
    answer          TEXT NOT NULL,   -- the leads.create answer as first given (JSON)
    UNIQUE (dealership, principal, idempotency_key)
);
CREATE INDEX IF NOT EXISTS lead_submissions_lead ON lead_submissions (lead_id);

-- The outbox: one delivery per lead. `attempts` counts claims, so an attempt cut
-- short by a crash still makes the next one a `resend` with the same ADF <id>.
CREATE TABLE IF NOT EXISTS lead_deliveries (
    lead_id         TEXT PRIMARY KEY REFERENCES leads (lead_id),
    upstream        TEXT NOT NULL,
    channel         TEXT NOT NULL,   -- adf_http | adf_email
    document        TEXT NOT NULL,   -- the ADF document as first rendered
    traceparent     TEXT,            -- the accepting call's trace, continued by every attempt
    state           TEXT NOT NULL,   -- pending | delivered | failed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_until     TEXT,
    last_attempt_at TEXT,
    last_error      TEXT,            -- an error class, never an upstream body
    delivered_at    TEXT,
    receipt         TEXT
);
CREATE INDEX IF NOT EXISTS lead_deliveries_due ON lead_deliveries (state, next_attempt_at);
