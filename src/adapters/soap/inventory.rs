//! The inventory read of a SOAP profile: one call that answers every unit
//! (STAR's `GetVehicleInventory` / `ShowVehicleInventory`, OpenTrack's
//! inventory lookup), each record mapped by a vehicle mapping as feed rows and
//! JSON records are. The mirror reads it in the background, so one call every
//! few minutes serves every search.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::Utc;

use super::SoapAdapter;
use super::call::{SoapOperation, compile_operation};
use super::profile::SoapInventorySpec;
use crate::adapters::mapping::{MapContext, MappedUnit, VehicleMapping, list_at, map_vehicle};
use crate::adapters::template::{NO_PARAMS, TemplateContext};
use crate::adapters::{AdapterError, BuildError, InventorySnapshot};
use crate::config::catalog;

/// The compiled `[inventory]` section.
pub(super) struct InventoryOp {
    mapping: VehicleMapping,
    op: SoapOperation,
}

pub(super) fn compile(
    spec: &SoapInventorySpec,
    ctx: &TemplateContext<'_>,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<InventoryOp> {
    let mapping = catalog::read(&spec.mapping, base, catalog::builtin_mapping)
        .map_err(|e| vec![e])
        .and_then(|text| VehicleMapping::from_toml(&text))
        .map_err(|es| {
            errors.extend(
                es.into_iter()
                    .map(|e| BuildError::in_mapping(&spec.mapping, e)),
            )
        })
        .ok();
    let ctx = TemplateContext {
        params: &NO_PARAMS,
        ..*ctx
    };
    let op = compile_operation("inventory", "inventory", &spec.operation(), &ctx, errors);
    Some(InventoryOp {
        mapping: mapping?,
        op: op?,
    })
}

impl SoapAdapter {
    /// Reads and maps the whole inventory. Records the mapping cannot read
    /// are skipped (and counted in the log); an answer none of whose records
    /// maps is not an inventory.
    pub(super) async fn read_inventory(&self) -> Result<InventorySnapshot, AdapterError> {
        let inventory = self.inventory.as_ref().ok_or(AdapterError::Unsupported)?;
        let doc = self.call(&inventory.op, &BTreeMap::new()).await?;
        let fetched_at = Utc::now();
        let d = &self.dealership;
        let ctx = MapContext {
            dealership_id: &d.id,
            currency: &d.currency,
            timezone: d.timezone,
            verified_at: fetched_at,
        };
        let records = list_at(&inventory.op.records, &doc);
        let mut skipped = 0usize;
        let units: Vec<MappedUnit> = records
            .iter()
            .filter_map(|record| {
                map_vehicle(&inventory.mapping, record, &ctx)
                    .map_err(|_| skipped += 1)
                    .ok()
            })
            .collect();
        if units.is_empty() && !records.is_empty() {
            return Err(AdapterError::InvalidResponse(
                "no inventory record could be mapped".into(),
            ));
        }
        if skipped > 0 {
            tracing::warn!(profile = %self.profile_name, skipped, "Skipped inventory records the mapping cannot read.");
        }
        tracing::debug!(profile = %self.profile_name, units = units.len(), "Read upstream inventory.");
        Ok(InventorySnapshot::from_units(units, fetched_at))
    }
}
