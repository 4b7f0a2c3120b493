//! Consistent fakes: each real value is replaced by one derived from a keyed
//! hash of it, so the same customer is the same fake customer everywhere in a
//! fixture set (joins between answers still work), while the key (random per
//! set, never saved) keeps anyone from recomputing which real value a fake
//! stands for by trying candidates.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::keys::Class;
use super::text::{self, Found};

/// What a credential's value becomes.
pub const REDACTED: &str = "REDACTED";

/// Fake name words. None is a name in the project's fixtures, so a test can
/// tell a fake from a survivor.
const NAMES: &[&str] = &[
    "Avery",
    "Blake",
    "Corin",
    "Dale",
    "Emery",
    "Finley",
    "Harper",
    "Indigo",
    "Jules",
    "Kendall",
    "Linden",
    "Marlowe",
    "Nico",
    "Oakley",
    "Peyton",
    "Quincy",
    "Reese",
    "Sawyer",
    "Tatum",
    "Umber",
    "Vale",
    "Winslow",
    "Yael",
    "Zephyr",
    "Ashdown",
    "Brightwater",
    "Cobbleton",
    "Dunmore",
    "Elsworth",
    "Fairbanks",
    "Greystone",
    "Hollowell",
];

/// Fake street and place words.
const PLACES: &[&str] = &[
    "Sample",
    "Example",
    "Placeholder",
    "Fictional",
    "Mock",
    "Testing",
    "Imaginary",
    "Pretend",
    "Madeup",
    "Dummy",
    "Specimen",
    "Standin",
];

/// Derives fakes from real values with a secret key.
#[derive(Clone)]
pub struct Faker {
    key: [u8; 32],
}

impl std::fmt::Debug for Faker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Faker { key: <secret> }")
    }
}

impl Faker {
    /// A faker with a fresh random key (one per fixture set).
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        Self { key }
    }

    /// A faker with a given key (tests, which need repeatable fakes).
    pub fn with_key(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// Eight pseudo-random bytes for `value`, within `kind`.
    fn hash(&self, kind: &str, value: &str) -> u64 {
        // An HMAC key of any length is accepted; the error arm cannot happen.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.key) else {
            return 0;
        };
        mac.update(kind.as_bytes());
        mac.update(b"\0");
        mac.update(value.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }

    /// The fake for `original`, a value of `class`. Blank values stay blank;
    /// a value that is an e-mail address is faked as one whatever its key says.
    pub fn value(&self, class: Class, original: &str) -> String {
        if original.trim().is_empty() {
            return original.to_owned();
        }
        if class == Class::Credential {
            return REDACTED.to_owned();
        }
        if is_whole(original, Found::Email) {
            return self.email(original);
        }
        match class {
            Class::Email => self.email(original),
            Class::Phone => self.phone(original),
            Class::Name => self.words(original, "name", NAMES),
            Class::Address => self.words(original, "place", PLACES),
            Class::Credential => REDACTED.to_owned(),
        }
    }

    /// `text` with every e-mail address and phone number in it faked.
    pub fn text(&self, text: &str) -> String {
        let found = text::find(text);
        if found.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (span, kind) in found {
            out.push_str(&text[at..span.start]);
            let real = &text[span.clone()];
            out.push_str(&match kind {
                Found::Email => self.email(real),
                Found::Phone => self.phone(real),
            });
            at = span.end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// `someone.1a2b3c@example.com`, the same for any spelling's case.
    fn email(&self, real: &str) -> String {
        let h = self.hash("email", &real.trim().to_lowercase());
        let name = pick(NAMES, h, "").to_lowercase();
        format!("{name}.{:06x}@example.com", h >> 40)
    }

    /// The number in the fictional 555-01xx range, its punctuation kept:
    /// `+1 (512) 555-0101` becomes `+1 (555) 555-01xx`.
    fn phone(&self, real: &str) -> String {
        let digits: String = real.chars().filter(char::is_ascii_digit).collect();
        let n = digits.len();
        // The same number however it is written: its last ten digits.
        let h = self.hash("phone", &digits[n.saturating_sub(10)..]);
        let fake = fake_digits(&digits, h);
        let mut fake = fake.chars();
        real.chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    fake.next().unwrap_or('0')
                } else {
                    c
                }
            })
            .collect()
    }

    /// Every word of three letters or more replaced from `list` (case kept),
    /// every run of digits by as many hashed digits; short words (`St`, `TX`,
    /// an initial's dot) stay.
    fn words(&self, real: &str, kind: &str, list: &[&str]) -> String {
        let mut out = String::with_capacity(real.len());
        let mut rest = real;
        while let Some(c) = rest.chars().next() {
            let same = |x: char| {
                x.is_alphabetic() == c.is_alphabetic() && x.is_ascii_digit() == c.is_ascii_digit()
            };
            let len = rest.find(|x| !same(x)).unwrap_or(rest.len());
            let (token, tail) = rest.split_at(len.max(c.len_utf8()));
            out.push_str(&self.token(token, kind, list));
            rest = tail;
        }
        out
    }

    fn token(&self, token: &str, kind: &str, list: &[&str]) -> String {
        let h = self.hash(kind, &token.to_lowercase());
        if token.chars().all(|c| c.is_ascii_digit()) {
            return format!(
                "{:0width$}",
                h % 10u64.pow(token.len().min(18) as u32),
                width = token.len()
            );
        }
        let letters = token.chars().count();
        let single_name = kind == "name" && letters < 3;
        if !token.chars().all(char::is_alphabetic) || (letters < 3 && !single_name) {
            return token.to_owned();
        }
        let word = pick(list, h, token);
        let word = if single_name {
            word[..letters.min(word.len())].to_owned()
        } else {
            word.to_owned()
        };
        with_case_of(&word, token)
    }
}

