//! SOAP request envelopes (with optional WS-Security UsernameToken) and fault reading.
//!
//! Requests are built as strings rather than through an XML writer because the body comes
//! from a per-operation template whose values the caller has already passed through
//! [`escape`]; the envelope only wraps it. Responses are read from the JSON produced by
//! [`super::xml::to_json`], so fault detection uses the same local-name paths as field
//! mapping (`Envelope/Body/Fault/...`).

use serde_json::Value;
use std::borrow::Cow;

/// OASIS WS-Security 1.0 secext namespace (`wsse` prefix).
pub const WSSE_NAMESPACE: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
/// `Type` of a clear-text password in the UsernameToken profile 1.0.
pub const PASSWORD_TEXT_TYPE: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText";
/// Content type of SOAP 1.1, also what Dealertrack OpenTrack expects for its SOAP 1.2 envelopes.
pub const TEXT_XML_UTF8: &str = "text/xml; charset=utf-8";

/// SOAP protocol version: decides the envelope namespace and the HTTP content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoapVersion {
    Soap11,
    Soap12,
}

impl SoapVersion {
    /// Envelope namespace URI, bound to the `soap` prefix by [`envelope`].
    #[must_use]
    pub const fn namespace(self) -> &'static str {
        match self {
            Self::Soap11 => "http://schemas.xmlsoap.org/soap/envelope/",
            Self::Soap12 => "http://www.w3.org/2003/05/soap-envelope",
        }
    }

    /// Standard `Content-Type`: SOAP 1.1 is `text/xml` (the action travels in a separate
    /// `SOAPAction` header), SOAP 1.2 carries the action as a content-type parameter.
    ///
    /// Upstreams that deviate (Dealertrack OpenTrack takes a SOAP 1.2 envelope but wants
    /// `text/xml` plus `SOAPAction`) should send [`TEXT_XML_UTF8`] and [`soap_action_value`]
    /// instead of calling this.
    #[must_use]
    pub fn content_type(self, action: &str) -> String {
        match self {
            Self::Soap11 => TEXT_XML_UTF8.to_owned(),
            Self::Soap12 => {
                format!(
                    "application/soap+xml; charset=utf-8; action=\"{}\"",
                    quoted_string(action)
                )
            }
        }
    }

    /// Whether the standard binding sends a `SOAPAction` header (only SOAP 1.1 does).
    #[must_use]
    pub const fn soap_action_header(self) -> bool {
        matches!(self, Self::Soap11)
    }
}

/// Value for a `SOAPAction` header: the action URI as a quoted string, as SOAP 1.1 requires.
#[must_use]
pub fn soap_action_value(action: &str) -> String {
    format!("\"{}\"", quoted_string(action))
}

