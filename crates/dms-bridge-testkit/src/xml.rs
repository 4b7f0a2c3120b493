//! The mocks' own XML reading: roxmltree, a strict XML 1.0 parser, and a few
//! lookups by local name. Deliberately not the bridge's readers (quick-xml,
//! lenient for ADF): what the bridge writes is checked by another parser.

use roxmltree::{Document, Node};

/// Parses `body` as a UTF-8 XML document; `None` when it is not one (a DTD
/// included: roxmltree refuses them by default, as real receivers should).
pub(crate) fn parse(body: &[u8]) -> Option<Document<'_>> {
    Document::parse(std::str::from_utf8(body).ok()?).ok()
}

/// The child elements with this local name (namespace prefixes ignored: senders
/// are inconsistent about prefixes, never about local names).
pub(crate) fn children<'a, 'input>(
    node: Node<'a, 'input>,
    name: &str,
) -> impl Iterator<Item = Node<'a, 'input>> {
    node.children()
        .filter(move |n| n.is_element() && n.tag_name().name() == name)
}

/// The element reached through children with these local names, the first of each.
pub(crate) fn descend<'a, 'input>(
    node: Node<'a, 'input>,
    path: &[&str],
) -> Option<Node<'a, 'input>> {
    path.iter()
        .try_fold(node, |n, name| children(n, name).next())
}

/// The element's direct text (CDATA included), trimmed of XML whitespace only.
pub(crate) fn text(node: Node<'_, '_>) -> String {
    let all: String = node
        .children()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect();
    all.trim_matches([' ', '\t', '\r', '\n']).to_owned()
}

/// The text at `path` below `node`; empty when `node` or an element on the way is
/// missing, so a request without the element reads like one with a wrong value.
pub(crate) fn text_at(node: Option<Node<'_, '_>>, path: &[&str]) -> String {
    node.and_then(|n| descend(n, path))
        .map(text)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_text_and_cdata() {
        let doc = parse(
            br#"<s:E xmlns:s="u"><s:H><P Type="t"> a <![CDATA[<b>]]> </P></s:H><s:H>2</s:H></s:E>"#,
        )
        .unwrap();
        let root = Some(doc.root());
        assert_eq!(text_at(root, &["E", "H", "P"]), "a <b>");
        assert_eq!(text_at(root, &["E", "H", "Q"]), "");
        assert_eq!(text_at(None, &[]), "");
        assert_eq!(text(doc.root_element()), "");
    }

    #[test]
    fn refuses_what_is_not_well_formed_xml() {
        assert!(parse(b"<a><b></a>").is_none());
        assert!(parse(b"<!DOCTYPE a []><a/>").is_none());
        assert!(parse(b"<a>\xff</a>").is_none());
        assert!(parse(b"plain text").is_none());
    }
}
