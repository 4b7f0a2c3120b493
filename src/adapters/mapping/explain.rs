//! Where each canonical field's value comes from in one record: the path (or
//! rule, or default) the mapping took, following the same order of preference
//! as `apply` and `ro_apply`. What the value became is read from the mapped
//! record itself; this says only where it came from, for `mapping test`.

use std::borrow::Cow;

use serde_json::Value;

use super::path::{ValuePath, scalar_str};
use super::ro_apply::list_at;
use super::ro_spec::RoMapping;
use super::spec::{FieldKind, VehicleMapping};

/// Where one field's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The first of the field's paths that held a value.
    Path { path: String, raw: String },
    /// Every value the paths reached (lists), or the joined values (repair orders).
    Gathered {
        paths: Vec<String>,
        raw: Vec<String>,
    },
    /// A rule whose test matched.
    Rule { when: String, value: String },
    /// None of the paths held a value; the mapping's default.
    Default { value: String },
    /// Nothing: no path held a value and there is no default.
    Nothing,
}

/// One canonical field of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTrace {
    pub field: String,
    /// Every path the mapping tries for it, in order.
    pub tried: Vec<String>,
    pub source: Source,
}

/// The fields a vehicle mapping fills, traced in `record`.
pub fn explain_vehicle(mapping: &VehicleMapping, record: &Value) -> Vec<FieldTrace> {
    mapping
        .fields
        .iter()
        .map(|f| {
            let tried = texts(&f.paths);
            let enumerated = matches!(f.kind, FieldKind::Condition | FieldKind::Status);
            let rule = enumerated
                .then(|| f.rules.iter().find(|r| r.when.matches(record)))
                .flatten();
            let source = if let Some(rule) = rule {
                Source::Rule {
                    when: rule.when.path.as_str().to_owned(),
                    value: rule.value.clone(),
                }
            } else if f.kind == FieldKind::List {
                gathered(&f.paths, record)
            } else {
                first_of(&f.paths, record)
                    .or_else(|| f.default.clone().map(|value| Source::Default { value }))
                    .unwrap_or(Source::Nothing)
            };
            FieldTrace {
                field: f.name.to_owned(),
                tried,
                source,
            }
        })
        .collect()
}

/// The top-level fields a repair-order mapping fills, traced in `record`.
pub fn explain_repair_order(mapping: &RoMapping, record: &Value) -> Vec<FieldTrace> {
    mapping
        .fields
        .iter()
        .map(|(name, source)| FieldTrace {
            field: name.clone(),
            tried: texts(&source.paths),
            source: gathered(&source.paths, record),
        })
        .collect()
}

/// A path of a mapping, what it fills, and the rows it is read in.
pub struct PathRead<'m> {
    pub path: &'m ValuePath,
    /// The canonical field (or `identity`, `sold_when`, `jobs`...) it fills.
    pub role: String,
    /// Paths of one group are alternatives: one of them matching is enough.
    pub group: String,
    pub rows: Vec<&'m Value>,
}

/// Every path of a repair-order mapping with the rows it is read in: the
/// record itself, its job rows, or its totals rows. Joined paths are read
/// together, so each is its own group; totals sources are alternatives.
pub fn repair_order_paths<'m>(mapping: &'m RoMapping, record: &'m Value) -> Vec<PathRead<'m>> {
    let read = |path, role: String, group: String, rows| PathRead {
        path,
        role,
        group,
        rows,
    };
    let mut out = Vec::new();
    for (name, source) in &mapping.fields {
        for p in &source.paths {
            out.push(read(p, name.clone(), p.as_str().to_owned(), vec![record]));
        }
    }
    if let Some(jobs) = &mapping.jobs {
        out.push(read(
            &jobs.records,
            "jobs".into(),
            "jobs".into(),
            vec![record],
        ));
        let rows = list_at(&jobs.records, record);
        for (name, p) in &jobs.fields {
            out.push(read(
                p,
                format!("job {name}"),
                format!("job {name}"),
                rows.clone(),
            ));
        }
    }
    for (i, totals) in mapping.totals.iter().enumerate() {
        let rows = match &totals.records {
            Some(path) => {
                out.push(read(path, "totals".into(), "totals".into(), vec![record]));
                list_at(path, record)
            }
            None => vec![record],
        };
        for (name, p) in &totals.fields {
            let role = format!("totals {name}");
            out.push(read(p, role.clone(), format!("{role} {i}"), rows.clone()));
        }
    }
    out
}

/// Whether `path` reaches a value in `row` (any value, for `[*]` paths).
pub fn reaches(path: &ValuePath, row: &Value) -> bool {
    path.first(row).is_some()
}

fn texts(paths: &[ValuePath]) -> Vec<String> {
    paths.iter().map(|p| p.as_str().to_owned()).collect()
}

fn first_of(paths: &[ValuePath], record: &Value) -> Option<Source> {
    paths.iter().find_map(|p| {
        let raw = p
            .first(record)
            .and_then(scalar_str)
            .filter(|t| !t.is_empty())?;
        Some(Source::Path {
            path: p.as_str().to_owned(),
            raw: raw.into_owned(),
        })
    })
}

fn gathered(paths: &[ValuePath], record: &Value) -> Source {
    let mut hit = Vec::new();
    let mut raw = Vec::new();
    for path in paths {
        let values: Vec<Cow<'_, str>> = path
            .resolve(record)
            .into_iter()
            .filter_map(scalar_str)
            .filter(|t| !t.is_empty())
            .collect();
        if !values.is_empty() {
            hit.push(path.as_str().to_owned());
            raw.extend(values.into_iter().map(Cow::into_owned));
        }
    }
    if hit.is_empty() {
        Source::Nothing
    } else {
        Source::Gathered { paths: hit, raw }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MAPPING: &str = r#"
name = "t"
entity = "vehicle"
identity = ["/vin"]
[fields]
vin = "/vin"
make = ["/make", "/brand"]
condition = { path = "/cond", rules = [{ when = "/cpo", equals = true, value = "cpo" }], default = "used" }
photos = "/photos[*]/url"
"#;

    #[test]
    fn names_the_path_rule_or_default_each_field_came_from() {
        let mapping = VehicleMapping::from_toml(MAPPING).unwrap();
        let record = json!({"vin": "V1", "brand": "Ford", "cpo": true,
                            "photos": [{"url": "a"}, {"url": "b"}]});
        let traces = explain_vehicle(&mapping, &record);
        let source = |name: &str| {
            traces
                .iter()
                .find(|t| t.field == name)
                .map(|t| t.source.clone())
        };
        assert_eq!(
            source("make"),
            Some(Source::Path {
                path: "/brand".into(),
                raw: "Ford".into()
            })
        );
        assert_eq!(
            source("condition"),
            Some(Source::Rule {
                when: "/cpo".into(),
                value: "cpo".into()
            })
        );
        assert_eq!(
            source("photos"),
            Some(Source::Gathered {
                paths: vec!["/photos[*]/url".into()],
                raw: vec!["a".into(), "b".into()]
            })
        );
        let bare = explain_vehicle(&mapping, &json!({"vin": "V2"}));
        let condition = bare.iter().find(|t| t.field == "condition").unwrap();
        assert_eq!(
            condition.source,
            Source::Default {
                value: "used".into()
            }
        );
        let make = bare.iter().find(|t| t.field == "make").unwrap();
        assert_eq!(make.source, Source::Nothing);
        assert_eq!(make.tried, vec!["/make".to_owned(), "/brand".to_owned()]);
    }
}
