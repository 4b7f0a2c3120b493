//! XML document → `serde_json::Value`, so SOAP/STAR responses can be mapped with the
//! same path-based field mapping the JSON adapters use.
//!
//! Conversion rules:
//! - The result is `{ "<RootLocalName>": <element> }`.
//! - Names are local names: prefixes are stripped (`soap:Envelope` → `Envelope`,
//!   `xml:lang` → `@lang`) and `xmlns` / `xmlns:*` attributes are dropped. Namespaces
//!   are not resolved: upstreams are inconsistent about prefixes, never about local names.
//! - An element without attributes and child elements becomes its text as a JSON string;
//!   an empty element becomes `""`.
//! - Otherwise it becomes an object: attributes as `"@name"` (string values, first wins if
//!   two prefixed attributes share a local name), children by local name, and non-blank
//!   direct text (mixed content) as `"#text"`.
//! - Text is all direct text, CDATA and references of the element concatenated, then
//!   trimmed of XML whitespace (space, tab, CR, LF); entity and character references are
//!   decoded, line ends normalised to `\n`. Attribute values are normalised per XML 1.0.
//! - Repeated siblings with the same local name become an array in document order; a single
//!   occurrence stays a plain value (callers treat a non-array as a one-element list).
//!   Array order is preserved; object key order is serde_json's (sorted unless the
//!   `preserve_order` feature is on), so callers must not rely on it.
//! - Comments, processing instructions, the XML declaration and a UTF-8 BOM are ignored.
//! - Input is UTF-8 unless the declaration says otherwise; US-ASCII, ISO-8859-1 and
//!   Windows-1252 are decoded (as Windows-1252, the WHATWG reading of those labels), any
//!   other declared encoding is refused.
//!
//! Refused with [`XmlError`]: documents that are not well formed, any `<!DOCTYPE` (no DTD
//! means no entity expansion, so no XXE or billion-laughs), nesting deeper than
//! [`MAX_DEPTH`] and more than [`MAX_ELEMENTS`] elements. Errors never echo input beyond a
//! truncated element name and a byte position (for transcoded input, a position in the
//! UTF-8 transcoding), because upstream payloads carry customer data that must not reach logs.

use quick_xml::XmlVersion;
use quick_xml::errors::{Error as QxError, IllFormedError};
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::reader::Reader;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Deepest element nesting accepted; real SOAP responses stay far below this.
pub const MAX_DEPTH: usize = 64;
/// Most elements accepted in one document, bounding memory for hostile or runaway responses.
pub const MAX_ELEMENTS: usize = 100_000;
/// Longest element name quoted in an error, so errors stay short and log-safe.
const MAX_NAME_IN_ERROR: usize = 40;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why a document was refused; the `u64` is the byte position where it was noticed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    #[error("XML is not valid UTF-8 at byte {0}")]
    InvalidUtf8(u64),
    #[error("XML declares an unsupported encoding (use UTF-8, ISO-8859-1 or Windows-1252)")]
    UnsupportedEncoding,
    #[error("XML contains a DOCTYPE at byte {0}; DTDs are refused")]
    Doctype(u64),
    #[error("XML has no root element")]
    NoRoot,
    #[error("XML has a second root element at byte {0}")]
    MultipleRoots(u64),
    #[error("XML has content outside the root element at byte {0}")]
    OutsideRoot(u64),
    #[error("XML element <{0}> is not closed at byte {1}")]
    Unclosed(String, u64),
    #[error("XML end tag does not match <{0}> at byte {1}")]
    MismatchedEnd(String, u64),
    #[error("XML end tag without a start tag at byte {0}")]
    UnexpectedEnd(u64),
    #[error("XML has an invalid or unknown entity/character reference at byte {0}")]
    BadReference(u64),
    #[error("XML nesting exceeds {limit} levels at byte {0}", limit = MAX_DEPTH)]
    TooDeep(u64),
    #[error("XML has more than {1} elements (at byte {0})")]
    TooManyElements(u64, usize),
    #[error("XML is malformed at byte {1}: {0}")]
    Malformed(&'static str, u64),
}

