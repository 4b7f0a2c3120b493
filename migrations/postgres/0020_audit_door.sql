-- Which front door a call came in by (`mcp`, `aap` or `kit`), and for a
-- request refused at the front door, the door it was refused at. NULL for
-- rows written before this migration, and for refusals on the operator,
-- OAuth and webhook routes, which are no agent's door.
ALTER TABLE audit_log ADD COLUMN door TEXT;
