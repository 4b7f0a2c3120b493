//! How many tokens a model pays to read a text, estimated from above.
//!
//! Hosts cap what one tool result may put in front of the model (Claude Code:
//! 25,000 tokens by default) and every token of an answer is paid for on
//! every turn after it. The bridge cannot run each model's tokenizer (a BPE
//! vocabulary is megabytes of memory and differs per model), so it counts
//! the way those tokenizers split text first and charges each piece more than
//! a BPE vocabulary does: a run of letters one token per three letters, a
//! run of digits one per three digits (o200k and cl100k never join more),
//! every punctuation mark one, a run of spaces one, and every byte of
//! non-ASCII text one (a byte-level BPE never needs more).
//!
//! On the demo's answers of records (vehicles, facets, repair orders,
//! dealerships) this estimate was 1.5–2.3 times o200k's count (BENCHMARKS.md
//! "Tokens"). Runs of random letters and digits cost a BPE more than a token
//! per three characters: an empty `events.list` page, whose text is mostly
//! its base64 cursor, came out exactly even, and 3,000 random letters at 0.55
//! of o200k. The bridge answers no such field but cursors, a few dozen
//! characters each, so the estimate stays above the real count on every
//! answer measured, if only just on one that is mostly a cursor.

/// The estimated token count of `text` (see the module doc).
pub fn estimate(text: &str) -> usize {
    let mut tokens = 0;
    let mut run = Run::None;
    let mut run_len = 0usize;
    for byte in text.bytes() {
        let kind = Run::of(byte);
        if kind == run && kind.joins() {
            run_len += 1;
            continue;
        }
        tokens += run.cost(run_len);
        run = kind;
        run_len = 1;
    }
    tokens + run.cost(run_len)
}

/// The kinds of text a tokenizer splits apart before it merges bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    None,
    Letters,
    Digits,
    Spaces,
    /// Punctuation, and every byte of non-ASCII text: one token each.
    Single,
}

impl Run {
    fn of(byte: u8) -> Self {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' => Self::Letters,
            b'0'..=b'9' => Self::Digits,
            b' ' | b'\t' | b'\n' | b'\r' => Self::Spaces,
            _ => Self::Single,
        }
    }

    fn joins(self) -> bool {
        matches!(self, Self::Letters | Self::Digits | Self::Spaces)
    }

    fn cost(self, len: usize) -> usize {
        match self {
            Self::None => 0,
            Self::Letters | Self::Digits => len.div_ceil(3),
            Self::Spaces => 1,
            Self::Single => len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::estimate;

    #[test]
    fn letters_and_digits_cost_a_token_per_three_and_marks_one_each() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("Ford"), 2);
        assert_eq!(estimate("2026"), 2);
        assert_eq!(estimate("{\"a\":1}"), 7);
        assert_eq!(estimate("F-150  Lightning"), 1 + 1 + 1 + 1 + 3);
    }

    #[test]
    fn every_byte_of_non_ascii_text_is_a_token() {
        assert_eq!(estimate("é"), 2);
        assert_eq!(estimate("漢"), 3);
    }
}
