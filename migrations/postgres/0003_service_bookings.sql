-- PostgreSQL twin of migrations/sqlite/0003: service bookings.
CREATE TABLE IF NOT EXISTS service_bookings (
    booking_id      TEXT PRIMARY KEY,
    dealership      TEXT NOT NULL,
    principal       TEXT NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT,
    payload_hash    TEXT NOT NULL,
    status          TEXT NOT NULL,
    appointment_id  TEXT,
    consent         TEXT NOT NULL,
    answer          TEXT NOT NULL,
    cancelled_at    TEXT COLLATE "C",
    UNIQUE (dealership, principal, idempotency_key)
);
CREATE INDEX IF NOT EXISTS service_bookings_appointment ON service_bookings (dealership, appointment_id);
