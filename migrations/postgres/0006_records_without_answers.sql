-- PostgreSQL twin of migrations/sqlite/0006: lead submissions and service
-- bookings no longer keep answers, payload hashes or keys. PostgreSQL drops
-- the columns in place (and the UNIQUE constraints that name them) where
-- SQLite had to rebuild the tables.
ALTER TABLE lead_submissions
    DROP COLUMN idempotency_key,
    DROP COLUMN payload_hash,
    DROP COLUMN answer;

ALTER TABLE service_bookings
    DROP COLUMN idempotency_key,
    DROP COLUMN payload_hash,
    DROP COLUMN answer;
