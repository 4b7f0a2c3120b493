-- A lead another agent sent for a customer who already has an equivalent
-- lead within the duplicate window (issue 27): it is the second agent's own
-- record (its id, its consent, its submission) and is not sent to the CRM
-- again; `merged_into` names the lead whose delivery carries it. Only staff
-- see the link; neither agent learns anything of the other's lead.
ALTER TABLE leads ADD COLUMN merged_into TEXT REFERENCES leads (lead_id);
CREATE INDEX leads_merged_into ON leads (merged_into);
