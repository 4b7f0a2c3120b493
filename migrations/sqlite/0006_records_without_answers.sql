-- Idempotency moved to the pipeline's write step (0005): lead submissions and
-- service bookings no longer keep the answer they gave, the payload hash or a
-- key, and a key may be reused once its answer has expired. They keep what
-- they record: who made the lead or booking, when, its status, and the
-- consent the customer gave (the audit trail). Rebuilt, because SQLite cannot
-- drop a NOT NULL or a UNIQUE constraint in place; rows are copied as they are.

CREATE TABLE lead_submissions_v2 (
    submission_id TEXT PRIMARY KEY,
    lead_id       TEXT NOT NULL REFERENCES leads (lead_id),
    dealership    TEXT NOT NULL,
    principal     TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    status        TEXT NOT NULL,   -- received | duplicate
    consent       TEXT NOT NULL    -- the consent grant as recorded (JSON)
);
INSERT INTO lead_submissions_v2 (submission_id, lead_id, dealership, principal, received_at, status, consent)
    SELECT submission_id, lead_id, dealership, principal, received_at, status, consent FROM lead_submissions;
DROP TABLE lead_submissions;
ALTER TABLE lead_submissions_v2 RENAME TO lead_submissions;
CREATE INDEX lead_submissions_lead ON lead_submissions (lead_id);
CREATE INDEX lead_submissions_owner ON lead_submissions (dealership, principal, lead_id);

CREATE TABLE service_bookings_v2 (
    booking_id     TEXT PRIMARY KEY,
    dealership     TEXT NOT NULL,
    principal      TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    status         TEXT NOT NULL,   -- booked | waitlisted
    appointment_id TEXT,            -- the scheduler's id
    consent        TEXT NOT NULL,   -- the consent grant as recorded (JSON)
    cancelled_at   TEXT             -- set by service.cancel_appointment
);
INSERT INTO service_bookings_v2 (booking_id, dealership, principal, created_at, status, appointment_id, consent, cancelled_at)
    SELECT booking_id, dealership, principal, created_at, status, appointment_id, consent, cancelled_at FROM service_bookings;
DROP TABLE service_bookings;
ALTER TABLE service_bookings_v2 RENAME TO service_bookings;
CREATE INDEX service_bookings_appointment ON service_bookings (dealership, appointment_id);
CREATE INDEX service_bookings_owner ON service_bookings (dealership, appointment_id, principal);
