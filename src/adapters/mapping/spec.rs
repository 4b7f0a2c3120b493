//! The mapping file format (`mappings/*.toml`): which upstream paths feed which
//! canonical vehicle field, with code tables. Compiled once into a
//! [`VehicleMapping`]; every problem is reported with its key.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::path::{ValuePath, scalar_str};
use crate::model::AmountUnit;

/// A mapping file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingFile {
    pub name: String,
    /// For people reading the file; the bridge does not use it.
    #[serde(default)]
    #[allow(dead_code)]
    pub description: String,
    /// What the records are; only `vehicle` so far, kept so the format can grow.
    #[allow(dead_code)]
    pub entity: Entity,
    /// For feeds: the file's format (CSV or TSV sniffed from the header line
    /// when absent; XML must be named, with where its records are).
    pub source: Option<SourceSpec>,
    /// Paths whose first non-blank value identifies a unit (a VIN, else a stock number).
    pub identity: Vec<String>,
    /// A unit matching any of these is sold (never listed, reported as unavailable).
    #[serde(default)]
    pub sold_when: Vec<ConditionSpec>,
    pub fields: BTreeMap<String, FieldSpec>,
    /// Code tables: upstream code (case-insensitive) → canonical value.
    #[serde(default)]
    pub enums: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub format: FeedFormat,
    /// XML only: the path of the records from the root element
    /// (`/listings/listing`); one element is one unit.
    pub records: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedFormat {
    Csv,
    Tsv,
    /// A syndication XML document (element names without prefixes, as SOAP
    /// answers are read), records at [`FeedSource::records`].
    Xml,
}

/// How a feed's body becomes records.
#[derive(Debug, Clone)]
pub struct FeedSource {
    pub format: FeedFormat,
    /// Where an XML feed's records are; `None` for delimited feeds.
    pub records: Option<ValuePath>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    Vehicle,
}

/// `path = value` tests; `equals` compares case-insensitively as text.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    pub path: String,
    #[serde(default)]
    pub equals: Option<Value>,
    #[serde(default, rename = "in")]
    pub one_of: Vec<String>,
}

/// One canonical field: a path, a list of fallback paths, or a table of options.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FieldSpec {
    Path(String),
    Paths(Vec<String>),
    Full(Box<FieldOptions>),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldOptions {
    pub path: PathList,
    /// Code table in `[enums]` to translate the value through.
    pub table: Option<String>,
    /// Overrides tried first: `{ when = "/certified", in = ["yes"], value = "cpo" }`.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
    /// Value used when no path yields one.
    pub default: Option<String>,
    /// Money: whether amounts are whole units (`major`) or cents (`minor`).
    pub amount_unit: Option<AmountUnit>,
    /// Mileage: path to the unit, translated through `unit_table`.
    pub unit_path: Option<String>,
    pub unit_table: Option<String>,
    /// Mileage: unit when the upstream gives none (`mi` or `km`).
    pub default_unit: Option<String>,
    /// Dates: chrono formats to try, in order.
    #[serde(default)]
    pub formats: Vec<String>,
    /// Lists: split a single text value on this delimiter.
    pub split: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(untagged)]
pub enum PathList {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub when: String,
    #[serde(default)]
    pub equals: Option<Value>,
    #[serde(default, rename = "in")]
    pub one_of: Vec<String>,
    pub value: String,
}

/// The canonical vehicle fields a mapping may fill, by kind of value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    Integer,
    Condition,
    Status,
    Mileage,
    Money,
    Date,
    List,
}

pub const VEHICLE_FIELDS: &[(&str, FieldKind)] = &[
    ("vin", FieldKind::Text),
    ("stock", FieldKind::Text),
    ("status", FieldKind::Status),
    ("condition", FieldKind::Condition),
    ("year", FieldKind::Integer),
    ("make", FieldKind::Text),
    ("model", FieldKind::Text),
    ("trim", FieldKind::Text),
    ("body", FieldKind::Text),
    ("fuel", FieldKind::Text),
    ("transmission", FieldKind::Text),
    ("drivetrain", FieldKind::Text),
    ("engine", FieldKind::Text),
    ("doors", FieldKind::Integer),
    ("exterior_color", FieldKind::Text),
    ("interior_color", FieldKind::Text),
    ("mileage", FieldKind::Mileage),
    ("price", FieldKind::Money),
    ("list_price", FieldKind::Money),
    ("msrp", FieldKind::Money),
    ("inventory_date", FieldKind::Date),
    ("photos", FieldKind::List),
    ("vdp_url", FieldKind::Text),
    ("description", FieldKind::Text),
];

