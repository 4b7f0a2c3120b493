//! The faker of recorded exchanges: customer data replaced by consistent
//! fakes, credentials removed, so a fixture set can be attached to a bug
//! report. Pure functions of a [`Faker`] (which holds the set's secret key)
//! and the data.
//!
//! What goes:
//! - values under names of customer data ([`keys`]): names, e-mail addresses,
//!   phone numbers, street addresses, cities and postal codes, wherever a JSON
//!   key, an XML element or attribute, a CSV header, a form field or a query
//!   parameter names them, unless a business or a thing holds them (a
//!   dealership's address, a colour's name);
//! - e-mail addresses and phone numbers anywhere in any text;
//! - credentials: values under names like password, secret, token, API key
//!   (`REDACTED`), and request headers that carry them (not saved at all).
//!
//! What stays: everything else, vehicle data included (a VIN, a make and a
//! model are the vehicle's, not its owner's).

mod fake;
mod form;
mod json;
mod keys;
mod tabular;
mod text;
mod xml;

pub use fake::{Faker, REDACTED};
pub use keys::{Class, classify};

use crate::kit::format::Format;

/// A body after faking, and why it was only partly faked, if it was.
#[derive(Debug)]
pub struct Scrubbed {
    pub body: Vec<u8>,
    /// Set when the body could not be read as its format: then only e-mail
    /// addresses and phone numbers in its text were replaced.
    pub warning: Option<String>,
}

/// `body`, of `format`, sent to or received from `path`, with its customer
/// data faked and its credentials redacted. Binary bodies are kept as they are.
pub fn scrub_body(faker: &Faker, format: Format, body: &[u8], path: &str) -> Scrubbed {
    let context = path_context(path);
    let text = String::from_utf8_lossy(body);
    let walked = match format {
        Format::Json => serde_json::from_slice(body)
            .map_err(|e| format!("not JSON: {e}"))
            .and_then(|mut value: serde_json::Value| {
                json::scrub(faker, &mut value, None, &mut context.clone());
                serde_json::to_vec_pretty(&value).map_err(|e| e.to_string())
            }),
        Format::Xml => xml::scrub(faker, &text, &context).map_err(|e| e.to_string()),
        Format::Csv => {
            tabular::scrub(faker, body, b',', &context).map_err(|e| format!("not CSV: {e}"))
        }
        Format::Tsv => {
            tabular::scrub(faker, body, b'\t', &context).map_err(|e| format!("not TSV: {e}"))
        }
        Format::Form => Ok(form::scrub_form(faker, &text, &context).into_bytes()),
        Format::Text => Ok(faker.text(&text).into_bytes()),
        Format::Binary => Ok(body.to_vec()),
    };
    match walked {
        Ok(body) => Scrubbed {
            body,
            warning: None,
        },
        Err(why) => Scrubbed {
            body: faker.text(&text).into_bytes(),
            warning: Some(why),
        },
    }
}

/// Query parameters with their values faked or redacted by name.
pub fn scrub_query(faker: &Faker, pairs: &[(String, String)], path: &str) -> Vec<(String, String)> {
    form::scrub_pairs(faker, pairs, &path_context(path))
}

/// A request path with any e-mail address or phone number in it faked.
pub fn scrub_path(faker: &Faker, path: &str) -> String {
    faker.text(path)
}

/// Whether a request header may be saved: not one that carries a credential
/// (`Authorization`, `Cookie`, `X-API-Key`, a signature, a subscription key).
pub fn keep_header(name: &str) -> bool {
    classify(name, &[]) != Some(Class::Credential) && !keys::normalize(name).ends_with("key")
}

/// The path segments that say the body is about people (`/customers/…`):
/// the context of keys at the top of the body. Segments naming a business
/// do not count, so `/dealers/7/…` never hides a customer's `firstName`.
fn path_context(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| keys::is_person(s))
        .map(keys::normalize)
        .collect()
}

#[cfg(test)]
mod tests;
