-- PostgreSQL twin of migrations/sqlite/0009: webhook cursors and dead letters.
CREATE TABLE webhook_cursors (
    endpoint          TEXT    NOT NULL,
    dealership        TEXT    COLLATE "C" NOT NULL,
    delivered_through BIGINT  NOT NULL,
    attempts          BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at   TEXT    COLLATE "C",
    last_error        TEXT,
    updated_at        TEXT    COLLATE "C" NOT NULL,
    PRIMARY KEY (endpoint, dealership)
);

CREATE TABLE webhook_dead_letters (
    endpoint   TEXT    NOT NULL,
    dealership TEXT    NOT NULL,
    sequence   BIGINT  NOT NULL,
    attempts   BIGINT  NOT NULL,
    last_error TEXT    NOT NULL,
    dead_at    TEXT    COLLATE "C" NOT NULL,
    PRIMARY KEY (endpoint, dealership, sequence)
);
