-- What the CRM last said became of each lead delivered through its API
-- (`[submit_lead]` + `[lead_status]` profiles): a different status at a later
-- read is a `lead.status_changed` event, written in the same transaction.
-- `checked_at` orders the next reads (least recently checked first); times
-- are RFC 3339 UTC text with a fixed width.
CREATE TABLE lead_crm_statuses (
    lead_id        TEXT NOT NULL PRIMARY KEY,
    schema_version INTEGER NOT NULL,
    status         TEXT NOT NULL,
    changed_at     TEXT NOT NULL,
    checked_at     TEXT NOT NULL
);
