//! JSON bodies: every string (and number) under a customer-data key faked,
//! every credential redacted, free text searched for e-mails and phones.

use serde_json::Value;

use super::fake::{Faker, REDACTED};
use super::keys::{Class, classify, normalize};

/// Fakes `value` in place; `ancestors` are the enclosing names (normalised).
pub fn scrub(faker: &Faker, value: &mut Value, key: Option<&str>, ancestors: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            *s = match key.and_then(|k| classify(k, ancestors)) {
                Some(class) => faker.value(class, s),
                None => faker.text(s),
            };
        }
        Value::Number(n) => {
            if let Some(class) = key.and_then(|k| classify(k, ancestors)) {
                *value = number(faker, class, &n.to_string());
            }
        }
        Value::Array(items) => {
            for item in items {
                scrub(faker, item, key, ancestors);
            }
        }
        Value::Object(map) => {
            let pushed = key.map(|k| ancestors.push(normalize(k))).is_some();
            for (k, v) in map.iter_mut() {
                scrub(faker, v, Some(k), ancestors);
            }
            if pushed {
                ancestors.pop();
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

/// A number under a customer-data key: a phone or ZIP as a number stays a
/// number of as many digits; a numeric credential (a PIN) is redacted.
fn number(faker: &Faker, class: Class, text: &str) -> Value {
    match class {
        Class::Credential => Value::String(REDACTED.to_owned()),
        Class::Name | Class::Email => Value::String(faker.value(class, text)),
        Class::Phone | Class::Address => {
            let fake = faker.value(class, text);
            fake.parse::<u64>().map_or(Value::String(fake), Value::from)
        }
    }
}
