//! Which names (JSON keys, XML element and attribute names, CSV headers, form
//! and query parameter names) hold a customer's data or a credential.
//!
//! Names are compared normalised: lower case, letters and digits only, so
//! `first_name`, `firstName` and `FirstName` are one name. A name alone does
//! not always say whose value it holds: `name` is a customer's under
//! `customer`, a colour's under `color`. The nearest enclosing name that says
//! "person", "business" or "thing" decides; explicit keys (`email`,
//! `firstName`, `line1`) count as a customer's unless a business or a thing
//! encloses them, a bare `name` only inside a person.

/// What a value is, for the faker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Name,
    Email,
    Phone,
    Address,
    /// A password, secret, token or key: redacted, never faked.
    Credential,
}

/// `firstName` → `firstname`.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Words of a credential's name. Not `key` alone: `nextFetchKey` is a cursor.
const CREDENTIAL: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "signingkey",
    "subscriptionkey",
    "clientassertion",
    "signature",
    "credential",
    "username",
    "cookie",
    "authorization",
    "sessionid",
];

/// Endings that make a name describe a value rather than hold it
/// (`token_type`, `phoneType`, `addressId`, `emailVerified`).
const DESCRIBES: &[&str] = &[
    "type",
    "kind",
    "desc",
    "description",
    "id",
    "status",
    "flag",
    "count",
    "format",
    "verified",
    "expiresin",
    "expirein",
    "url",
    "uri",
    "preference",
    "optin",
    "consent",
    "indicator",
];

/// The first word of a name ending in `name` that makes it a person's name.
const NAME_PARTS: &[&str] = &[
    "first",
    "last",
    "middle",
    "full",
    "given",
    "family",
    "sur",
    "fore",
    "display",
    "nick",
    "maiden",
    "legal",
    "preferred",
    "f",
    "l",
];

/// Words of an enclosing name that say the values inside are a person's.
const PERSON: &[&str] = &[
    "customer",
    "owner",
    "contact",
    "buyer",
    "advisor",
    "writer",
    "technician",
    "employee",
    "person",
    "driver",
    "recipient",
    "prospect",
    "salesperson",
    "client",
    "guest",
    "individual",
    "cardholder",
    "applicant",
    "consumer",
    "user",
    "party",
    "people",
];

/// Words of an enclosing name that say the values inside are a business's.
const BUSINESS: &[&str] = &[
    "dealer",
    "store",
    "business",
    "company",
    "rooftop",
    "vendor",
    "provider",
    "organization",
    "organisation",
    "branch",
    "franchise",
    "location",
];

/// Words of an enclosing name that say the values inside describe a thing.
/// Whole words only where a shorter one hides in common names (`parts`, not
/// `part`, which `department` holds).
const THING: &[&str] = &[
    "vehicle",
    "color",
    "colour",
    "option",
    "feature",
    "equipment",
    "package",
    "engine",
    "transmission",
    "trim",
    "opcode",
    "operation",
    "service",
    "job",
    "labor",
    "parts",
    "category",
    "price",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Person,
    Other,
}

/// The class of the value under `key`, inside `ancestors` (outermost first,
/// already normalised; the request path's segments may open the list).
pub fn classify(key: &str, ancestors: &[String]) -> Option<Class> {
    let k = normalize(key);
    if k.is_empty() {
        return None;
    }
    let describes = DESCRIBES.iter().any(|d| k.ends_with(d));
    if CREDENTIAL.iter().any(|c| k.contains(c)) {
        return (!describes).then_some(Class::Credential);
    }
    if describes {
        return None;
    }
    let owner = owner(&k, ancestors);
    if is_bare_name(&k) {
        return (owner == Some(Owner::Person)).then_some(Class::Name);
    }
    // `phoneNumbers: [{ number: … }]`: a generic key takes its holder's class.
    let holder = || ancestors.last().filter(|_| GENERIC.contains(&k.as_str()));
    let class = explicit(&k).or_else(|| holder().and_then(|h| explicit(h)))?;
    (owner != Some(Owner::Other)).then_some(class)
}

/// Keys that hold whatever their enclosing name says they hold.
const GENERIC: &[&str] = &[
    "number",
    "value",
    "text",
    "raw",
    "formatted",
    "display",
    "e164",
    "national",
    "international",
    "digits",
    "full",
];

/// `name`, `name1`, `name2`: whose, only the context says.
fn is_bare_name(k: &str) -> bool {
    k.strip_prefix("name")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
}

