-- Bookings and cancellations are recorded before they reach the scheduler
-- (issue 27): a crash between the scheduler's answer and its record lost the
-- record and its event, and a retry with the same key could book twice. A
-- booking is `sending` from before it is sent until the scheduler's answer
-- is recorded with its event; until then `request` holds it (customer data,
-- dropped when settled) so that it can be sent again the same way, under the
-- same reference, which a scheduler that takes one books once.
ALTER TABLE service_bookings ADD COLUMN state TEXT NOT NULL DEFAULT 'settled';
ALTER TABLE service_bookings ADD COLUMN idempotency_key TEXT;
ALTER TABLE service_bookings ADD COLUMN request TEXT;
-- When a sending booking may be sent again (after the call that sent it has
-- surely ended), by a retry or by the bridge itself.
ALTER TABLE service_bookings ADD COLUMN send_after TEXT;
-- A cancellation sent to the scheduler and not yet recorded.
ALTER TABLE service_bookings ADD COLUMN cancel_sent_at TEXT;
CREATE UNIQUE INDEX service_bookings_key ON service_bookings (dealership, principal, idempotency_key);
CREATE INDEX service_bookings_sending ON service_bookings (state, send_after);
