//! A vehicle's photo URLs, packed into one string.
//!
//! Feeds list ten to forty photos per vehicle, and the inventory mirror keeps
//! every vehicle in memory: as a `Vec<String>` each URL cost a 24-byte header
//! and an allocation of its own, several hundred bytes per vehicle (BENCHMARKS.md
//! "Large inventories"). On the wire and in schemas it is still an array of
//! strings.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Photo URLs in order, joined by newlines (a URL has none; one found in a
/// value is percent-encoded, as a URL would carry it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Photos(Box<str>);

impl Photos {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.split('\n').filter(|url| !url.is_empty())
    }
}

impl<S: AsRef<str>> FromIterator<S> for Photos {
    fn from_iter<I: IntoIterator<Item = S>>(urls: I) -> Self {
        let mut joined = String::new();
        for url in urls {
            let url = url.as_ref();
            if url.is_empty() {
                continue;
            }
            if !joined.is_empty() {
                joined.push('\n');
            }
            joined.push_str(&url.replace('\n', "%0A"));
        }
        Self(joined.into_boxed_str())
    }
}

impl From<Vec<String>> for Photos {
    fn from(urls: Vec<String>) -> Self {
        urls.into_iter().collect()
    }
}

impl Serialize for Photos {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Photos {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<String>::deserialize(deserializer)?.into())
    }
}

impl JsonSchema for Photos {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        <Vec<String>>::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<String>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::Photos;

    #[test]
    fn photos_travel_as_the_array_they_came_as() {
        let urls = vec![
            "https://a.example/1.jpg".to_owned(),
            "https://a.example/2.jpg".to_owned(),
        ];
        let photos = Photos::from(urls.clone());
        assert_eq!(photos.len(), 2);
        assert_eq!(
            serde_json::to_value(&photos).unwrap(),
            serde_json::json!(urls)
        );
        let back: Photos = serde_json::from_value(serde_json::json!(urls)).unwrap();
        assert_eq!(back, photos);
        assert!(Photos::from(Vec::new()).is_empty());
        assert_eq!(serde_json::to_string(&Photos::default()).unwrap(), "[]");
    }

    #[test]
    fn empty_urls_are_dropped_and_a_newline_inside_one_is_encoded() {
        let photos: Photos = ["", "https://a.example/x\ny.jpg", ""].into_iter().collect();
        assert_eq!(
            photos.iter().collect::<Vec<_>>(),
            ["https://a.example/x%0Ay.jpg"]
        );
    }
}
