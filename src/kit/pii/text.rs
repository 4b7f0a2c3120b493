//! E-mail addresses and phone numbers inside any text (a note, a concern, a
//! description), found without knowing the key they sit under.

use std::ops::Range;

/// What a span of text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Email,
    Phone,
}

/// The e-mail addresses and phone numbers in `text`, in order, not overlapping.
pub fn find(text: &str) -> Vec<(Range<usize>, Found)> {
    let mut found: Vec<(Range<usize>, Found)> = emails(text)
        .into_iter()
        .map(|r| (r, Found::Email))
        .collect();
    for phone in phones(text) {
        if !found
            .iter()
            .any(|(r, _)| r.start < phone.end && phone.start < r.end)
        {
            found.push((phone, Found::Phone));
        }
    }
    found.sort_by_key(|(r, _)| r.start);
    found
}

fn is_local(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._%+-'".contains(c)
}

fn is_domain(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '.' || c == '-'
}

/// `local@domain.tld` around each `@`.
fn emails(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    for (at, _) in text.match_indices('@') {
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_local(*c))
            .last()
            .map_or(at, |(i, _)| i);
        let after = &text[at + 1..];
        let len = after.find(|c| !is_domain(c)).unwrap_or(after.len());
        let domain = after[..len].trim_end_matches(['.', '-']);
        let tld = domain.rsplit('.').next().unwrap_or_default();
        let dotted =
            domain.contains('.') && tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic());
        if start < at && dotted {
            spans.push(start..at + 1 + domain.len());
        }
    }
    spans
}

fn is_phone_char(c: char) -> bool {
    c.is_ascii_digit() || "+-(). ".contains(c)
}

/// Phone-shaped runs: `+` and 8 to 15 digits, or 10 digits (11 with a
/// leading 1) written with separators. A bare run of ten digits is left
/// alone here (an epoch second, an id); under a phone key it is faked anyway.
fn phones(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let boundary = i == 0 || !(bytes[i - 1] as char).is_ascii_alphanumeric();
        if !(boundary && (c.is_ascii_digit() || c == '+' || c == '(')) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len() && is_phone_char(bytes[end] as char) {
            end += 1;
        }
        // Trailing separators are not part of the number.
        let mut last = end;
        while last > i && !(bytes[last - 1] as char).is_ascii_digit() {
            last -= 1;
        }
        let next_is_word = last < bytes.len() && (bytes[last] as char).is_ascii_alphanumeric();
        if last > i && !next_is_word && phone_shaped(&text[i..last]) {
            spans.push(i..last);
        }
        i = end.max(i + 1);
    }
    spans
}

fn phone_shaped(run: &str) -> bool {
    let digits = run.chars().filter(char::is_ascii_digit).count();
    let separated = run.chars().any(|c| !c.is_ascii_digit());
    if run.starts_with('+') {
        return (8..=15).contains(&digits);
    }
    // Grouped as 512 555 0101 or 1 512 555 0101, whatever the separators.
    let groups: Vec<usize> = run
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .map(str::len)
        .collect();
    separated && (groups == [3, 3, 4] || groups == [1, 3, 3, 4])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(&str, Found)> {
        find(text).into_iter().map(|(r, f)| (&text[r], f)).collect()
    }

    #[test]
    fn finds_emails_and_phones_in_free_text() {
        assert_eq!(
            spans("Call Dana at (512) 555-0101 or +15125550101, mail dana.w@example.com."),
            [
                ("(512) 555-0101", Found::Phone),
                ("+15125550101", Found::Phone),
                ("dana.w@example.com", Found::Email),
            ]
        );
        assert_eq!(
            spans("512-555-0102 and 512.555.0103"),
            [
                ("512-555-0102", Found::Phone),
                ("512.555.0103", Found::Phone)
            ]
        );
    }

    #[test]
    fn leaves_ids_dates_money_and_vins_alone() {
        for text in [
            "1794838500000",
            "2026-11-12",
            "202610201100",
            "5125550102",
            "1,234.56",
            "2HGFC2F56KH512345",
            "RO 60101",
            "v1.2.3",
            "@handle",
            "a@b",
            "ROs 60101 60102",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", spans(text));
        }
    }
}
