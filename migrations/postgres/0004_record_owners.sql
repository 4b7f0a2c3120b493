-- PostgreSQL twin of migrations/sqlite/0004: ownership lookups.
CREATE INDEX IF NOT EXISTS lead_submissions_owner ON lead_submissions (dealership, principal, lead_id);
CREATE INDEX IF NOT EXISTS service_bookings_owner ON service_bookings (dealership, appointment_id, principal);
