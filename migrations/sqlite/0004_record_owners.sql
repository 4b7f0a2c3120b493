-- Records reached by id belong to the principal that made them (TOOLSET.md,
-- "Who owns a record"): leads.get/leads.list filter on the submitting
-- principal, service.cancel_appointment on the booking principal.
CREATE INDEX IF NOT EXISTS lead_submissions_owner ON lead_submissions (dealership, principal, lead_id);
CREATE INDEX IF NOT EXISTS service_bookings_owner ON service_bookings (dealership, appointment_id, principal);
