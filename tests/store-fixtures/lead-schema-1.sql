-- A lead as the bridge stored it before lead records were versioned
-- (migrations 0001-0004): `request` is the leads.create arguments as accepted,
-- and the submission keeps its idempotency key, payload hash and answer.
INSERT INTO leads (lead_id, dealership, created_at, fingerprint, source_agent, request, appointment)
VALUES (
    'ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f', 'acme', '2026-11-02T15:04:05.000000Z',
    'fingerprint-of-the-old-lead', 'test-agent',
    '{"dealership_id":"acme","customer":{"first_name":"Dana","last_name":"Whitfield","email":"dana@example.com","phone":"+15125550188","preferred_contact":"email"},"consent":{"granted_at":"2026-11-02T15:00:00Z","allowed_channels":["email","sms"],"consent_text":"You may contact me about this vehicle.","scope":["lead_submission"]},"vehicle_of_interest":{"vin":"1HGCV1F34LA000123","year":2021,"make":"Honda","model":"Civic","condition":"used","mileage":{"value":31000,"unit":"mi"}},"trade_in":{"year":2015,"make":"Ford","model":"Focus","mileage":98000,"condition":"fair"},"message":"Is it still available?","source_agent":"test-agent","idempotency_key":"old-key-1"}',
    '{"appointment_id":"ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f-appt","appointment_type":"test_drive","status":"requested","requested_at":"2026-11-04T10:00:00-06:00"}'
);
INSERT INTO lead_submissions (submission_id, lead_id, dealership, principal, received_at, status, idempotency_key, payload_hash, consent, answer)
VALUES (
    '5e1c0a4b6f0d4c9e8a7b6c5d4e3f2a1b', 'ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f', 'acme', 'agent',
    '2026-11-02T15:04:05.000000Z', 'received', 'old-key-1',
    'a3f1c2d4e5b6a7980123456789abcdef0123456789abcdef0123456789abcdef',
    '{"granted_at":"2026-11-02T15:00:00Z","allowed_channels":["email","sms"],"consent_text":"You may contact me about this vehicle.","scope":["lead_submission"]}',
    '{"lead_id":"ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f","status":"received"}'
);
INSERT INTO lead_deliveries (lead_id, upstream, channel, document, traceparent, state, attempts, next_attempt_at, last_attempt_at, delivered_at, receipt)
VALUES (
    'ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f', 'crm', 'adf_http', '<?xml version="1.0"?><adf/>', NULL,
    'delivered', 1, '2026-11-02T15:04:05.000000Z', '2026-11-02T15:04:06.000000Z',
    '2026-11-02T15:04:06.000000Z', 'crm-receipt-1'
);