/// Canonical values a `condition` / `status` code table may produce.
pub const CONDITION_VALUES: &[&str] = &["new", "used", "cpo"];
pub const STATUS_VALUES: &[&str] = &["available", "in_transit", "pending", "sold"];
pub const UNIT_VALUES: &[&str] = &["mi", "km"];

/// A compiled field.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: &'static str,
    pub kind: FieldKind,
    pub paths: Vec<ValuePath>,
    pub table: Option<BTreeMap<String, String>>,
    pub rules: Vec<Rule>,
    pub default: Option<String>,
    pub amount_unit: AmountUnit,
    pub unit_path: Option<ValuePath>,
    pub unit_table: Option<BTreeMap<String, String>>,
    pub default_unit: Option<String>,
    pub formats: Vec<String>,
    pub split: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub when: Test,
    pub value: String,
}

/// A compiled `path equals / in` test.
#[derive(Debug, Clone)]
pub struct Test {
    pub path: ValuePath,
    pub equals: Option<Value>,
    pub one_of: Vec<String>,
}

impl Test {
    /// Whether the record's value at the path equals `equals` or one of `in`
    /// (case-insensitively, as text).
    pub fn matches(&self, record: &Value) -> bool {
        let Some(found) = self.path.first(record).and_then(scalar_str) else {
            return false;
        };
        let equals = self
            .equals
            .as_ref()
            .and_then(scalar_str)
            .is_some_and(|want| want.eq_ignore_ascii_case(&found));
        equals
            || self
                .one_of
                .iter()
                .any(|want| want.eq_ignore_ascii_case(&found))
    }
}

/// A validated vehicle mapping, ready to apply.
#[derive(Debug, Clone)]
pub struct VehicleMapping {
    pub name: String,
    /// For feeds: the declared format (`None`: CSV or TSV, sniffed).
    pub feed: Option<FeedSource>,
    pub identity: Vec<ValuePath>,
    pub sold_when: Vec<Test>,
    pub fields: Vec<Field>,
    /// Canonical field name → index in `fields` (looked up for every field of every record).
    by_name: std::collections::HashMap<&'static str, usize>,
}

impl VehicleMapping {
    /// The mapping of one canonical field, if the mapping fills it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.by_name.get(name).map(|&i| &self.fields[i])
    }

    /// Parses and compiles a mapping file; all problems are returned together.
    pub fn from_toml(text: &str) -> Result<Self, Vec<String>> {
        let file: MappingFile =
            toml::from_str(text).map_err(|e| vec![crate::config::locate::described(text, &e)])?;
        compile(file)
    }

    /// Every upstream path this mapping reads, for checking against fixtures.
    pub fn all_paths(&self) -> Vec<&ValuePath> {
        let fields = self.fields.iter().flat_map(|f| {
            f.paths
                .iter()
                .chain(f.unit_path.iter())
                .chain(f.rules.iter().map(|r| &r.when.path))
        });
        self.identity
            .iter()
            .chain(self.sold_when.iter().map(|t| &t.path))
            .chain(fields)
            .collect()
    }
}

