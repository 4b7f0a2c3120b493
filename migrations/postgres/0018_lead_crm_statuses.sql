-- PostgreSQL twin of migrations/sqlite/0018: the CRM's last status per lead.
CREATE TABLE lead_crm_statuses (
    lead_id        TEXT   NOT NULL PRIMARY KEY,
    schema_version BIGINT NOT NULL,
    status         TEXT   NOT NULL,
    changed_at     TEXT   COLLATE "C" NOT NULL,
    checked_at     TEXT   COLLATE "C" NOT NULL
);
