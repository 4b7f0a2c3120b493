//! The canonical tool surface (toolset v1): names, descriptions, annotations,
//! scopes and schemas. Schemas are derived from the same Rust types that parse
//! the arguments and build the results, so they cannot drift.

pub mod dealership;
pub mod inventory;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;

use crate::config::ToolClass;
use crate::gateway::auth::Scope;
use crate::model::Domain;

/// Version of the public tool contract (TOOLSET.md). Bump the major on any
/// breaking change to names, schemas or error codes.
pub const TOOLSET_VERSION: &str = "1.0.0";

/// Every tool the bridge can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolId {
    DealershipList,
    DealershipGet,
    InventorySearch,
    InventoryGet,
    InventoryFacets,
}

impl ToolId {
    pub const ALL: [ToolId; 5] = [
        Self::DealershipList,
        Self::DealershipGet,
        Self::InventorySearch,
        Self::InventoryGet,
        Self::InventoryFacets,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::DealershipList => "dealership.list",
            Self::DealershipGet => "dealership.get",
            Self::InventorySearch => "inventory.search",
            Self::InventoryGet => "inventory.get",
            Self::InventoryFacets => "inventory.facets",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The domain whose upstream serves the tool; `None` for tools answered from config.
    pub fn domain(self) -> Option<Domain> {
        match self {
            Self::DealershipList | Self::DealershipGet => None,
            Self::InventorySearch | Self::InventoryGet | Self::InventoryFacets => {
                Some(Domain::Inventory)
            }
        }
    }

    /// Scope a caller needs; `None` means any authenticated or anonymous caller
    /// with access to the dealership.
    pub fn scope(self) -> Option<Scope> {
        self.domain().map(|d| match d {
            Domain::Inventory => Scope::InventoryRead,
            Domain::Leads => Scope::LeadsWrite,
            Domain::Service => Scope::ServiceRead,
            Domain::Deals => Scope::DealsRead,
        })
    }

    /// The quota class: every v1 tool reads.
    pub fn class(self) -> ToolClass {
        ToolClass::Read
    }

    /// Read-only, idempotent tools that reach an upstream are worth caching;
    /// dealership tools are answered from configuration already.
    pub fn cacheable(self) -> bool {
        let a = self.annotations();
        a.read_only_hint == Some(true)
            && a.idempotent_hint == Some(true)
            && a.open_world_hint == Some(true)
    }

    pub fn title(self) -> &'static str {
        match self {
            Self::DealershipList => "List dealerships",
            Self::DealershipGet => "Get a dealership profile",
            Self::InventorySearch => "Search vehicle inventory",
            Self::InventoryGet => "Get one vehicle",
            Self::InventoryFacets => "Count inventory by attribute",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Self::DealershipList => {
                "List the dealerships (rooftops) you may use, with the domains each serves. Call this first to learn the dealership_id every other tool needs."
            }
            Self::DealershipGet => {
                "Get a dealership's public profile: names, address, coordinates, phone numbers, opening hours, time zone, currency, brands and capabilities."
            }
            Self::InventorySearch => {
                "Search a dealership's vehicles for sale with structured filters (condition, make, model, trim, body, fuel, transmission, drivetrain, colors, year and price ranges, maximum mileage, VIN, stock number, free text), a sort and a page size. Sold vehicles are never returned. `price` is the final out-the-door price and the only price that price filters and sorting use; money is in minor units (cents). Pass `next_cursor` back as `cursor` for the next page."
            }
            Self::InventoryGet => {
                "Get one vehicle by `vehicle_id`, `vin` or `stock` (if several are given, vehicle_id wins, then vin). Answers inventory.vehicle_unavailable when the unit is sold and inventory.vehicle_not_found when the dealership has no such unit."
            }
            Self::InventoryFacets => {
                "Count a dealership's vehicles for sale by make, model, trim, year, body, condition, fuel, transmission, drivetrain, exterior color and status, with price, mileage and year ranges; takes the same filters as inventory.search."
            }
        }
    }

    pub fn annotations(self) -> ToolAnnotations {
        // Every v1 tool only reads. Inventory tools reach into the dealer's systems (open world);
        // dealership profiles come from the bridge's own configuration.
        ToolAnnotations::with_title(self.title())
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(self.domain().is_some())
    }

    pub fn input_schema(self) -> Arc<JsonObject> {
        match self {
            Self::DealershipList => schema_of::<dealership::ListArgs>(),
            Self::DealershipGet => schema_of::<dealership::GetArgs>(),
            Self::InventorySearch => schema_of::<inventory::SearchArgs>(),
            Self::InventoryGet => schema_of::<inventory::GetArgs>(),
            Self::InventoryFacets => schema_of::<inventory::FacetsArgs>(),
        }
    }

    pub fn output_schema(self) -> Arc<JsonObject> {
        match self {
            Self::DealershipList => schema_of::<dealership::ListResult>(),
            Self::DealershipGet => schema_of::<crate::model::DealershipProfile>(),
            Self::InventorySearch => schema_of::<inventory::SearchResult>(),
            Self::InventoryGet => schema_of::<inventory::GetResult>(),
            Self::InventoryFacets => schema_of::<inventory::FacetsResult>(),
        }
    }

    /// The MCP tool definition.
    pub fn definition(self) -> Tool {
        Tool::new(self.name(), self.description(), self.input_schema())
            .with_title(self.title())
            .with_raw_output_schema(self.output_schema())
            .with_annotations(self.annotations())
    }
}

/// A JSON Schema (2020-12) for `T`, inlined so clients need no `$ref` resolution
/// beyond `$defs` in the same document.
pub fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(map)) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}
