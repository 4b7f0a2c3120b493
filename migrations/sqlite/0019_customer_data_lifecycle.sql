-- The customer data lifecycle (issue 34): customer data sealed at rest,
-- found again by keyed hashes, kept for a configured time, erasable.
--
-- `sealed_with` names the [store.encryption] key that sealed a row's
-- customer data, or is 'plain' (written without keys); NULL marks a row
-- written before this migration, which the background reseal brings up to
-- date. `identity` (sealed JSON) holds what the hashes are made from, so a
-- key rotation can hash again: the customer's e-mail and phone and, for a
-- lead, its duplicate fingerprint's material. `contact_email` and
-- `contact_phone` are keyed hashes of the customer's contact points: erasure
-- finds a customer's records by them, never by plaintext.
ALTER TABLE leads ADD COLUMN identity TEXT;
ALTER TABLE leads ADD COLUMN contact_email TEXT;
ALTER TABLE leads ADD COLUMN contact_phone TEXT;
ALTER TABLE leads ADD COLUMN sealed_with TEXT;
-- When the lead's details went ([retention] leads); what proves the
-- customer's consent stays until [retention] consent_grants.
ALTER TABLE leads ADD COLUMN minimised_at TEXT;
CREATE INDEX leads_contact_email ON leads (contact_email);
CREATE INDEX leads_contact_phone ON leads (contact_phone);
CREATE INDEX leads_created ON leads (created_at);

ALTER TABLE lead_deliveries ADD COLUMN sealed_with TEXT;
CREATE INDEX lead_deliveries_delivered ON lead_deliveries (delivered_at);
ALTER TABLE lead_submissions ADD COLUMN sealed_with TEXT;

ALTER TABLE service_bookings ADD COLUMN identity TEXT;
ALTER TABLE service_bookings ADD COLUMN contact_email TEXT;
ALTER TABLE service_bookings ADD COLUMN contact_phone TEXT;
ALTER TABLE service_bookings ADD COLUMN sealed_with TEXT;
CREATE INDEX service_bookings_contact_email ON service_bookings (contact_email);
CREATE INDEX service_bookings_contact_phone ON service_bookings (contact_phone);
CREATE INDEX service_bookings_created ON service_bookings (created_at);

CREATE INDEX mirror_units_departed ON mirror_units (state, changed_at);
CREATE INDEX audit_log_principal_at ON audit_log (principal, at);
CREATE INDEX events_by_resource ON events (dealership, resource_kind, resource_id);

-- Every key id that ever sealed a row, with a check value (an HMAC of a
-- fixed text under the key): a process given another key under a known id,
-- or lacking a key not yet retired, refuses to start. A key is retired once
-- no row is sealed with it.
CREATE TABLE sealing_keys (
    key_id      TEXT PRIMARY KEY NOT NULL,
    check_value TEXT NOT NULL,
    added_at    TEXT NOT NULL,
    retired_at  TEXT
);

-- A record that a customer's data was erased, without the erased data:
-- when, by whom, under which reference, and how many rows of each kind.
CREATE TABLE erasures (
    erasure_id   TEXT PRIMARY KEY NOT NULL,
    at           TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    reference    TEXT,
    dealership   TEXT,
    erased       TEXT NOT NULL   -- JSON object: kind -> rows
);