/// An entry of `list` by `h`, never `avoid` itself (case-insensitively).
fn pick<'a>(list: &[&'a str], h: u64, avoid: &str) -> &'a str {
    let at = (h % list.len() as u64) as usize;
    let word = list[at];
    if word.eq_ignore_ascii_case(avoid) {
        list[(at + 1) % list.len()]
    } else {
        word
    }
}

/// Whether the whole of `text` is one span of `kind`.
fn is_whole(text: &str, kind: Found) -> bool {
    let trimmed = text.trim();
    let found = text::find(trimmed);
    matches!(found.as_slice(), [(span, k)] if *k == kind && span.len() == trimmed.len())
}

/// As many digits as `digits`: a country code kept, then 555 555 01xx
/// (555-01xx alone for seven digits, hashed digits for shorter runs).
fn fake_digits(digits: &str, h: u64) -> String {
    let n = digits.len();
    let xx = format!("{:02}", h % 100);
    let tail = match n {
        10.. => format!("55555501{xx}"),
        7..=9 => format!("{}55501{xx}", &"555"[..n - 7]),
        _ => return format!("{:0n$}", h % 10u64.pow(n as u32)),
    };
    let fake = format!("{}{tail}", &digits[..n.saturating_sub(10)]);
    if fake == digits {
        // A real number already in the fictional range: still another one.
        let other = format!("{:02}", (h + 1) % 100);
        return format!("{}{other}", &fake[..n - 2]);
    }
    fake
}

/// `word` in the case pattern of `like`: `DANA` → `AVERY`, `dana` → `avery`.
fn with_case_of(word: &str, like: &str) -> String {
    if like.chars().all(|c| !c.is_alphabetic() || c.is_uppercase()) && like.chars().count() > 1 {
        word.to_uppercase()
    } else if like.chars().all(|c| !c.is_alphabetic() || c.is_lowercase()) {
        word.to_lowercase()
    } else {
        word.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faker() -> Faker {
        Faker::with_key([7; 32])
    }

    #[test]
    fn the_same_value_gets_the_same_fake_and_another_key_another() {
        let f = faker();
        assert_eq!(
            f.value(Class::Name, "Dana").to_uppercase(),
            f.value(Class::Name, "DANA")
        );
        assert_eq!(
            f.value(Class::Email, "dana@example.com"),
            f.value(Class::Email, "DANA@example.com")
        );
        assert_eq!(
            f.value(Class::Phone, "+15125550101")
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()[1..],
            f.value(Class::Phone, "(512) 555-0101")
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
        );
        let other = Faker::with_key([8; 32]);
        let names: Vec<String> = ["Dana", "Luis", "Ava", "Whitfield"]
            .iter()
            .map(|n| f.value(Class::Name, n))
            .collect();
        let others: Vec<String> = ["Dana", "Luis", "Ava", "Whitfield"]
            .iter()
            .map(|n| other.value(Class::Name, n))
            .collect();
        assert_ne!(names, others);
    }

    #[test]
    fn fakes_keep_the_shape_parsers_rely_on() {
        let f = faker();
        let name = f.value(Class::Name, "WHITFIELD, DANA");
        let (last, first) = name.split_once(", ").unwrap();
        assert!(
            last.chars().all(|c| c.is_ascii_uppercase())
                && first.chars().all(|c| c.is_ascii_uppercase()),
            "{name}"
        );
        assert_ne!(name, "WHITFIELD, DANA");
        let phone = f.value(Class::Phone, "+1 (512) 555-0101");
        assert!(phone.starts_with("+1 (555) 555-01"), "{phone}");
        assert_eq!(f.value(Class::Phone, "555-0123").len(), 8);
        let email = f.value(Class::Email, "dana.whitfield@example.com");
        assert!(
            email.ends_with("@example.com") && !email.contains("dana"),
            "{email}"
        );
        let street = f.value(Class::Address, "48 PECAN AVE");
        assert!(!street.contains("PECAN") && street.len() > 5, "{street}");
        assert_eq!(
            f.value(Class::Address, "ROUND ROCK, TX 78664")
                .split(", ")
                .nth(1)
                .unwrap()
                .len(),
            8
        );
        assert_eq!(f.value(Class::Credential, "s3cret"), REDACTED);
        assert_eq!(f.value(Class::Name, ""), "");
        // A number already in the fictional range still changes.
        assert_ne!(f.value(Class::Phone, "5555550100"), "5555550100");
    }

    #[test]
    fn free_text_loses_its_emails_and_phones() {
        let f = faker();
        let out = f.text(
            "Customer says call 512-555-0199 or mail d.w@mail.example.org. VIN 2HGFC2F56KH512345",
        );
        assert!(
            !out.contains("512-555-0199") && !out.contains("d.w@mail"),
            "{out}"
        );
        assert!(out.contains("VIN 2HGFC2F56KH512345"));
    }
}
