//! XML bodies (SOAP answers and requests, ADF leads), rewritten event by
//! event so the document keeps its shape, prefixes and namespaces: the text of
//! an element, or an attribute, whose name holds customer data is faked, a
//! credential's (WS-Security `Password`) redacted, other text searched for
//! e-mails and phones.

use std::borrow::Cow;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesRef, BytesStart, BytesText, Event};
use quick_xml::reader::Reader;
use quick_xml::writer::Writer;

use super::fake::Faker;
use super::keys::{classify, normalize};

/// Why an XML body could not be rewritten.
#[derive(Debug, thiserror::Error)]
#[error("XML is not well formed: {0}")]
pub struct XmlScrubError(String);

fn fail(e: impl std::fmt::Display) -> XmlScrubError {
    XmlScrubError(e.to_string())
}

struct Scrubber<'f> {
    faker: &'f Faker,
    /// Enclosing element names (normalised local names), outermost first.
    stack: Vec<String>,
    /// Text of the current element not written yet: text and references
    /// arrive as separate events, and a value is faked whole.
    pending: String,
    out: Writer<Vec<u8>>,
}

/// The document with its customer data faked.
pub fn scrub(faker: &Faker, text: &str, ancestors: &[String]) -> Result<Vec<u8>, XmlScrubError> {
    let mut reader = Reader::from_str(text);
    let mut s = Scrubber {
        faker,
        stack: ancestors.to_vec(),
        pending: String::new(),
        out: Writer::new(Vec::with_capacity(text.len())),
    };
    loop {
        match reader.read_event().map_err(fail)? {
            Event::Text(t) => s.pending.push_str(&t.xml10_content()),
            Event::GeneralRef(r) => s.pending.push_str(&reference(&r)?),
            Event::Start(e) => {
                s.flush()?;
                let start = s.start(&e)?;
                s.stack.push(normalize(&local(&e)));
                s.write(Event::Start(start))?;
            }
            Event::Empty(e) => {
                s.flush()?;
                let start = s.start(&e)?;
                s.write(Event::Empty(start))?;
            }
            Event::End(e) => {
                s.flush()?;
                s.stack.pop();
                s.write(Event::End(e))?;
            }
            Event::CData(c) => {
                s.flush()?;
                let fake = s.fake_text(&c.xml10_content());
                s.write(Event::Text(BytesText::new(&fake)))?;
            }
            Event::Eof => break,
            other => {
                s.flush()?;
                s.write(other)?;
            }
        }
    }
    s.flush()?;
    Ok(s.out.into_inner())
}

fn local(e: &BytesStart<'_>) -> String {
    e.local_name().as_ref().to_owned()
}

fn reference(r: &BytesRef<'_>) -> Result<String, XmlScrubError> {
    if r.is_char_ref() {
        return match r.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            _ => Err(fail("a bad character reference")),
        };
    }
    quick_xml::escape::resolve_predefined_entity(r)
        .map(str::to_owned)
        .ok_or_else(|| fail("an unknown entity"))
}

impl Scrubber<'_> {
    fn write(&mut self, event: Event<'_>) -> Result<(), XmlScrubError> {
        self.out.write_event(event).map_err(fail)
    }

    /// The element's text faked by the element's name in its context.
    fn fake_text(&self, text: &str) -> String {
        if text.trim().is_empty() {
            return text.to_owned();
        }
        let (name, outer) = match self.stack.split_last() {
            Some((name, outer)) => (name.as_str(), outer),
            None => ("", &[][..]),
        };
        match classify(name, outer) {
            Some(class) => self.faker.value(class, text),
            None => self.faker.text(text),
        }
    }

    fn flush(&mut self) -> Result<(), XmlScrubError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending);
        let fake = self.fake_text(&text);
        self.write(Event::Text(BytesText::new(&fake)))
    }

    /// The start tag with its attributes' values faked by their names.
    fn start(&self, e: &BytesStart<'_>) -> Result<BytesStart<'static>, XmlScrubError> {
        let name = e.name().as_ref().to_owned();
        let mut context = self.stack.clone();
        context.push(normalize(&local(e)));
        let mut start = BytesStart::new(name);
        for attribute in e.attributes() {
            let attribute = attribute.map_err(fail)?;
            let key = attribute.key.as_ref().to_owned();
            let value = attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(fail)?;
            let value = if attribute.key.as_namespace_binding().is_some() {
                value
            } else {
                let local = attribute.key.local_name().as_ref().to_owned();
                Cow::Owned(match classify(&local, &context) {
                    Some(class) => self.faker.value(class, &value),
                    None => self.faker.text(&value),
                })
            };
            start.push_attribute((key.as_str(), value.as_ref()));
        }
        Ok(start)
    }
}