/// Makes `text` safe inside an HTTP quoted-string: `"` and `\` are backslash-escaped and
/// control characters are dropped, so a configured action can never split a header.
fn quoted_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|c| !c.is_control()) {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Credentials for a WS-Security UsernameToken with a clear-text password (the profile
/// OpenTrack uses; it relies on TLS for confidentiality).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsernameToken<'a> {
    pub username: &'a str,
    pub password: &'a str,
}

impl UsernameToken<'_> {
    /// Renders `wsse:Security` (marked `soap:mustUnderstand="1"`, so a server that ignores
    /// it must fault instead of silently serving an unauthenticated request).
    fn render_into(&self, out: &mut String) {
        out.push_str(
            r#"<wsse:Security soap:mustUnderstand="1"><wsse:UsernameToken><wsse:Username>"#,
        );
        out.push_str(&escape(self.username));
        out.push_str(r#"</wsse:Username><wsse:Password Type=""#);
        out.push_str(PASSWORD_TEXT_TYPE);
        out.push_str(r#"">"#);
        out.push_str(&escape(self.password));
        out.push_str("</wsse:Password></wsse:UsernameToken></wsse:Security>");
    }
}

/// Builds a complete request document. `body` is inserted verbatim into `soap:Body`: it must
/// already be well-formed XML with escaped values. A `soap:Header` is emitted only when
/// there is a security token, since some servers reject an empty header.
#[must_use]
pub fn envelope(version: SoapVersion, security: Option<&UsernameToken<'_>>, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 512);
    out.push_str(r#"<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap=""#);
    out.push_str(version.namespace());
    out.push('"');
    if security.is_some() {
        out.push_str(r#" xmlns:wsse=""#);
        out.push_str(WSSE_NAMESPACE);
        out.push('"');
    }
    out.push('>');
    if let Some(token) = security {
        out.push_str("<soap:Header>");
        token.render_into(&mut out);
        out.push_str("</soap:Header>");
    }
    out.push_str("<soap:Body>");
    out.push_str(body);
    out.push_str("</soap:Body></soap:Envelope>");
    out
}

/// Escapes text for XML content and attribute values (`&` `<` `>` `"` `'`), borrowing
/// when nothing changes.
///
/// Characters XML 1.0 cannot carry at all (U+0000–U+0008, U+000B, U+000C, U+000E–U+001F,
/// U+FFFE, U+FFFF) are stripped rather than rejected: they come from free-text DMS or user
/// fields, cannot be expressed even as character references, and dropping them is better
/// than failing the whole request. Tab, CR and LF are kept as they are.
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| replacement(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match replacement(c) {
            Some(escaped) => out.push_str(escaped),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// What `c` turns into when escaped (`Some("")` means dropped), `None` if kept as is.
fn replacement(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&apos;"),
        '\t' | '\n' | '\r' => None,
        '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => Some(""),
        _ => None,
    }
}

/// A SOAP fault, normalised across versions. Codes lose their namespace prefix
/// (`soap:Sender` → `Sender`), since prefixes are arbitrary per server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// SOAP 1.2 `Code/Value` or SOAP 1.1 `faultcode` (e.g. `Sender`, `Client`).
    pub code: String,
    /// SOAP 1.2 `Code/Subcode/Value` (e.g. `FailedAuthentication`); SOAP 1.1 has none.
    pub subcode: Option<String>,
    /// SOAP 1.2 first `Reason/Text` or SOAP 1.1 `faultstring`.
    pub reason: String,
}

/// The content of `Envelope/Body` in a [`super::xml::to_json`] document (`""` for an empty body).
#[must_use]
pub fn body(doc: &Value) -> Option<&Value> {
    doc.get("Envelope")?.get("Body")
}

/// Reads the fault in `Envelope/Body/Fault`, if any (the first one if several). A fault
/// element missing its parts still yields a `Fault` with empty strings: it is a failure
/// either way, and the caller should not mistake it for data.
#[must_use]
pub fn fault(doc: &Value) -> Option<Fault> {
    let fault = first(body(doc)?.get("Fault")?);
    if let Some(code) = fault.get("Code") {
        let code = first(code);
        return Some(Fault {
            code: strip_prefix(&text_at(code, "Value")),
            subcode: code
                .get("Subcode")
                .map(|s| strip_prefix(&text_at(first(s), "Value"))),
            reason: fault
                .get("Reason")
                .map(|r| text_at(first(r), "Text"))
                .unwrap_or_default(),
        });
    }
    Some(Fault {
        code: strip_prefix(&text_at(fault, "faultcode")),
        subcode: None,
        reason: text_at(fault, "faultstring"),
    })
}

/// A repeated element is an array; fault parts use their first occurrence.
fn first(value: &Value) -> &Value {
    match value {
        Value::Array(items) => items.first().unwrap_or(value),
        _ => value,
    }
}

/// Text of child `name`: a leaf string, or `#text` of an element that has attributes
/// (`<Text xml:lang="en">…</Text>`); empty when missing.
fn text_at(parent: &Value, name: &str) -> String {
    match parent.get(name).map(first) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Object(object)) => object
            .get("#text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// Drops a QName prefix: `wsse:FailedAuthentication` → `FailedAuthentication`.
fn strip_prefix(qname: &str) -> String {
    qname
        .rsplit_once(':')
        .map_or(qname, |(_, local)| local)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::xml::to_json;
    use super::*;

    const TOKEN: UsernameToken<'static> = UsernameToken {
        username: "dms<user>",
        password: "p&<\"'",
    };
    const BODY: &str = r#"<GetX xmlns="opentrack.dealertrack.com"><Id>1</Id></GetX>"#;

    #[test]
    fn soap11_envelope_without_security() {
        let expected = concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">"#,
            r#"<soap:Body><GetX xmlns="opentrack.dealertrack.com"><Id>1</Id></GetX></soap:Body></soap:Envelope>"#
        );
        assert_eq!(envelope(SoapVersion::Soap11, None, BODY), expected);
    }

    #[test]
    fn soap12_envelope_without_security() {
        let expected = concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">"#,
            r#"<soap:Body></soap:Body></soap:Envelope>"#
        );
        assert_eq!(envelope(SoapVersion::Soap12, None, ""), expected);
    }

    fn secured(ns: &str) -> String {
        format!(
            concat!(
                r#"<?xml version="1.0" encoding="utf-8"?>"#,
                r#"<soap:Envelope xmlns:soap="{ns}" xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">"#,
                r#"<soap:Header><wsse:Security soap:mustUnderstand="1"><wsse:UsernameToken>"#,
                r#"<wsse:Username>dms&lt;user&gt;</wsse:Username>"#,
                r#"<wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText">"#,
                r#"p&amp;&lt;&quot;&apos;</wsse:Password></wsse:UsernameToken></wsse:Security></soap:Header>"#,
                r#"<soap:Body>{body}</soap:Body></soap:Envelope>"#
            ),
            ns = ns,
            body = BODY
        )
    }

    #[test]
    fn envelopes_with_security() {
        let v11 = envelope(SoapVersion::Soap11, Some(&TOKEN), BODY);
        assert_eq!(v11, secured("http://schemas.xmlsoap.org/soap/envelope/"));
        let v12 = envelope(SoapVersion::Soap12, Some(&TOKEN), BODY);
        assert_eq!(v12, secured("http://www.w3.org/2003/05/soap-envelope"));
    }

    #[test]
    fn built_envelope_round_trips_through_to_json() {
        let doc = to_json(envelope(SoapVersion::Soap12, Some(&TOKEN), BODY).as_bytes()).unwrap();
        let token = &doc["Envelope"]["Header"]["Security"]["UsernameToken"];
        assert_eq!(token["Password"]["#text"], "p&<\"'");
        assert_eq!(token["Username"], "dms<user>");
        assert_eq!(
            doc["Envelope"]["Header"]["Security"]["@mustUnderstand"],
            "1"
        );
        assert_eq!(body(&doc).unwrap()["GetX"]["Id"], "1");
    }

    #[test]
    fn escape_borrows_clean_text_and_strips_invalid_chars() {
        assert!(matches!(escape("plain ü text\t\r\n"), Cow::Borrowed(_)));
        assert_eq!(escape(r#"a&b<c>d"e'f"#), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
        assert_eq!(escape("x\u{0}\u{1}\u{b}\u{1f}\u{fffe}y\tz"), "xy\tz");
    }

    #[test]
    fn content_types_and_action_headers() {
        assert_eq!(
            SoapVersion::Soap11.content_type("urn:A"),
            "text/xml; charset=utf-8"
        );
        assert_eq!(
            SoapVersion::Soap12.content_type("opentrack.dealertrack.com/GetX"),
            r#"application/soap+xml; charset=utf-8; action="opentrack.dealertrack.com/GetX""#
        );
        assert!(SoapVersion::Soap11.soap_action_header());
        assert!(!SoapVersion::Soap12.soap_action_header());
        assert_eq!(soap_action_value("urn:A"), r#""urn:A""#);
        assert_eq!(
            soap_action_value("a\"b\\c\r\nX-Evil: 1"),
            r#""a\"b\\cX-Evil: 1""#
        );
    }

    const FAULT12: &str = r#"<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value><soap:Subcode><soap:Value>wsse:FailedAuthentication</soap:Value></soap:Subcode></soap:Code><soap:Reason><soap:Text xml:lang="en">The security token could not be authenticated.</soap:Text><soap:Text xml:lang="de">Nicht authentifiziert.</soap:Text></soap:Reason></soap:Fault></soap:Body></soap:Envelope>"#;

    #[test]
    fn soap12_fault_with_subcode_and_lang() {
        let doc = to_json(FAULT12.as_bytes()).unwrap();
        let expected = Fault {
            code: "Sender".into(),
            subcode: Some("FailedAuthentication".into()),
            reason: "The security token could not be authenticated.".into(),
        };
        assert_eq!(fault(&doc), Some(expected));
    }

    #[test]
    fn soap12_fault_without_subcode() {
        let xml = r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault>
            <env:Code><env:Value>env:Receiver</env:Value></env:Code>
            <env:Reason><env:Text>Database unavailable</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>"#;
        let f = fault(&to_json(xml.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            (f.code.as_str(), f.subcode, f.reason.as_str()),
            ("Receiver", None, "Database unavailable")
        );
    }

    #[test]
    fn soap11_fault() {
        let xml = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault>
            <faultcode>s:Client</faultcode><faultstring xml:lang="en">Invalid dealer number</faultstring>
            <detail><Code>42</Code></detail></s:Fault></s:Body></s:Envelope>"#;
        let f = fault(&to_json(xml.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            (f.code.as_str(), f.subcode, f.reason.as_str()),
            ("Client", None, "Invalid dealer number")
        );
    }

    #[test]
    fn body_extraction_and_no_fault() {
        let xml = r#"<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Header/><soap:Body><R><Id>7</Id></R></soap:Body></soap:Envelope>"#;
        let doc = to_json(xml.as_bytes()).unwrap();
        assert_eq!(body(&doc), Some(&serde_json::json!({"R": {"Id": "7"}})));
        assert_eq!(fault(&doc), None);
        let empty = to_json(b"<Envelope><Body/></Envelope>").unwrap();
        assert_eq!(body(&empty), Some(&Value::String(String::new())));
        assert_eq!(fault(&empty), None);
        assert_eq!(body(&serde_json::json!({"Other": {}})), None);
        let bare = fault(&to_json(b"<Envelope><Body><Fault/></Body></Envelope>").unwrap());
        assert_eq!(
            bare,
            Some(Fault {
                code: String::new(),
                subcode: None,
                reason: String::new()
            })
        );
    }
}