/// Converts an XML document to JSON following the module-level rules.
///
/// # Errors
/// [`XmlError`] when the document is not well formed or breaks one of the limits above.
pub fn to_json(bytes: &[u8]) -> Result<Value, XmlError> {
    to_json_bounded(bytes, MAX_ELEMENTS)
}

/// [`to_json`] with another bound on the number of elements: an inventory
/// feed of a large dealer group holds far more than any SOAP answer.
///
/// # Errors
/// As [`to_json`].
pub fn to_json_bounded(bytes: &[u8], max_elements: usize) -> Result<Value, XmlError> {
    let (text, base) = decode(bytes)?;
    let mut reader = Reader::from_str(&text);
    let mut tree = Tree {
        max_elements,
        ..Tree::default()
    };
    loop {
        let pos = base + reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| map_error(&e, base + reader.error_position()))?;
        match event {
            Event::Start(e) => tree.open(&e, pos)?,
            Event::Empty(e) => {
                tree.open(&e, pos)?;
                tree.close(pos)?;
            }
            Event::End(_) => tree.close(pos)?,
            Event::Text(t) => tree.text(&t.xml10_content(), pos)?,
            Event::CData(c) => tree.text(&c.xml10_content(), pos)?,
            Event::GeneralRef(r) => tree.text(&resolve_reference(&r, pos)?, pos)?,
            Event::DocType(_) => return Err(XmlError::Doctype(pos)),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => return tree.finish(pos),
        }
    }
}

