//! Name/value pairs: `application/x-www-form-urlencoded` bodies and query
//! strings (`client_secret`, `password`, `api_key` redacted; `email=` faked).

use super::fake::Faker;
use super::keys::classify;

/// Each value faked by its name's class, or searched as free text.
pub fn scrub_pairs(
    faker: &Faker,
    pairs: &[(String, String)],
    ancestors: &[String],
) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| {
            let fake = match classify(name, ancestors) {
                Some(class) => faker.value(class, value),
                None => faker.text(value),
            };
            (name.clone(), fake)
        })
        .collect()
}

/// A form body with its values faked, encoded again.
pub fn scrub_form(faker: &Faker, body: &str, ancestors: &[String]) -> String {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(scrub_pairs(faker, &pairs, ancestors))
        .finish()
}