fn compile(file: MappingFile) -> Result<VehicleMapping, Vec<String>> {
    let mut errors = Vec::new();
    let mut path = |at: &str, text: &str| match ValuePath::parse(text) {
        Ok(p) => Some(p),
        Err(e) => {
            errors.push(format!("{at}: {e}"));
            None
        }
    };
    let identity: Vec<_> = file
        .identity
        .iter()
        .filter_map(|p| path("identity", p))
        .collect();
    let sold_when: Vec<_> = file
        .sold_when
        .iter()
        .filter_map(|c| {
            Some(Test {
                path: path("sold_when", &c.path)?,
                equals: c.equals.clone(),
                one_of: c.one_of.clone(),
            })
        })
        .collect();
    let mut fields = Vec::new();
    for (name, spec) in &file.fields {
        let Some(&(name, kind)) = VEHICLE_FIELDS.iter().find(|(n, _)| n == name) else {
            errors.push(format!("fields.{name}: not a canonical vehicle field"));
            continue;
        };
        match compile_field(name, kind, spec, &file.enums) {
            Ok(f) => fields.push(f),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if identity.is_empty() && errors.is_empty() {
        errors.push("identity: give at least one path".into());
    }
    let feed = file.source.as_ref().and_then(|s| {
        let records = match (s.format, &s.records) {
            (FeedFormat::Xml, Some(r)) => match ValuePath::parse(r) {
                Ok(p) => Some(p),
                Err(e) => {
                    errors.push(format!("source.records: {e}"));
                    return None;
                }
            },
            (FeedFormat::Xml, None) => {
                errors.push("source.records: an xml feed needs the path of its records".into());
                return None;
            }
            (_, Some(_)) => {
                errors.push("source.records: only an xml feed has a records path".into());
                return None;
            }
            (_, None) => None,
        };
        Some(FeedSource {
            format: s.format,
            records,
        })
    });
    for required in ["condition"] {
        if !fields.iter().any(|f| f.name == required) {
            errors.push(format!("fields.{required}: required"));
        }
    }
    if errors.is_empty() {
        let by_name = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name, i))
            .collect();
        Ok(VehicleMapping {
            name: file.name,
            feed,
            identity,
            sold_when,
            fields,
            by_name,
        })
    } else {
        Err(errors)
    }
}

fn compile_field(
    name: &'static str,
    kind: FieldKind,
    spec: &FieldSpec,
    enums: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<Field, Vec<String>> {
    let options = match spec {
        FieldSpec::Path(p) => FieldOptions {
            path: PathList::One(p.clone()),
            ..Default::default()
        },
        FieldSpec::Paths(ps) => FieldOptions {
            path: PathList::Many(ps.clone()),
            ..Default::default()
        },
        FieldSpec::Full(o) => (**o).clone(),
    };
    let mut errors = Vec::new();
    let at = format!("fields.{name}");
    let mut parse = |text: &str| {
        ValuePath::parse(text)
            .map_err(|e| errors.push(format!("{at}: {e}")))
            .ok()
    };
    let paths: Vec<ValuePath> = match &options.path {
        PathList::None => Vec::new(),
        PathList::One(p) => parse(p).into_iter().collect(),
        PathList::Many(ps) => ps.iter().filter_map(|p| parse(p)).collect(),
    };
    let unit_path = options.unit_path.as_deref().and_then(&mut parse);
    let rules: Vec<Rule> = options
        .rules
        .iter()
        .filter_map(|r| {
            Some(Rule {
                when: Test {
                    path: parse(&r.when)?,
                    equals: r.equals.clone(),
                    one_of: r.one_of.clone(),
                },
                value: r.value.clone(),
            })
        })
        .collect();
    let mut lookup = |table: &Option<String>| -> Option<BTreeMap<String, String>> {
        let table = table.as_ref()?;
        match enums.get(table) {
            Some(t) => Some(
                t.iter()
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.clone()))
                    .collect(),
            ),
            None => {
                errors.push(format!("{at}: no [enums.{table}] table"));
                None
            }
        }
    };
    let table = lookup(&options.table);
    let unit_table = lookup(&options.unit_table);
    if paths.is_empty() && options.default.is_none() && rules.is_empty() {
        errors.push(format!("{at}: give a path, rules or a default"));
    }
    let allowed = match kind {
        FieldKind::Condition => Some(CONDITION_VALUES),
        FieldKind::Status => Some(STATUS_VALUES),
        _ => None,
    };
    if let Some(allowed) = allowed {
        let produced = table
            .iter()
            .flat_map(|t| t.values())
            .chain(rules.iter().map(|r| &r.value))
            .chain(options.default.iter());
        for value in produced {
            if !allowed.contains(&value.as_str()) {
                errors.push(format!(
                    "{at}: {value:?} is not one of {}",
                    allowed.join(", ")
                ));
            }
        }
    }
    for unit in unit_table
        .iter()
        .flat_map(|t| t.values())
        .chain(options.default_unit.iter())
    {
        if !UNIT_VALUES.contains(&unit.as_str()) {
            errors.push(format!("{at}: unit {unit:?} is not mi or km"));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Field {
        name,
        kind,
        paths,
        table,
        rules,
        default: options.default,
        amount_unit: options.amount_unit.unwrap_or_default(),
        unit_path,
        unit_table,
        default_unit: options.default_unit,
        formats: options.formats,
        split: options.split,
    })
}
