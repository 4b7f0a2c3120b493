-- The last status the bridge saw for each repair order it read (through the
-- service.*_repair_order* tools) or watches ([events] repair_order_watch):
-- a different status at a later read is a `repair_order.updated` event,
-- written in the same transaction as the new status. The first sight of an
-- order is its baseline and makes no event. `changed_at` is RFC 3339 UTC
-- text with a fixed width.
CREATE TABLE repair_order_statuses (
    dealership     TEXT NOT NULL,
    ro_number      TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    status         TEXT NOT NULL,
    changed_at     TEXT NOT NULL,
    PRIMARY KEY (dealership, ro_number)
);
