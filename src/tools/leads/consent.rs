//! AAP consent rules for a lead (and, with their own scope, for a service
//! booking). A missing grant, or a contact channel the
//! grant does not allow, is `leads.consent_required` (AAP
//! CONTACT_CONSENT_REQUIRED); a grant that is malformed, expired, dated in the
//! future or scoped to something else is `leads.invalid_consent` (AAP
//! INVALID_CONSENT). Every problem with the grant is listed at once.

use chrono::{DateTime, Utc};

use super::args::CreateArgs;
use crate::contract::error::ToolError;
use crate::tools::customer::consent::{check_channels, check_grant};

/// The only scope AAP v1.0 defines for `lead.submit`.
pub const LEAD_SCOPE: &str = "lead_submission";

/// Checks the consent of `args` as of `now`.
pub fn check(args: &CreateArgs, now: DateTime<Utc>) -> Result<(), ToolError> {
    let grant = check_grant(args.consent.as_ref(), LEAD_SCOPE, now)?;
    let c = &args.customer;
    check_channels(
        grant,
        c.email.is_some(),
        c.phone.is_some(),
        c.preferred_contact,
    )
}
