//! `dms-bridge mapping test`: runs a profile's records path and a mapping
//! over a saved upstream answer, offline, with the same code the adapters run,
//! and reports each record field by field with the path each value came from,
//! every field that did not map and why, and what is wrong with the mapping as
//! a whole (a path that matched nothing, a required field no record has).

pub mod inputs;
mod print;
pub mod report;

use std::path::PathBuf;

use chrono::Utc;
use chrono_tz::Tz;

use crate::adapters::mapping::MapContext;
use crate::config::catalog;
use inputs::{Answer, InputError, LoadedProfile, Mapping};
pub use print::render;
use report::{Finding, Report};

/// What to test, as the command line gives it.
#[derive(Debug, Clone)]
pub struct Options {
    /// A built-in profile name or a profile file.
    pub profile: Option<String>,
    /// A built-in mapping name or a mapping file; by default the one the profile names.
    pub mapping: Option<String>,
    /// Saved answers of the same read; their records are tested together, so
    /// a path needs a value in one of them (open and closed orders, say).
    pub responses: Vec<PathBuf>,
    /// A repair-order profile's read (`all`, `open`, `closed`, `get`).
    pub read: Option<String>,
    /// Where the records are, overriding the profile's path.
    pub records: Option<String>,
    pub timezone: Tz,
    pub currency: String,
    /// Paths allowed to match nothing in this answer (e.g. `/deleted` in a
    /// sample without removed units).
    pub allow_unmatched: Vec<String>,
}

/// The dealership id mapped records carry (ids are derived from it).
const TEST_DEALERSHIP: &str = "mapping-test";

pub fn run(options: &Options) -> Result<Report, InputError> {
    let profile = options
        .profile
        .as_deref()
        .map(|p| inputs::read_named(p, catalog::builtin_profile))
        .transpose()?;
    let loaded = profile.as_ref().map(inputs::load_profile).transpose()?;
    let mapping_named = match (&options.mapping, &loaded, &profile) {
        (Some(m), _, _) => inputs::read_named(m, catalog::builtin_mapping)?,
        (None, Some(loaded), Some(named)) => profile_mapping(loaded, named, options)?,
        _ => {
            return Err(InputError::Usage(
                "give --mapping, or a --profile that names one".into(),
            ));
        }
    };
    let mapping = inputs::load_mapping(&mapping_named)?;
    let entity = match &mapping {
        Mapping::Vehicle(_) => "vehicle",
        Mapping::RepairOrder(_) => "repair_order",
    };
    let operation = match &loaded {
        Some(p) => Some(inputs::operation(p, entity, options.read.as_deref())?),
        None => None,
    };
    let feed = match &mapping {
        Mapping::Vehicle(m) => m.feed.as_ref(),
        Mapping::RepairOrder(_) => None,
    };
    let (records_from, records_path) = match (&options.records, &operation) {
        (Some(r), _) => ("--records".to_owned(), r.clone()),
        (None, Some(op)) => (
            format!("profile [{}] records", op.section),
            op.records.clone(),
        ),
        (None, None) => ("the answer itself".to_owned(), String::new()),
    };
    if options.responses.is_empty() {
        return Err(InputError::Usage("give at least one --response".into()));
    }
    let list_required = operation.as_ref().is_some_and(|o| o.list_required);
    let mut findings = Vec::new();
    let mut records = Vec::new();
    for response in &options.responses {
        let answer = inputs::read_answer(response, feed)?;
        let tree = match answer {
            Answer::Rows(rows) => {
                records.extend(rows);
                continue;
            }
            Answer::Tree(tree) => tree,
        };
        let name = response.display();
        match inputs::records_at(&tree, &records_path)? {
            Some(found) => {
                if list_required && !records_path.is_empty() && !tree_is_list(&tree, &records_path)
                {
                    findings.push(Finding::error(format!(
                        "{name}: the records path {records_path} holds one object, not a \
                         list: the REST engine reads that answer as broken"
                    )));
                }
                records.extend(found);
            }
            None => findings.push(Finding::error(format!(
                "{name}: the records path {records_path} ({records_from}) matched nothing"
            ))),
        }
    }
    let ctx = MapContext {
        dealership_id: TEST_DEALERSHIP,
        currency: &options.currency,
        timezone: options.timezone,
        verified_at: Utc::now(),
    };
    let (record_reports, paths) = match &mapping {
        Mapping::Vehicle(m) => (
            report::vehicle_records(m, &records, &ctx),
            report::vehicle_paths(m, &records),
        ),
        Mapping::RepairOrder(m) => (
            report::repair_order_records(m, &records, &ctx),
            report::repair_order_paths(m, &records),
        ),
    };
    findings.extend(report::findings(
        entity,
        &record_reports,
        &paths,
        &options.allow_unmatched,
    ));
    Ok(Report {
        mapping: mapping_named.name,
        entity,
        profile: options.profile.clone(),
        responses: options
            .responses
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        records_from,
        records_path,
        records: record_reports,
        paths,
        findings,
    })
}

/// The mapping the profile's operation names, resolved beside the profile.
fn profile_mapping(
    loaded: &LoadedProfile,
    named: &inputs::Named,
    options: &Options,
) -> Result<inputs::Named, InputError> {
    // The entity is not known before the mapping is read: a profile with
    // inventory reads vehicles unless a repair-order read was asked for.
    let has_inventory = match loaded {
        LoadedProfile::Rest(p) => p.inventory.is_some(),
        LoadedProfile::Soap(p) => p.inventory.is_some(),
    };
    let entity = if has_inventory && options.read.is_none() {
        "vehicle"
    } else {
        "repair_order"
    };
    let op = inputs::operation(loaded, entity, options.read.as_deref())?;
    let reference = op.mapping.unwrap_or_default();
    let reference = if catalog::is_file_reference(&reference) {
        named.base.join(&reference).display().to_string()
    } else {
        reference
    };
    inputs::read_named(&reference, catalog::builtin_mapping)
}

fn tree_is_list(tree: &serde_json::Value, path: &str) -> bool {
    crate::adapters::mapping::ValuePath::parse(path)
        .ok()
        .and_then(|p| p.first(tree).map(serde_json::Value::is_array))
        .unwrap_or(false)
}
