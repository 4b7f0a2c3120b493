-- PostgreSQL twin of migrations/sqlite/0011: the last status seen per repair order.
CREATE TABLE repair_order_statuses (
    dealership     TEXT   NOT NULL,
    ro_number      TEXT   NOT NULL,
    schema_version BIGINT NOT NULL,
    status         TEXT   NOT NULL,
    changed_at     TEXT   COLLATE "C" NOT NULL,
    PRIMARY KEY (dealership, ro_number)
);
