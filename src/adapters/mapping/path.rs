//! A small path language for picking values out of upstream JSON (feed rows are
//! turned into JSON objects first): `/financials/prices[type=SELLING]/amount`,
//! `/photos[*]/url`, `/results/0/vin`.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
    /// `name[field=value]`: the first element of array `name` whose `field` equals `value`.
    Select {
        key: String,
        field: String,
        value: String,
    },
    /// `name[*]`: every element of array `name`.
    Each(String),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValuePath {
    text: String,
    segments: Vec<Segment>,
    /// Whether a `[*]` segment can yield several values.
    fans_out: bool,
}

impl ValuePath {
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!("path {text:?} must start with /"));
        };
        let segments: Vec<Segment> = rest
            .split('/')
            .map(parse_segment)
            .collect::<Result<_, _>>()?;
        let fans_out = segments.iter().any(|s| matches!(s, Segment::Each(_)));
        Ok(Self {
            text: text.to_owned(),
            segments,
            fans_out,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Every value the path reaches (several only through `[*]`).
    pub fn resolve<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for segment in &self.segments {
            let mut next = Vec::new();
            for value in current {
                step(segment, value, &mut next);
            }
            current = next;
        }
        current
    }

    /// The first value that is present and not null or blank. Mapping runs this
    /// for every field of every record, so single-valued paths walk without allocating.
    pub fn first<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        if self.fans_out {
            return self.resolve(root).into_iter().find(|v| !is_blank(v));
        }
        let mut current = root;
        for segment in &self.segments {
            current = step_one(segment, current)?;
        }
        (!is_blank(current)).then_some(current)
    }
}

fn step<'a>(segment: &Segment, value: &'a Value, out: &mut Vec<&'a Value>) {
    match segment {
        Segment::Key(key) => out.extend(value.get(key)),
        Segment::Index(i) => out.extend(value.get(*i)),
        Segment::Select {
            key,
            field,
            value: wanted,
        } => {
            let hit = value.get(key).and_then(Value::as_array).and_then(|items| {
                items.iter().find(|item| {
                    item.get(field)
                        .and_then(scalar_text)
                        .is_some_and(|t| t.eq_ignore_ascii_case(wanted))
                })
            });
            out.extend(hit);
        }
        Segment::Each(key) => {
            if let Some(items) = value.get(key).and_then(Value::as_array) {
                out.extend(items.iter());
            }
        }
    }
}

fn step_one<'a>(segment: &Segment, value: &'a Value) -> Option<&'a Value> {
    match segment {
        Segment::Key(key) => value.get(key),
        Segment::Index(i) => value.get(*i),
        Segment::Select {
            key,
            field,
            value: wanted,
        } => value.get(key)?.as_array()?.iter().find(|item| {
            item.get(field)
                .and_then(scalar_str)
                .is_some_and(|t| t.eq_ignore_ascii_case(wanted))
        }),
        Segment::Each(_) => None,
    }
}

fn parse_segment(segment: &str) -> Result<Segment, String> {
    if segment.is_empty() {
        return Err("empty path segment".into());
    }
    let Some((key, selector)) = segment.split_once('[') else {
        return Ok(match segment.parse::<usize>() {
            Ok(i) => Segment::Index(i),
            Err(_) => Segment::Key(segment.to_owned()),
        });
    };
    let selector = selector
        .strip_suffix(']')
        .ok_or_else(|| format!("unclosed [ in {segment:?}"))?;
    if selector == "*" {
        return Ok(Segment::Each(key.to_owned()));
    }
    let (field, value) = selector
        .split_once('=')
        .ok_or_else(|| format!("selector in {segment:?} must be [*] or [field=value]"))?;
    Ok(Segment::Select {
        key: key.to_owned(),
        field: field.to_owned(),
        value: value.to_owned(),
    })
}

/// Text of a scalar (string, number or boolean), trimmed, borrowed where possible.
pub fn scalar_str(value: &Value) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    match value {
        Value::String(s) => Some(Cow::Borrowed(s.trim())),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        _ => None,
    }
}

/// Text of a scalar (string, number or boolean), trimmed.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selects_keys_indexes_and_array_elements() {
        let doc = json!({"prices": [{"type": "MSRP", "amount": 1}, {"type": "SELLING", "amount": "2"}],
                         "photos": [{"url": "a"}, {"url": "b"}], "list": ["x", "y"], "blank": " "});
        let get = |p: &str| {
            ValuePath::parse(p).map(|p| p.resolve(&doc).into_iter().cloned().collect::<Vec<_>>())
        };
        assert_eq!(get("/prices[type=selling]/amount"), Ok(vec![json!("2")]));
        assert_eq!(get("/photos[*]/url"), Ok(vec![json!("a"), json!("b")]));
        assert_eq!(get("/list/1"), Ok(vec![json!("y")]));
        assert_eq!(get("/missing/deeper"), Ok(vec![]));
        assert_eq!(
            ValuePath::parse("/blank").map(|p| p.first(&doc).is_none()),
            Ok(true)
        );
    }

    #[test]
    fn refuses_malformed_paths() {
        assert!(ValuePath::parse("prices").is_err());
        assert!(ValuePath::parse("/a//b").is_err());
        assert!(ValuePath::parse("/a[b").is_err());
        assert!(ValuePath::parse("/a[b]").is_err());
    }
}
