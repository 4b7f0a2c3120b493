//! The canonical tool surface (toolset v1): names, descriptions, annotations,
//! scopes and schemas. Schemas are derived from the same Rust types that parse
//! the arguments and build the results, so they cannot drift.

mod budget;
mod check;
mod compact_schema;
mod context;
pub mod customer;
pub mod dealership;
pub mod deals;
pub mod events;
pub mod inventory;
pub mod leads;
mod names;
mod portable_schema;
pub mod repair_orders;
pub mod service;
mod services;
mod table;

pub use check::Check;
pub use context::{Handled, HandlerError, ToolArgs, ToolContext};
pub use names::is_host_safe;
pub use services::{Dealership, Route, ServiceParts, Services, unsupported};
pub use table::{AnyArgs, TOOLS, ToolSpec};

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;

use crate::config::{ToolClass, ToolNames};
use crate::contract::Scope;
use crate::model::Domain;

/// Version of the public tool contract (TOOLSET.md). Bump the major on any
/// breaking change to names, schemas or error codes.
pub const TOOLSET_VERSION: &str = "4.2.0";

/// The `_meta` key of a tool definition that holds its canonical name.
pub const CANONICAL_NAME_META: &str = "io.dms-bridge/canonical_name";

/// A tool of the table, by its row.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolId(u8);

impl std::fmt::Debug for ToolId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl ToolId {
    /// Every tool, in table order.
    pub const ALL: [ToolId; TOOLS.len()] = {
        let mut all = [ToolId(0); TOOLS.len()];
        let mut i = 0;
        while i < TOOLS.len() {
            all[i] = ToolId(i as u8);
            i += 1;
        }
        all
    };

    /// The tool's row.
    pub fn spec(self) -> &'static ToolSpec {
        &TOOLS[self.0 as usize]
    }

    /// The canonical (AutomotiveMCP) name, `inventory.search`: the name in
    /// TOOLSET.md, metrics, audit records and cache keys.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The host-safe name, `inventory_search`: the canonical name with `_`
    /// for `.`, so it matches `^[a-zA-Z0-9_-]{1,64}$`.
    pub fn host_safe_name(self) -> &'static str {
        names::host_safe(self.0 as usize)
    }

    /// The name `tools/list` shows under `naming`.
    pub fn listed_name(self, naming: ToolNames) -> &'static str {
        match naming {
            ToolNames::HostSafe => self.host_safe_name(),
            ToolNames::Canonical => self.name(),
        }
    }

    /// The tool called `name`, by either of its names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.name() == name || t.host_safe_name() == name)
    }

    /// The domain whose upstream serves the tool; `None` for tools answered from config.
    pub fn domain(self) -> Option<Domain> {
        self.spec().domain
    }

    /// Scope a caller needs; `None` means any authenticated or anonymous caller
    /// with access to the dealership.
    pub fn scope(self) -> Option<Scope> {
        let write = self.class() == ToolClass::Write;
        self.domain().map(|d| match (d, write) {
            (Domain::Inventory, _) => Scope::InventoryRead,
            (Domain::Leads, false) => Scope::LeadsRead,
            (Domain::Leads, true) => Scope::LeadsWrite,
            (Domain::Service, false) => Scope::ServiceRead,
            (Domain::Service, true) => Scope::ServiceWrite,
            // Repair orders are service-department data: the same read scope.
            (Domain::RepairOrders, _) => Scope::ServiceRead,
            (Domain::Deals, false) => Scope::DealsRead,
            (Domain::Deals, true) => Scope::DealsWrite,
        })
    }

    /// The scope that lets dealership staff reach every customer's records
    /// through this tool, where records have owners (see `ToolContext::owner`).
    pub fn staff_scope(self) -> Option<Scope> {
        self.spec().staff_scope
    }

    /// The quota class.
    pub fn class(self) -> ToolClass {
        self.spec().class
    }

    /// Read-only, idempotent tools that reach an upstream are worth caching;
    /// dealership tools are answered from configuration, lead reads from the
    /// bridge's own store.
    pub fn cacheable(self) -> bool {
        let a = self.annotations();
        a.read_only_hint == Some(true)
            && a.idempotent_hint == Some(true)
            && a.open_world_hint == Some(true)
    }

    pub fn title(self) -> &'static str {
        self.spec().title
    }

    pub fn description(self) -> &'static str {
        self.spec().description
    }

    /// Derived from the row: writes are not idempotent unless the caller sends
    /// a key, except a destructive one (repeating a cancellation changes nothing more).
    pub fn annotations(self) -> ToolAnnotations {
        let spec = self.spec();
        let write = spec.class == ToolClass::Write;
        ToolAnnotations::with_title(spec.title)
            .read_only(!write)
            .destructive(spec.destructive)
            .idempotent(!write || spec.destructive)
            .open_world(spec.open_world)
    }

    pub fn input_schema(self) -> Arc<JsonObject> {
        (self.spec().input_schema)()
    }

    pub fn output_schema(self) -> Arc<JsonObject> {
        (self.spec().output_schema)()
    }

    /// The MCP tool definition, listed under `naming`; its `_meta` names the
    /// canonical name either way.
    pub fn definition(self, naming: ToolNames) -> Tool {
        let mut meta = JsonObject::new();
        meta.insert(CANONICAL_NAME_META.into(), Value::from(self.name()));
        Tool::new(
            self.listed_name(naming),
            self.description(),
            Arc::new(compact_schema::compact(&self.input_schema())),
        )
        .with_title(self.title())
        .with_raw_output_schema(self.output_schema())
        .with_annotations(self.annotations())
        .with_meta(rmcp::model::MetaObject(meta))
    }
}

/// A JSON Schema (2020-12) for `T`, inlined so clients need no `$ref` resolution
/// beyond `$defs` in the same document, in the subset every client reads
/// (see `portable_schema`).
pub fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(mut value) => {
            portable_schema::make_portable(&mut value);
            match value {
                Value::Object(map) => Arc::new(map),
                _ => Arc::new(JsonObject::new()),
            }
        }
        Err(_) => Arc::new(JsonObject::new()),
    }
}

/// A stored instant (RFC 3339, UTC) in the dealership's offset, as every time
/// the tools answer; text that is not an instant is shown as stored.
pub(crate) fn local_instant(stored: &str, tz: chrono_tz::Tz) -> String {
    chrono::DateTime::parse_from_rfc3339(stored).map_or_else(
        |_| stored.to_owned(),
        |t| {
            t.with_timezone(&tz)
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
        },
    )
}

/// A calendar date argument (`YYYY-MM-DD`; the schema checked the shape).
pub(crate) fn iso_date(text: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// A tool result, serialized straight from its type; a type that cannot
/// serialize is a bug, logged and hidden.
pub(crate) fn to_result(result: &impl serde::Serialize) -> Handled {
    crate::contract::Payload::serialize(result).map_err(|e| {
        tracing::error!(error = %e, "Could not serialize a tool result.");
        crate::contract::error::ToolError::internal().into()
    })
}
