//! What an ADF reader keeps besides the fields it knows: unrecognised elements
//! as `(path, text)` leaves, and the first-one-wins rule for repeated fields.

use super::tree::Element;

/// Unrecognised elements, flattened to `(path, text)` leaves.
#[derive(Default)]
pub(super) struct Extras(pub(super) Vec<(String, String)>);

impl Extras {
    /// Records `element` (and everything under it) found under `parent`.
    pub(super) fn add(&mut self, parent: &str, element: &Element) {
        let path = join(parent, &element.name);
        if let Some(text) = element.value() {
            self.0.push((path.clone(), text));
        }
        for child in &element.children {
            self.add(&path, child);
        }
    }

    pub(super) fn push(&mut self, path: String, text: String) {
        self.0.push((path, text));
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}

/// Fills `slot` unless an earlier element already did.
pub(super) fn set_once(slot: &mut Option<String>, value: Option<String>) {
    if slot.is_none() {
        *slot = value;
    }
}