/// Turns the raw bytes into UTF-8 text plus the byte offset its positions start at.
/// The declared encoding is looked up with the WHATWG label rules quick-xml uses.
fn decode(bytes: &[u8]) -> Result<(Cow<'_, str>, u64), XmlError> {
    let (bytes, base) = match bytes.strip_prefix(UTF8_BOM) {
        Some(rest) => (rest, UTF8_BOM.len() as u64),
        None => (bytes, 0),
    };
    let mut reader = Reader::from_reader(bytes);
    if let Ok(Event::Decl(decl)) = reader.read_event()
        && decl.encoding().is_some()
    {
        match decl.encoder() {
            Some(encoding) if encoding.name() == "UTF-8" => {}
            Some(encoding) if encoding.name() == "windows-1252" => {
                let text = quick_xml::encoding::decode(bytes, encoding)
                    .map_err(|_| XmlError::UnsupportedEncoding)?;
                return Ok((text, 0));
            }
            _ => return Err(XmlError::UnsupportedEncoding),
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((Cow::Borrowed(text), base)),
        Err(e) => Err(XmlError::InvalidUtf8(base + e.valid_up_to() as u64)),
    }
}

/// Decodes `&name;` / `&#N;` to its text; only the five predefined entities exist without a DTD.
fn resolve_reference(r: &BytesRef<'_>, position: u64) -> Result<String, XmlError> {
    let bad = XmlError::BadReference(position);
    if r.is_char_ref() {
        return match r.resolve_char_ref() {
            Ok(Some(c)) if is_xml_char(c) => Ok(c.to_string()),
            _ => Err(bad),
        };
    }
    quick_xml::escape::resolve_predefined_entity(r)
        .map(str::to_owned)
        .ok_or(bad)
}

/// XML 1.0 `Char` production: a character reference to anything else is not well formed.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Maps quick-xml errors to [`XmlError`] without carrying over their (input-echoing) text.
fn map_error(error: &QxError, position: u64) -> XmlError {
    match error {
        QxError::IllFormed(IllFormedError::MismatchedEndTag { expected, .. }) => {
            XmlError::MismatchedEnd(short_name(expected), position)
        }
        QxError::IllFormed(IllFormedError::MissingEndTag(name)) => {
            XmlError::Unclosed(short_name(name), position)
        }
        QxError::IllFormed(IllFormedError::UnmatchedEndTag(_)) => XmlError::UnexpectedEnd(position),
        QxError::IllFormed(IllFormedError::UnclosedReference) | QxError::Escape(_) => {
            XmlError::BadReference(position)
        }
        QxError::InvalidAttr(_) => XmlError::Malformed("invalid attribute", position),
        QxError::Syntax(_) => XmlError::Malformed("unclosed or invalid markup", position),
        _ => XmlError::Malformed("not well formed", position),
    }
}

/// Truncates a name for error messages (on a char boundary).
fn short_name(name: &str) -> String {
    name.chars().take(MAX_NAME_IN_ERROR).collect()
}

/// Trims XML whitespace only: `str::trim` would also eat e.g. U+00A0, which is data.
fn trim_xml(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

/// An element being built: its children are complete, its text may still grow.
struct Frame {
    name: String,
    attributes: Map<String, Value>,
    children: Map<String, Value>,
    text: String,
}

impl Frame {
    /// Applies the leaf-vs-object rule once the element is complete.
    fn into_value(self) -> Value {
        let text = trim_xml(&self.text);
        if self.attributes.is_empty() && self.children.is_empty() {
            return Value::String(text.to_owned());
        }
        let mut object = self.attributes;
        object.extend(self.children);
        if !text.is_empty() {
            object.insert("#text".to_owned(), Value::String(text.to_owned()));
        }
        Value::Object(object)
    }
}

/// Event-driven tree builder that enforces the root, depth and size rules.
#[derive(Default)]
struct Tree {
    stack: Vec<Frame>,
    root: Option<(String, Value)>,
    elements: usize,
    max_elements: usize,
}

impl Tree {
    fn open(&mut self, start: &BytesStart<'_>, position: u64) -> Result<(), XmlError> {
        if self.stack.is_empty() && self.root.is_some() {
            return Err(XmlError::MultipleRoots(position));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(XmlError::TooDeep(position));
        }
        self.elements += 1;
        if self.elements > self.max_elements {
            return Err(XmlError::TooManyElements(position, self.max_elements));
        }
        self.stack.push(Frame {
            name: start.local_name().as_ref().to_owned(),
            attributes: attributes(start, position)?,
            children: Map::new(),
            text: String::new(),
        });
        Ok(())
    }

    fn close(&mut self, position: u64) -> Result<(), XmlError> {
        let frame = self.stack.pop().ok_or(XmlError::UnexpectedEnd(position))?;
        let name = frame.name.clone();
        let value = frame.into_value();
        match self.stack.last_mut() {
            Some(parent) => insert_child(&mut parent.children, name, value),
            None => self.root = Some((name, value)),
        }
        Ok(())
    }

    fn text(&mut self, text: &str, position: u64) -> Result<(), XmlError> {
        match self.stack.last_mut() {
            Some(frame) => frame.text.push_str(text),
            None if trim_xml(text).is_empty() => {}
            None => return Err(XmlError::OutsideRoot(position)),
        }
        Ok(())
    }

    fn finish(self, position: u64) -> Result<Value, XmlError> {
        if let Some(open) = self.stack.last() {
            return Err(XmlError::Unclosed(short_name(&open.name), position));
        }
        let (name, value) = self.root.ok_or(XmlError::NoRoot)?;
        let mut object = Map::new();
        object.insert(name, value);
        Ok(Value::Object(object))
    }
}

/// Collects `@local` attributes, skipping namespace declarations (they carry no data).
fn attributes(start: &BytesStart<'_>, position: u64) -> Result<Map<String, Value>, XmlError> {
    let mut map = Map::new();
    for attribute in start.attributes() {
        let attribute =
            attribute.map_err(|_| XmlError::Malformed("invalid attribute", position))?;
        if attribute.key.as_namespace_binding().is_some() {
            continue;
        }
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|_| XmlError::BadReference(position))?;
        let key = format!("@{}", attribute.key.local_name().as_ref());
        map.entry(key)
            .or_insert_with(|| Value::String(value.into_owned()));
    }
    Ok(map)
}

/// Adds a child, turning a repeated name into an array. Element values are never arrays
/// themselves, so an existing array always means "already repeated".
fn insert_child(children: &mut Map<String, Value>, name: String, value: Value) {
    match children.get_mut(&name) {
        None => {
            children.insert(name, value);
        }
        Some(Value::Array(items)) => items.push(value),
        Some(existing) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, value]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use XmlError::*;
    use serde_json::json;

    const RESPONSE: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <soap:Body>
    <GetClosedRepairOrderDetailsResponse xmlns="opentrack.dealertrack.com">
      <GetClosedRepairOrderDetailsResult>
        <RepairOrder>
          <RepairOrderNumber>60123</RepairOrderNumber>
          <LaborDetails>
            <Labor><LaborOpCode>01LOF</LaborOpCode><LinePaymentMethod>C</LinePaymentMethod><LaborAmount>49.95</LaborAmount></Labor>
            <Labor><LaborOpCode>05ROT</LaborOpCode><LinePaymentMethod>W</LinePaymentMethod><LaborAmount>0.00</LaborAmount></Labor>
          </LaborDetails>
        </RepairOrder>
      </GetClosedRepairOrderDetailsResult>
    </GetClosedRepairOrderDetailsResponse>
  </soap:Body>
</soap:Envelope>"#;

    #[test]
    fn soap12_response_with_namespaces() {
        let v = to_json(RESPONSE.as_bytes()).unwrap();
        let labor = |op: &str, pay: &str, amount: &str| json!({"LaborOpCode": op, "LinePaymentMethod": pay, "LaborAmount": amount});
        let result = json!({"RepairOrder": {
            "RepairOrderNumber": "60123",
            "LaborDetails": {"Labor": [labor("01LOF", "C", "49.95"), labor("05ROT", "W", "0.00")]}
        }});
        let body = json!({"GetClosedRepairOrderDetailsResponse": {
            "GetClosedRepairOrderDetailsResult": result
        }});
        // xmlns declarations are dropped, so the envelope only has its Body.
        assert_eq!(v, json!({"Envelope": {"Body": body}}));
    }

    /// (case, input, expected JSON) for documents that must be accepted.
    const ACCEPTED: &[(&str, &[u8], &str)] = &[
        ("attributes+text", b"<a x:id='7' xmlns:x='u' b='&lt;q&gt; caf&#233;' c='l1&#10;l2\tt'>hi</a>",
            r##"{"a": {"@id": "7", "@b": "<q> café", "@c": "l1\nl2 t", "#text": "hi"}}"##),
        ("single child", b"<r><i><n>1</n></i></r>", r##"{"r": {"i": {"n": "1"}}}"##),
        ("repeated", b"<r><i>1</i><j>x</j><i>2</i><i>3</i></r>", r##"{"r": {"i": ["1", "2", "3"], "j": "x"}}"##),
        ("cdata", b"<a> <![CDATA[<b>&amp;</b>]]> </a>", r##"{"a": "<b>&amp;</b>"}"##),
        ("entities", b"<a>Caf&#233; &amp; &lt;b&gt; &#x41;&apos;&quot;\r\nx</a>", r##"{"a": "Café & <b> A'\"\nx"}"##),
        ("nbsp kept", "<a>\u{a0}x </a>".as_bytes(), r##"{"a": "\u00a0x"}"##),
        ("mixed", b"<p>Hello <b>x</b> world</p>", r##"{"p": {"b": "x", "#text": "Hello  world"}}"##),
        ("empty", b"<r><a/><b></b><c> </c><d k=''/></r>", r##"{"r": {"a": "", "b": "", "c": "", "d": {"@k": ""}}}"##),
        ("bom, decl, comments, PIs",
            b"\xEF\xBB\xBF<?xml version='1.0' encoding='UTF-8'?>\n<!--c--><?pi x?><a><!--c-->1<?p?></a>\n<!--e-->\n",
            r##"{"a": "1"}"##),
        ("us-ascii", b"<?xml version='1.0' encoding='us-ascii'?><a>1</a>", r##"{"a": "1"}"##),
        ("windows-1252", b"<?xml version='1.0' encoding='windows-1252'?><a n='\xe9'>caf\xe9 \x80</a>",
            r##"{"a": {"@n": "é", "#text": "café €"}}"##),
        ("latin1", b"<?xml version='1.0' encoding='ISO-8859-1'?><a>\xfc</a>", r##"{"a": "ü"}"##),
    ];

    #[test]
    fn accepted_documents() {
        for (case, xml, expected) in ACCEPTED {
            let expected: Value = serde_json::from_str(expected).unwrap();
            assert_eq!(to_json(xml), Ok(expected), "{case}");
        }
    }

    /// (input, expected error) for documents that must be refused.
    fn rejected() -> Vec<(&'static [u8], XmlError)> {
        let laughs =
            b"<?xml version='1.0'?><!DOCTYPE l [<!ENTITY a 'ha'><!ENTITY b '&a;&a;'>]><l>&b;</l>";
        vec![
            (b"<a><b></a></b>", MismatchedEnd("b".into(), 6)),
            (b"<a><b></b>", Unclosed("a".into(), 10)),
            (b"<a/>x", OutsideRoot(4)),
            (b"x<a/>", OutsideRoot(0)),
            (b"<a/>&amp;", OutsideRoot(4)),
            (b"<a/><b/>", MultipleRoots(4)),
            (b"<a/></a>", UnexpectedEnd(4)),
            (b"", NoRoot),
            (b" <!-- only --> ", NoRoot),
            (b"<a>&secret;</a>", BadReference(3)),
            (b"<a>&#0;</a>", BadReference(3)),
            (b"<a>&#x1;</a>", BadReference(3)),
            (b"<a b='&secret;'/>", BadReference(0)),
            (laughs, Doctype(21)),
            (
                b"<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///x'>]><x>&e;</x>",
                Doctype(0),
            ),
            (b"<a>\xff</a>", InvalidUtf8(3)),
            (b"\xEF\xBB\xBF<a>\xff</a>", InvalidUtf8(6)),
            (
                b"<?xml version='1.0' encoding='sjis'?><a/>",
                UnsupportedEncoding,
            ),
            (
                b"<?xml version='1.0' encoding='bogus'?><a/>",
                UnsupportedEncoding,
            ),
        ]
    }

    #[test]
    fn rejected_documents_without_echoing_input() {
        for (xml, expected) in rejected() {
            let error = to_json(xml).unwrap_err();
            assert_eq!(error, expected, "{}", String::from_utf8_lossy(xml));
            assert!(!error.to_string().contains("secret"), "{error}");
        }
    }

    #[test]
    fn rejects_other_syntax_errors() {
        for xml in ["<a", "<a x='1' x='2'/>", "<a x=1/>", "<a>&amp</a>"] {
            let error = to_json(xml.as_bytes()).unwrap_err();
            assert!(
                matches!(error, Malformed(..) | BadReference(_)),
                "{xml}: {error:?}"
            );
        }
    }

    #[test]
    fn enforces_depth_limit() {
        let nested = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(to_json(nested(MAX_DEPTH).as_bytes()).is_ok());
        let error = to_json(nested(MAX_DEPTH + 1).as_bytes());
        assert_eq!(error, Err(TooDeep(3 * 64)));
    }

    #[test]
    fn enforces_element_limit() {
        let flat = |n: usize| format!("<r>{}</r>", "<i/>".repeat(n - 1));
        let v = to_json(flat(MAX_ELEMENTS).as_bytes()).unwrap();
        assert_eq!(v["r"]["i"].as_array().map(Vec::len), Some(MAX_ELEMENTS - 1));
        let error = to_json(flat(MAX_ELEMENTS + 1).as_bytes());
        assert_eq!(error, Err(TooManyElements(3 + 4 * 99_999, MAX_ELEMENTS)));
        assert!(to_json_bounded(flat(10).as_bytes(), 10).is_ok());
        assert_eq!(
            to_json_bounded(flat(11).as_bytes(), 10),
            Err(TooManyElements(3 + 4 * 9, 10))
        );
    }

    #[test]
    fn long_names_are_truncated_in_errors() {
        let error = to_json(format!("<{}>", "n".repeat(500)).as_bytes());
        assert_eq!(error, Err(Unclosed("n".repeat(MAX_NAME_IN_ERROR), 502)));
    }
}
