//! What text a lead (or a booking) may carry, so that every accepted request
//! renders to a well-formed ADF document and reads back as it was accepted.
//!
//! - Single-line fields (names, e-mail, address lines, vehicle make/model/…,
//!   `source_agent`) are refused when they hold a control character (tab and
//!   line breaks included) or a Unicode noncharacter: there is no right way to
//!   guess what a name with an ESC in it was meant to be, and the agent can
//!   ask again. They are trimmed, and an optional one left blank is dropped.
//! - Free text (the customer's message, appointment notes, a booking comment)
//!   is cleaned instead: line breaks become `\n`, tab stays, every other
//!   control character and noncharacter is removed, and the result is trimmed.
//!   A message is worth delivering even when a copy-paste brought junk along.

use crate::tools::Check;

/// A Unicode noncharacter (U+FDD0..U+FDEF and the last two code points of
/// every plane): never meant for interchange; U+FFFE and U+FFFF are not even
/// allowed in XML 1.0.
pub fn is_noncharacter(c: char) -> bool {
    let u = u32::from(c);
    (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE
}

/// The first character a single-line field may not hold, if any.
fn refused_char(value: &str) -> Option<char> {
    value
        .chars()
        .find(|&c| c.is_control() || is_noncharacter(c))
}

/// Records a problem at `at` when `value` holds a control character or a
/// noncharacter. The message names the code point, never the text around it.
pub fn check_line(check: &mut Check<'_>, at: &str, value: &str) {
    if let Some(c) = refused_char(value) {
        check.problems.push(
            at,
            format!(
                "contains U+{:04X}, a control character or Unicode noncharacter; send the value as plain text on one line, without it",
                u32::from(c)
            ),
        );
    }
}

/// Like [`check_line`], and also refuses a value that is blank once trimmed.
pub fn check_required_line(check: &mut Check<'_>, at: &str, value: &str) {
    if value.trim().is_empty() {
        check.problems.push(at, "must not be blank");
    } else {
        check_line(check, at, value);
    }
}

/// Free text as it is stored and sent: CR LF and lone CR become LF; tab and
/// LF stay; any other control character and every noncharacter is removed;
/// the result is trimmed.
pub fn clean_free_text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\t' | '\n' => out.push(c),
            c if c.is_control() || is_noncharacter(c) => {}
            c => out.push(c),
        }
    }
    out.trim().to_owned()
}

/// A single-line value as it is stored and sent: trimmed.
pub fn clean_line(value: &mut String) {
    let trimmed = value.trim();
    if trimmed.len() != value.len() {
        *value = trimmed.to_owned();
    }
}

/// An optional single-line value: trimmed, dropped when blank.
pub fn clean_optional_line(value: &mut Option<String>) {
    if let Some(v) = value.as_mut() {
        clean_line(v);
    }
    if value.as_deref().is_some_and(str::is_empty) {
        *value = None;
    }
}

/// Optional free text: cleaned, dropped when nothing is left.
pub fn clean_optional_free_text(value: &mut Option<String>) {
    *value = value
        .as_deref()
        .map(clean_free_text)
        .filter(|v| !v.is_empty());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_keeps_lines_and_tabs_and_drops_other_controls() {
        assert_eq!(
            clean_free_text(" Hi\u{7}\tthere\u{1b}[0m\r\nbye\rnow\u{FFFF}\u{FDD0}\u{85} "),
            "Hi\tthere[0m\nbye\nnow"
        );
    }

    #[test]
    fn noncharacters_are_the_unicode_set() {
        for c in [
            '\u{FFFE}',
            '\u{FFFF}',
            '\u{FDD0}',
            '\u{FDEF}',
            '\u{1FFFF}',
            '\u{10FFFE}',
        ] {
            assert!(is_noncharacter(c), "{c:?}");
        }
        for c in ['a', '\u{FFFD}', '\u{FDCF}', '\u{FDF0}', '\u{1FFFD}'] {
            assert!(!is_noncharacter(c), "{c:?}");
        }
    }

    #[test]
    fn single_lines_refuse_controls_and_noncharacters() {
        assert_eq!(refused_char("Da\u{1}na"), Some('\u{1}'));
        assert_eq!(refused_char("Da\tna"), Some('\t'));
        assert_eq!(refused_char("Da\u{9f}na"), Some('\u{9f}'));
        assert_eq!(refused_char("Dana\u{FFFE}"), Some('\u{FFFE}'));
        assert_eq!(refused_char("Dana Ó'Brien-Łukasz 李"), None);
    }
}
