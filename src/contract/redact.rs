//! Messages from parsers (serde's, say) without the values they quote: a
//! value may be a secret in a config, or a customer's text in a request.

/// `message` with every `"…"` and `` `…` `` quotation replaced by `…`.
pub fn without_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '`' => {
                quote = Some(c);
                out.push('…');
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_are_taken_out() {
        assert_eq!(
            without_values(r#"invalid value: string "thirty", expected a duration"#),
            "invalid value: string …, expected a duration"
        );
        assert_eq!(
            without_values("invalid type: integer `5`, expected a string"),
            "invalid type: integer …, expected a string"
        );
        assert_eq!(without_values("no quotes here"), "no quotes here");
    }
}
