//! The customer part of a lead or a booking: how names and contact points are
//! checked and cleaned, and the consent rules that decide which contact points
//! reach the dealership. `leads.create` and `service.book_appointment` both
//! read them here.

pub mod consent;
mod notice;
pub mod text;

pub use consent::{ConsentGrant, consent_record};
pub use notice::{Warning, WithheldContactPoint};

use crate::tools::Check;

/// The customer's names are not blank and plain text on one line, and an
/// e-mail (well formed) and/or a phone is given (AAP: at least one); problems
/// point into `/customer`.
pub(crate) fn check_contact(
    [first_name, last_name]: [&str; 2],
    email: Option<&str>,
    phone: Option<&str>,
    check: &mut Check<'_>,
) {
    for (at, name) in [
        ("/customer/first_name", first_name),
        ("/customer/last_name", last_name),
    ] {
        text::check_required_line(check, at, name);
    }
    if let Some(email) = email {
        text::check_line(check, "/customer/email", email);
    }
    if email.is_none() && phone.is_none() {
        check.problems.push(
            "/customer",
            "give an email or a phone (AAP: at least one is required)",
        );
    }
    if email.is_some_and(|e| e.trim().parse::<lettre::Address>().is_err()) {
        check
            .problems
            .push("/customer/email", "is not an e-mail address");
    }
}

/// A customer's name and e-mail as they are stored and sent: trimmed, a blank
/// e-mail dropped. Each tool cleans its customer once, before anything reads it.
pub fn clean_contact(first_name: &mut String, last_name: &mut String, email: &mut Option<String>) {
    text::clean_line(first_name);
    text::clean_line(last_name);
    text::clean_optional_line(email);
}
