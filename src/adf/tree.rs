//! A small element tree built with quick-xml's event reader, tolerant of what
//! real ADF gets wrong: case, namespace prefixes, unquoted attributes, lone
//! `&`, mismatched or missing end tags. Mapping the tree to the model is then
//! plain lookups instead of a state machine.

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};

/// One element; names are lower-case local names (`<adf:Prospect>` → `prospect`).
#[derive(Debug, Default)]
pub(super) struct Element {
    pub name: String,
    /// `(lower-case local name, value)`, values unescaped where possible.
    pub attrs: Vec<(String, String)>,
    /// Direct text, CDATA and references, untrimmed.
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The attribute's trimmed value, or `None` if absent or blank.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim())
            .filter(|value| !value.is_empty())
    }

    /// Trimmed text, `None` when blank.
    pub fn value(&self) -> Option<String> {
        let text = self.text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// Every element named `name` below this one, not looking inside matches.
    pub fn find_all<'a>(&'a self, name: &str, found: &mut Vec<&'a Element>) {
        for child in &self.children {
            if child.name == name {
                found.push(child);
            } else {
                child.find_all(name, found);
            }
        }
    }
}

/// The parsed tree under a nameless root, and where reading stopped on a
/// syntax error (byte offset in the text), if it did.
pub(super) struct Document {
    pub root: Element,
    pub error_at: Option<u64>,
}

pub(super) fn build(text: &str) -> Document {
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.allow_dangling_amp = true;

    let mut stack = vec![Element::default()];
    let mut error_at = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(start)) => stack.push(open(&start)),
            Ok(Event::Empty(start)) => attach(&mut stack, open(&start)),
            Ok(Event::End(end)) => close(&mut stack, &local_name(end.name().as_ref())),
            Ok(Event::Text(text)) => push_text(&mut stack, &text.xml10_content()),
            Ok(Event::CData(cdata)) => push_text(&mut stack, &cdata.xml10_content()),
            Ok(Event::GeneralRef(reference)) => push_text(&mut stack, &resolve(&reference)),
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(_) => {
                // Keep what was read so far: a lead cut short is still a lead.
                error_at = Some(reader.error_position());
                break;
            }
        }
    }
    // Elements left open (truncated input) are closed as if at the end.
    while stack.len() > 1 {
        close_top(&mut stack);
    }
    let root = stack.pop().unwrap_or_default();
    Document { root, error_at }
}

fn open(start: &BytesStart) -> Element {
    Element {
        name: local_name(start.name().as_ref()),
        attrs: attributes(start),
        ..Element::default()
    }
}

/// HTML-style parsing accepts `sequence=1` (unquoted) and valueless attributes;
/// a malformed attribute is skipped rather than losing the element.
fn attributes(start: &BytesStart) -> Vec<(String, String)> {
    let mut attrs = start.html_attributes();
    attrs.with_checks(false);
    attrs
        .flatten()
        .map(|attr| {
            // A lone `&` makes unescaping fail; the raw value is then the best reading.
            let value = quick_xml::escape::unescape(&attr.value)
                .map_or_else(|_| attr.value.to_string(), std::borrow::Cow::into_owned);
            (local_name(attr.key.as_ref()), value)
        })
        .collect()
}

fn local_name(qname: &str) -> String {
    let local = qname.rsplit(':').next().unwrap_or_default();
    local.to_lowercase()
}

/// Predefined and character references are decoded; anything else (`&nbsp;`,
/// or `& Sons;` from an unescaped `&`) is kept exactly as written.
fn resolve(reference: &BytesRef) -> String {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        return c.to_string();
    }
    let name: &str = reference;
    match resolve_predefined_entity(name) {
        Some(text) => text.to_owned(),
        None => format!("&{name};"),
    }
}

fn push_text(stack: &mut [Element], text: &str) {
    if let Some(top) = stack.last_mut() {
        top.text.push_str(text);
    }
}

fn attach(stack: &mut [Element], element: Element) {
    if let Some(top) = stack.last_mut() {
        top.children.push(element);
    }
}

/// Closes up to the innermost open element with that name. An end tag that
/// matches nothing open closes the current element only if it is a text leaf
/// (`<model>Civic</make>`), and is ignored otherwise (a stray `</div>`).
fn close(stack: &mut Vec<Element>, name: &str) {
    match stack.iter().skip(1).rposition(|open| open.name == name) {
        Some(depth) => {
            while stack.len() > depth + 1 {
                close_top(stack);
            }
        }
        None => {
            let top_is_leaf =
                stack.len() > 1 && stack.last().is_some_and(|e| e.children.is_empty());
            if top_is_leaf {
                close_top(stack);
            }
        }
    }
}

fn close_top(stack: &mut Vec<Element>) {
    if let Some(done) = stack.pop() {
        attach(stack, done);
    }
}