/// A key that names customer data by itself.
fn explicit(k: &str) -> Option<Class> {
    if k.contains("email") || k == "mail" {
        Some(Class::Email)
    } else if ["phone", "mobile", "cellular", "fax"]
        .iter()
        .any(|w| k.contains(w))
        || k == "cell"
    {
        Some(Class::Phone)
    } else if is_address(k) {
        Some(Class::Address)
    } else if person_name(k) {
        Some(Class::Name)
    } else {
        None
    }
}

fn is_address(k: &str) -> bool {
    let line = ["line1", "line2", "line3", "line4"]
        .iter()
        .any(|l| k.ends_with(l));
    let words = ["street", "city", "zip", "postal", "postcode"];
    (k.contains("address") && !k.contains("ipaddress") && !k.contains("macaddress"))
        || line
        || words.iter().any(|w| k.contains(w))
}

/// `firstName`, `CustomerName`, `ServiceWriterName`, `surname`; not
/// `serviceName` or `dealerName`.
fn person_name(k: &str) -> bool {
    if k == "surname" || k == "forename" {
        return true;
    }
    let Some(first) = k.strip_suffix("name") else {
        return false;
    };
    NAME_PARTS.contains(&first) || PERSON.iter().any(|p| first.contains(p))
}

/// Who the nearest deciding name (the key itself first, then its enclosing
/// names inward-out) says the value belongs to.
fn owner(k: &str, ancestors: &[String]) -> Option<Owner> {
    std::iter::once(k)
        .chain(ancestors.iter().rev().map(String::as_str))
        .find_map(owner_of)
}

/// Whether a name (a path segment, say) says the values under it are a person's.
pub fn is_person(name: &str) -> bool {
    owner_of(&normalize(name)) == Some(Owner::Person)
}

fn owner_of(name: &str) -> Option<Owner> {
    if PERSON.iter().any(|w| name.contains(w)) {
        Some(Owner::Person)
    } else if BUSINESS.iter().chain(THING).any(|w| name.contains(w)) {
        Some(Owner::Other)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &[&str]) -> Vec<String> {
        path.iter().map(|p| normalize(p)).collect()
    }

    #[test]
    fn explicit_keys_are_a_customers_unless_a_business_or_a_thing_holds_them() {
        let none: Vec<String> = Vec::new();
        assert_eq!(classify("firstName", &none), Some(Class::Name));
        assert_eq!(classify("ServiceWriterName", &none), Some(Class::Name));
        assert_eq!(classify("CustomerName", &none), Some(Class::Name));
        assert_eq!(classify("contactEmailAddress", &none), Some(Class::Email));
        assert_eq!(classify("contactPhoneNumber", &none), Some(Class::Phone));
        assert_eq!(classify("cityStateZip", &none), Some(Class::Address));
        assert_eq!(
            classify("line1", &at(&["customer", "address"])),
            Some(Class::Address)
        );
        assert_eq!(classify("dealership_address", &none), None);
        assert_eq!(classify("line1", &at(&["dealer", "address"])), None);
        assert_eq!(classify("serviceName", &none), None);
        assert_eq!(classify("phoneType", &none), None);
        assert_eq!(classify("CustomerKey", &none), None);
        assert_eq!(
            classify("number", &at(&["customer", "phoneNumbers"])),
            Some(Class::Phone)
        );
        assert_eq!(classify("number", &at(&["jobs"])), None);
    }

    #[test]
    fn a_bare_name_is_a_persons_only_inside_a_person() {
        assert_eq!(
            classify("name", &at(&["serviceAdvisor"])),
            Some(Class::Name)
        );
        assert_eq!(
            classify("name1", &at(&["data", "customer"])),
            Some(Class::Name)
        );
        assert_eq!(
            classify("name", &at(&["customers", "0"])),
            Some(Class::Name)
        );
        assert_eq!(classify("name", &at(&["color", "exterior"])), None);
        assert_eq!(classify("name", &[]), None);
    }

    #[test]
    fn credentials_but_not_what_describes_them_or_cursors() {
        let none: Vec<String> = Vec::new();
        for key in [
            "access_token",
            "refresh_token",
            "client_secret",
            "secret_key",
            "Password",
            "x-api-key",
            "api_key",
            "Username",
        ] {
            assert_eq!(classify(key, &none), Some(Class::Credential), "{key}");
        }
        for key in [
            "token_type",
            "expires_in",
            "nextFetchKey",
            "client_id",
            "app_id",
        ] {
            assert_eq!(classify(key, &none), None, "{key}");
        }
    }
}
