//! Money as an integer count of minor units plus an ISO 4217 currency, never a float.
//!
//! Upstreams send prices as JSON numbers, numeric strings, `"$24,995"` or
//! `"18,995.00 USD"`; [`parse_amount`] turns any of them into minor units with
//! integer arithmetic only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Money in minor units (cents); a plain comment keeps it out of every schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Money {
    /// Minor units (cents).
    pub amount: i64,
    /// ISO 4217, e.g. `USD`.
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    pub currency: String,
}

/// How an upstream expresses amounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AmountUnit {
    /// Whole currency units, possibly with decimals (`24995.50` dollars).
    #[default]
    Major,
    /// Already in minor units (`2499550` cents).
    Minor,
}

/// A parsed amount: minor units and the currency code found in the text, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedAmount {
    pub minor: i64,
    pub currency: Option<String>,
}

/// Parses `text` (digits with optional `$`, thousands separators, decimals and a
/// trailing or leading ISO code) into minor units. Rounds half up beyond two
/// decimals. Returns `None` for empty or non-numeric text ("call for price").
pub fn parse_amount(text: &str, unit: AmountUnit) -> Option<ParsedAmount> {
    let mut currency = None;
    let mut numeric = String::new();
    for token in text.split_whitespace() {
        if token.len() == 3 && token.chars().all(|c| c.is_ascii_uppercase()) {
            currency = Some(token.to_owned());
        } else {
            numeric.push_str(token);
        }
    }
    let cleaned: String = numeric
        .chars()
        .filter(|c| !matches!(c, '$' | ',' | '_'))
        .collect();
    let minor = match unit {
        AmountUnit::Major => decimal_to_minor(&cleaned)?,
        AmountUnit::Minor => cleaned.parse::<i64>().ok()?,
    };
    Some(ParsedAmount { minor, currency })
}

/// `"24995.505"` → `2499551`; integer arithmetic, half-up rounding at two decimals.
fn decimal_to_minor(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if !whole
        .chars()
        .chain(fraction.chars())
        .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut cents: i64 = 0;
    let mut frac = fraction.chars();
    for _ in 0..2 {
        cents = cents * 10 + frac.next().and_then(|c| c.to_digit(10)).unwrap_or(0) as i64;
    }
    if frac
        .next()
        .and_then(|c| c.to_digit(10))
        .is_some_and(|d| d >= 5)
    {
        cents += 1;
    }
    let minor = whole.checked_mul(100)?.checked_add(cents)?;
    Some(if negative { -minor } else { minor })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minor(text: &str) -> Option<i64> {
        parse_amount(text, AmountUnit::Major).map(|p| p.minor)
    }

    #[test]
    fn parses_what_upstreams_send() {
        assert_eq!(minor("24995"), Some(2_499_500));
        assert_eq!(minor("24995.5"), Some(2_499_550));
        assert_eq!(minor("$24,995"), Some(2_499_500));
        assert_eq!(minor("24,995.00"), Some(2_499_500));
        assert_eq!(minor("0.005"), Some(1));
        assert_eq!(minor("12.344"), Some(1234));
        assert_eq!(
            parse_amount("18,995.00 USD", AmountUnit::Major),
            Some(ParsedAmount {
                minor: 1_899_500,
                currency: Some("USD".into())
            })
        );
        assert_eq!(
            parse_amount("2499550", AmountUnit::Minor).map(|p| p.minor),
            Some(2_499_550)
        );
    }

    #[test]
    fn refuses_non_numbers() {
        assert_eq!(minor(""), None);
        assert_eq!(minor("Call for price"), None);
        assert_eq!(minor("12a"), None);
        assert_eq!(minor("."), None);
    }
}
