//! The canonical tool surface (toolset v1): names, descriptions, annotations,
//! scopes and schemas. Schemas are derived from the same Rust types that parse
//! the arguments and build the results, so they cannot drift.

pub mod dealership;
pub mod deals;
pub mod inventory;
pub mod leads;
pub mod repair_orders;
pub mod service;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;

use crate::config::ToolClass;
use crate::contract::Scope;
use crate::model::Domain;

/// Version of the public tool contract (TOOLSET.md). Bump the major on any
/// breaking change to names, schemas or error codes.
pub const TOOLSET_VERSION: &str = "1.5.0";

/// Every tool the bridge can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolId {
    DealershipList,
    DealershipGet,
    InventorySearch,
    InventoryGet,
    InventoryFacets,
    LeadsCreate,
    LeadsGet,
    LeadsList,
    DealsRequestTradeValue,
    ServiceCheckAvailability,
    ServiceBookAppointment,
    ServiceCancelAppointment,
    ServiceGetRepairOrder,
    ServiceListRepairOrders,
}

impl ToolId {
    pub const ALL: [ToolId; 14] = [
        Self::DealershipList,
        Self::DealershipGet,
        Self::InventorySearch,
        Self::InventoryGet,
        Self::InventoryFacets,
        Self::LeadsCreate,
        Self::LeadsGet,
        Self::LeadsList,
        Self::DealsRequestTradeValue,
        Self::ServiceCheckAvailability,
        Self::ServiceBookAppointment,
        Self::ServiceCancelAppointment,
        Self::ServiceGetRepairOrder,
        Self::ServiceListRepairOrders,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::DealershipList => "dealership.list",
            Self::DealershipGet => "dealership.get",
            Self::InventorySearch => "inventory.search",
            Self::InventoryGet => "inventory.get",
            Self::InventoryFacets => "inventory.facets",
            Self::LeadsCreate => "leads.create",
            Self::LeadsGet => "leads.get",
            Self::LeadsList => "leads.list",
            Self::DealsRequestTradeValue => "deals.request_trade_value",
            Self::ServiceCheckAvailability => "service.check_availability",
            Self::ServiceBookAppointment => "service.book_appointment",
            Self::ServiceCancelAppointment => "service.cancel_appointment",
            Self::ServiceGetRepairOrder => "service.get_repair_order",
            Self::ServiceListRepairOrders => "service.list_repair_orders",
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
            Self::LeadsCreate | Self::LeadsGet | Self::LeadsList => Some(Domain::Leads),
            Self::DealsRequestTradeValue => Some(Domain::Deals),
            Self::ServiceCheckAvailability
            | Self::ServiceBookAppointment
            | Self::ServiceCancelAppointment => Some(Domain::Service),
            Self::ServiceGetRepairOrder | Self::ServiceListRepairOrders => {
                Some(Domain::RepairOrders)
            }
        }
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
        match self {
            Self::LeadsGet | Self::LeadsList => Some(Scope::LeadsStaff),
            Self::ServiceCancelAppointment => Some(Scope::ServiceStaff),
            _ => None,
        }
    }

    /// The quota class.
    pub fn class(self) -> ToolClass {
        match self {
            Self::LeadsCreate | Self::ServiceBookAppointment | Self::ServiceCancelAppointment => {
                ToolClass::Write
            }
            _ => ToolClass::Read,
        }
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
        match self {
            Self::DealershipList => "List dealerships",
            Self::DealershipGet => "Get a dealership profile",
            Self::InventorySearch => "Search vehicle inventory",
            Self::InventoryGet => "Get one vehicle",
            Self::InventoryFacets => "Count inventory by attribute",
            Self::LeadsCreate => "Send a sales lead to the dealership",
            Self::LeadsGet => "Get a lead and its delivery state",
            Self::LeadsList => "List leads taken through the bridge",
            Self::DealsRequestTradeValue => "Estimate a trade-in's value",
            Self::ServiceCheckAvailability => "Find open service appointment slots",
            Self::ServiceBookAppointment => "Book a service appointment",
            Self::ServiceCancelAppointment => "Cancel a service appointment",
            Self::ServiceGetRepairOrder => "Get one repair order",
            Self::ServiceListRepairOrders => "List repair orders",
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
            Self::LeadsCreate => {
                "Send a customer's request to the dealership's CRM as a sales lead (ADF), with an optional vehicle of interest, trade-in and appointment request. Needs the customer's consent (consent.scope [\"lead_submission\"], the channels they allowed, the verbatim text they agreed to). The lead is stored before the answer and delivered with retries. An equivalent lead from the same customer within the duplicate window answers status duplicate and is not sent again. Pass an idempotency_key to make retries safe; dry_run validates and returns the ADF document without sending. An appointment is only requested (or proposed, outside opening hours), never booked."
            }
            Self::LeadsGet => {
                "Get a lead you sent through the bridge by lead_id: vehicles, appointment, consent summary and where its delivery to the CRM stands. Customer details are masked. Leads sent by other agents answer leads.lead_not_found."
            }
            Self::LeadsList => {
                "List the leads you sent through the bridge to a dealership (dealership staff with amcp:leads:staff: all of its leads), newest first, optionally only those whose delivery is pending, delivered or failed, or within a time range. Customer details are masked. Pass next_cursor back as cursor for the next page."
            }
            Self::DealsRequestTradeValue => {
                "Estimate what the dealership's valuation provider says a trade-in is worth: give the VIN and the odometer reading (and optionally the customer's ZIP and the condition). Answers a low/average/high trade-in range in minor units (cents), the provider, and until when the estimate stands. It is an estimate, not an offer. Answers deals.trade_value_unavailable when the provider has no values for the vehicle."
            }
            Self::ServiceCheckAvailability => {
                "List open service appointment slots at a dealership for one or more service codes (from its service menu) and the customer's vehicle (vin, vehicle_id, or year/make/model), between two dates (YYYY-MM-DD, inclusive, in the dealership's time zone, up to 31 days). Slot times are RFC 3339 with the dealership's offset, earliest first. Unknown service codes are refused with the menu in details.service_menu. Checking does not hold a slot."
            }
            Self::ServiceBookAppointment => {
                "Book a service appointment in the dealership's scheduler: service codes from its menu, the customer's vehicle (vin, vehicle_id, or year/make/model), a start (RFC 3339 with offset, e.g. a start from service.check_availability), the customer (names, email and/or E.164 phone) and their consent (consent.scope [\"service_appointment\"]). Answers status booked or waitlisted with an appointment_id; proposed with proposed_times when the start is outside the service department's opening hours (nothing is booked); requested when the scheduler cannot book through the bridge and the request went to the dealership as a lead. A taken slot answers service.slot_unavailable with the next open slots. Pass an idempotency_key to make retries safe; dry_run validates, checks that the start is an open slot right now, and books nothing."
            }
            Self::ServiceCancelAppointment => {
                "Cancel a service appointment you booked, by the appointment_id service.book_appointment answered; the slot is freed. Cancelling an already cancelled appointment succeeds again. An unknown id, another agent's booking or one not made through the bridge answers service.appointment_not_found. dry_run checks that you may cancel it and cancels nothing."
            }
            Self::ServiceGetRepairOrder => {
                "Get one repair order from the dealership's DMS by ro_number (as printed on the order) or repair_order_id: status (open, in_progress, closed), opened/promised/closed times in the dealership's time zone, the service advisor, the vehicle with mileage in and out, job lines with their op codes, status and pay type, and totals per pay type in minor units. The customer is shown as initials only. Some DMSs prepare the data asynchronously: the call can take several seconds, and reports progress when the request carries a progressToken. Answers service.repair_order_not_found when the DMS has no such order."
            }
            Self::ServiceListRepairOrders => {
                "List a dealership's repair orders, newest activity first, optionally only some statuses (open, in_progress, closed), for one VIN, and within a date range (YYYY-MM-DD, inclusive, dealership time zone; default the last 30 days, at most 92; closed orders count on the day they closed, others on the day they opened). Each order is shown as in service.get_repair_order. Pass next_cursor back as cursor for the next page."
            }
        }
    }

    pub fn annotations(self) -> ToolAnnotations {
        // Inventory tools reach into the dealer's systems (open world); dealership
        // profiles come from configuration and lead reads from the bridge's store.
        // leads.create and bookings write: not idempotent unless the caller sends
        // a key. A cancellation destroys a booking, and repeating it changes nothing more.
        let write = self.class() == ToolClass::Write;
        let cancel = self == Self::ServiceCancelAppointment;
        let open_world = matches!(
            self,
            Self::InventorySearch
                | Self::InventoryGet
                | Self::InventoryFacets
                | Self::LeadsCreate
                | Self::DealsRequestTradeValue
                | Self::ServiceCheckAvailability
                | Self::ServiceBookAppointment
                | Self::ServiceCancelAppointment
                | Self::ServiceGetRepairOrder
                | Self::ServiceListRepairOrders
        );
        ToolAnnotations::with_title(self.title())
            .read_only(!write)
            .destructive(cancel)
            .idempotent(!write || cancel)
            .open_world(open_world)
    }

    pub fn input_schema(self) -> Arc<JsonObject> {
        match self {
            Self::DealershipList => schema_of::<dealership::ListArgs>(),
            Self::DealershipGet => schema_of::<dealership::GetArgs>(),
            Self::InventorySearch => schema_of::<inventory::SearchArgs>(),
            Self::InventoryGet => schema_of::<inventory::GetArgs>(),
            Self::InventoryFacets => schema_of::<inventory::FacetsArgs>(),
            Self::LeadsCreate => schema_of::<leads::CreateArgs>(),
            Self::LeadsGet => schema_of::<leads::GetArgs>(),
            Self::LeadsList => schema_of::<leads::ListArgs>(),
            Self::DealsRequestTradeValue => schema_of::<deals::TradeValueArgs>(),
            Self::ServiceCheckAvailability => schema_of::<service::AvailabilityArgs>(),
            Self::ServiceBookAppointment => schema_of::<service::BookArgs>(),
            Self::ServiceCancelAppointment => schema_of::<service::CancelArgs>(),
            Self::ServiceGetRepairOrder => schema_of::<repair_orders::GetRepairOrderArgs>(),
            Self::ServiceListRepairOrders => schema_of::<repair_orders::ListRepairOrdersArgs>(),
        }
    }

    pub fn output_schema(self) -> Arc<JsonObject> {
        match self {
            Self::DealershipList => schema_of::<dealership::ListResult>(),
            Self::DealershipGet => schema_of::<crate::model::DealershipProfile>(),
            Self::InventorySearch => schema_of::<inventory::SearchResult>(),
            Self::InventoryGet => schema_of::<inventory::GetResult>(),
            Self::InventoryFacets => schema_of::<inventory::FacetsResult>(),
            Self::LeadsCreate => schema_of::<leads::CreateResult>(),
            Self::LeadsGet => schema_of::<leads::LeadView>(),
            Self::LeadsList => schema_of::<leads::ListResult>(),
            Self::DealsRequestTradeValue => schema_of::<deals::TradeValueResult>(),
            Self::ServiceCheckAvailability => schema_of::<service::AvailabilityResult>(),
            Self::ServiceBookAppointment => schema_of::<service::BookResult>(),
            Self::ServiceCancelAppointment => schema_of::<service::CancelResult>(),
            Self::ServiceGetRepairOrder => schema_of::<repair_orders::RepairOrderResult>(),
            Self::ServiceListRepairOrders => schema_of::<repair_orders::ListRepairOrdersResult>(),
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

/// A calendar date argument (`YYYY-MM-DD`; the schema checked the shape).
pub(crate) fn iso_date(text: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// A tool result, serialized straight from its type; a type that cannot
/// serialize is a bug, logged and hidden.
pub(crate) fn to_result(
    result: &impl serde::Serialize,
) -> Result<crate::contract::Payload, crate::contract::error::ToolError> {
    crate::contract::Payload::serialize(result).map_err(|e| {
        tracing::error!(error = %e, "Could not serialize a tool result.");
        crate::contract::error::ToolError::internal()
    })
}
