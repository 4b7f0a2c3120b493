-- Keys the bridge makes for itself, once per store, so every replica on the
-- store and every restart signs alike: `event_cursors` signs events.list
-- cursors (issue 27), which must resume after a restart and on any replica.
-- `key` is hex.
CREATE TABLE bridge_keys (
    name TEXT PRIMARY KEY NOT NULL,
    key  TEXT NOT NULL
);
