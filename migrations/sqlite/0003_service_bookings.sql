-- Service appointments booked through service.book_appointment: the
-- idempotency record and the consent audit trail. Times are RFC 3339 UTC text
-- with a fixed width, so they compare and sort as strings (in SQLite and
-- PostgreSQL). Customer data is not kept here: the scheduler holds the booking;
-- the bridge keeps what it answered and what the customer agreed to.

CREATE TABLE IF NOT EXISTS service_bookings (
    booking_id      TEXT PRIMARY KEY,
    dealership      TEXT NOT NULL,
    principal       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    idempotency_key TEXT,
    payload_hash    TEXT NOT NULL,
    status          TEXT NOT NULL,   -- booked | waitlisted
    appointment_id  TEXT,            -- the scheduler's id
    consent         TEXT NOT NULL,   -- the ConsentGrant exactly as sent (JSON)
    answer          TEXT NOT NULL,   -- the service.book_appointment answer as first given (JSON)
    cancelled_at    TEXT,            -- set by service.cancel_appointment
    UNIQUE (dealership, principal, idempotency_key)
);
CREATE INDEX IF NOT EXISTS service_bookings_appointment ON service_bookings (dealership, appointment_id);
