//! The tool table: one row per tool of the canonical surface (toolset v1),
//! with everything the bridge knows about it: name, title, description,
//! domain, quota class, staff scope, annotation facts, the argument and result
//! types its schemas are derived from, and its handler. The pipeline, the
//! schema validators and the capability advertisement all walk this table;
//! a new tool is a row here plus its handler and types.

use std::any::Any;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::JsonObject;
use serde_json::Value;

use super::context::{Handled, HandlerError, ToolArgs, ToolContext};
use super::{dealership, deals, events, inventory, leads, repair_orders, schema_of, service};
use crate::config::ToolClass;
use crate::contract::{Scope, ToolError};
use crate::model::Domain;

/// One tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The domain whose upstream serves the tool; `None` for tools answered from config.
    pub domain: Option<Domain>,
    /// The quota class; writes also go through the pipeline's write step.
    pub class: ToolClass,
    /// The scope that lets dealership staff reach every customer's records
    /// through this tool, where records have owners (see `ToolContext::owner`).
    pub staff_scope: Option<Scope>,
    /// Reaches into the dealer's systems (rather than config or the bridge's store).
    pub open_world: bool,
    /// Destroys something (and repeating it changes nothing more).
    pub destructive: bool,
    /// Only for callers with a token (the anonymous caller neither sees nor calls it).
    pub signed_in: bool,
    /// For tools without a domain: whether a caller has a use for it at a
    /// dealership (`None`: wherever it may use the dealership).
    pub useful_at: Option<fn(&crate::contract::Principal, &super::Dealership) -> bool>,
    pub input_schema: fn() -> Arc<JsonObject>,
    pub output_schema: fn() -> Arc<JsonObject>,
    /// Parses arguments (already checked against the input schema).
    pub parse: fn(Value) -> Result<Box<dyn AnyArgs>, serde_json::Error>,
    /// Runs the handler on arguments `parse` made.
    pub handle: for<'a> fn(ToolContext<'a>, Box<dyn AnyArgs>) -> BoxFuture<'a, Handled>,
    /// Brings a replayed answer up to date (e.g. where a lead's delivery
    /// stands now); the write step replays stored answers as they are otherwise.
    pub on_replay: Option<for<'a> fn(ToolContext<'a>, Value) -> BoxFuture<'a, Value>>,
}

/// A tool's parsed arguments, whatever their type: what the pipeline asks of them.
pub trait AnyArgs: Send {
    fn dealership_id(&self) -> Option<&str>;
    fn validate(&self, check: &mut super::Check<'_>);
    /// The caller's idempotency key, when this call should be made at most once per key.
    fn idempotency_key(&self) -> Option<&str>;
    fn idempotency_conflict(&self) -> ToolError;
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

impl<T: ToolArgs + 'static> AnyArgs for T {
    fn dealership_id(&self) -> Option<&str> {
        ToolArgs::dealership_id(self)
    }

    fn validate(&self, check: &mut super::Check<'_>) {
        ToolArgs::validate(self, check);
    }

    fn idempotency_key(&self) -> Option<&str> {
        ToolArgs::idempotency_key(self)
    }

    fn idempotency_conflict(&self) -> ToolError {
        ToolArgs::idempotency_conflict(self)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// Parses arguments of type `A` for a row.
pub fn parse<A: ToolArgs + 'static>(args: Value) -> Result<Box<dyn AnyArgs>, serde_json::Error> {
    Ok(Box::new(serde_json::from_value::<A>(args)?))
}

/// Gets back the arguments a row's `parse` made; another type is a bug in the table.
pub fn downcast<A: 'static>(args: Box<dyn AnyArgs>) -> Result<A, HandlerError> {
    args.into_any().downcast::<A>().map(|a| *a).map_err(|_| {
        tracing::error!("A tool's handler got arguments of another tool's type.");
        HandlerError::Refused(ToolError::internal())
    })
}

/// A table row from its facts, types and handler.
macro_rules! tool {
    (@optional) => { None };
    (@optional $f:path) => { Some($f) };
    (
        name: $name:expr,
        title: $title:expr,
        description: $description:expr,
        domain: $domain:expr,
        class: $class:expr,
        staff_scope: $staff:expr,
        open_world: $open_world:expr,
        destructive: $destructive:expr,
        args: $args:ty,
        result: $result:ty,
        handler: $handler:path,
        $(on_replay: $on_replay:path,)?
        $(signed_in: $signed_in:expr,)?
        $(useful_at: $useful_at:path,)?
    ) => {{
        fn handle<'a>(ctx: ToolContext<'a>, args: Box<dyn AnyArgs>) -> BoxFuture<'a, Handled> {
            Box::pin(async move { $handler(ctx, downcast::<$args>(args)?).await })
        }
        ToolSpec {
            name: $name,
            title: $title,
            description: $description,
            domain: $domain,
            class: $class,
            staff_scope: $staff,
            open_world: $open_world,
            destructive: $destructive,
            signed_in: false $(|| $signed_in)?,
            useful_at: tool!(@optional $($useful_at)?),
            input_schema: schema_of::<$args>,
            output_schema: schema_of::<$result>,
            parse: parse::<$args>,
            handle,
            on_replay: tool!(@optional $($on_replay)?),
        }
    }};
}

/// Every tool the bridge can serve, in the order `tools/list` shows them.
pub const TOOLS: &[ToolSpec] = &[
    tool! {
        name: "dealership.list",
        title: "List dealerships",
        description: "List the dealerships (rooftops) you may use, with the domains each serves. Call this first to learn the dealership_id every other tool needs.",
        domain: None,
        class: ToolClass::Read,
        staff_scope: None,
        open_world: false,
        destructive: false,
        args: dealership::ListArgs,
        result: dealership::ListResult,
        handler: dealership::list,
    },
    tool! {
        name: "dealership.get",
        title: "Get a dealership profile",
        description: "Get a dealership's public profile: names, address, coordinates, phone numbers, opening hours, time zone, currency, brands and capabilities.",
        domain: None,
        class: ToolClass::Read,
        staff_scope: None,
        open_world: false,
        destructive: false,
        args: dealership::GetArgs,
        result: crate::model::DealershipProfile,
        handler: dealership::get,
    },
    tool! {
        name: "inventory.search",
        title: "Search vehicle inventory",
        description: "Search a dealership's vehicles for sale with structured filters (condition, make, model, trim, body, fuel, transmission, drivetrain, colors, year and price ranges, maximum mileage, VIN, stock number, free text), a sort and a page size. Sold vehicles are never returned. `price` is the final out-the-door price and the only price that price filters and sorting use; money is in minor units (cents). Pass `next_cursor` back as `cursor` for the next page.",
        domain: Some(Domain::Inventory),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: inventory::SearchArgs,
        result: inventory::SearchResult,
        handler: inventory::search,
    },
    tool! {
        name: "inventory.get",
        title: "Get one vehicle",
        description: "Get one vehicle by `vehicle_id`, `vin` or `stock` (if several are given, vehicle_id wins, then vin). Answers inventory.vehicle_unavailable when the unit is sold and inventory.vehicle_not_found when the dealership has no such unit.",
        domain: Some(Domain::Inventory),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: inventory::GetArgs,
        result: inventory::GetResult,
        handler: inventory::get,
    },
    tool! {
        name: "inventory.facets",
        title: "Count inventory by attribute",
        description: "Count a dealership's vehicles for sale by make, model, trim, year, body, condition, fuel, transmission, drivetrain, exterior color and status, with price, mileage and year ranges; takes the same filters as inventory_search.",
        domain: Some(Domain::Inventory),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: inventory::FacetsArgs,
        result: inventory::FacetsResult,
        handler: inventory::facets,
    },
    tool! {
        name: "leads.create",
        title: "Send a sales lead to the dealership",
        description: "Send a customer's request to the dealership's CRM as a sales lead (ADF), with an optional vehicle of interest, trade-in and appointment request. Needs the customer's consent (consent.scope [\"lead_submission\"], the channels they allowed, the verbatim text they agreed to). The lead is stored before the answer and delivered with retries. An equivalent lead from the same customer within the duplicate window answers status duplicate and is not sent again. Pass an idempotency_key to make retries safe; dry_run validates and returns the ADF document without sending. An appointment is only requested (or proposed, outside opening hours), never booked.",
        domain: Some(Domain::Leads),
        class: ToolClass::Write,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: leads::CreateArgs,
        result: leads::CreateResult,
        handler: leads::create,
        on_replay: leads::refresh_replay,
    },
    tool! {
        name: "leads.get",
        title: "Get a lead and its delivery state",
        description: "Get a lead you sent through the bridge by lead_id: vehicles, appointment, consent summary and where its delivery to the CRM stands. Customer details are masked. Leads sent by other agents answer leads.lead_not_found.",
        domain: Some(Domain::Leads),
        class: ToolClass::Read,
        staff_scope: Some(Scope::LeadsStaff),
        open_world: false,
        destructive: false,
        args: leads::GetArgs,
        result: leads::LeadView,
        handler: leads::get,
    },
    tool! {
        name: "leads.list",
        title: "List leads taken through the bridge",
        description: "List the leads you sent through the bridge to a dealership (dealership staff with amcp:leads:staff: all of its leads), newest first, optionally only those whose delivery is pending, delivered or failed, or within a time range. Customer details are masked. Pass next_cursor back as cursor for the next page.",
        domain: Some(Domain::Leads),
        class: ToolClass::Read,
        staff_scope: Some(Scope::LeadsStaff),
        open_world: false,
        destructive: false,
        args: leads::ListArgs,
        result: leads::ListResult,
        handler: leads::list,
    },
    tool! {
        name: "deals.request_trade_value",
        title: "Estimate a trade-in's value",
        description: "Estimate what the dealership's valuation provider says a trade-in is worth: give the VIN and the odometer reading (and optionally the customer's ZIP and the condition). Answers a low/average/high trade-in range in minor units (cents), the provider, and until when the estimate stands. It is an estimate, not an offer. Answers deals.trade_value_unavailable when the provider has no values for the vehicle.",
        domain: Some(Domain::Deals),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: deals::TradeValueArgs,
        result: deals::TradeValueResult,
        handler: deals::request_trade_value,
    },
    tool! {
        name: "service.check_availability",
        title: "Find open service appointment slots",
        description: "List open service appointment slots at a dealership for one or more service codes (from its service menu) and the customer's vehicle (vin, vehicle_id, or year/make/model), between two dates (YYYY-MM-DD, inclusive, in the dealership's time zone, up to 31 days). Slot times are RFC 3339 with the dealership's offset, earliest first. Unknown service codes are refused with the menu in details.service_menu. Checking does not hold a slot.",
        domain: Some(Domain::Service),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: service::AvailabilityArgs,
        result: service::AvailabilityResult,
        handler: service::check_availability,
    },
    tool! {
        name: "service.book_appointment",
        title: "Book a service appointment",
        description: "Book a service appointment in the dealership's scheduler: service codes from its menu, the customer's vehicle (vin, vehicle_id, or year/make/model), a start (RFC 3339 with offset, e.g. a start from service_check_availability), the customer (names, email and/or E.164 phone) and their consent (consent.scope [\"service_appointment\"]). Answers status booked or waitlisted with an appointment_id; proposed with proposed_times when the start is outside the service department's opening hours (nothing is booked); requested when the scheduler cannot book through the bridge and the request went to the dealership as a lead. A taken slot answers service.slot_unavailable with the next open slots. Pass an idempotency_key to make retries safe; dry_run validates, checks that the start is an open slot right now, and books nothing.",
        domain: Some(Domain::Service),
        class: ToolClass::Write,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: service::BookArgs,
        result: service::BookResult,
        handler: service::book_appointment,
    },
    tool! {
        name: "service.cancel_appointment",
        title: "Cancel a service appointment",
        description: "Cancel a service appointment you booked, by the appointment_id service_book_appointment answered; the slot is freed. Cancelling an already cancelled appointment succeeds again. An unknown id, another agent's booking or one not made through the bridge answers service.appointment_not_found. dry_run checks that you may cancel it and cancels nothing.",
        domain: Some(Domain::Service),
        class: ToolClass::Write,
        staff_scope: Some(Scope::ServiceStaff),
        open_world: true,
        destructive: true,
        args: service::CancelArgs,
        result: service::CancelResult,
        handler: service::cancel_appointment,
    },
    tool! {
        name: "service.get_appointment",
        title: "Get a service appointment you booked",
        description: "Get a service appointment you booked through the bridge, by the appointment_id service_book_appointment answered (events name it too): its status (booked, waitlisted or cancelled), when it was booked and, if so, cancelled. Appointments booked by other agents, or not through the bridge, answer service.appointment_not_found.",
        domain: Some(Domain::Service),
        class: ToolClass::Read,
        staff_scope: Some(Scope::ServiceStaff),
        open_world: false,
        destructive: false,
        args: service::GetAppointmentArgs,
        result: service::AppointmentView,
        handler: service::get_appointment,
    },
    tool! {
        name: "service.get_repair_order",
        title: "Get one repair order",
        description: "Get one repair order from the dealership's DMS by ro_number (as printed on the order) or repair_order_id: status (open, in_progress, closed), opened/promised/closed times in the dealership's time zone, the service advisor, the vehicle with mileage in and out, job lines with their op codes, status and pay type, and totals per pay type in minor units. The customer is shown as initials only. Some DMSs prepare the data asynchronously: the call can take several seconds, and reports progress when the request carries a progressToken. Answers service.repair_order_not_found when the DMS has no such order.",
        domain: Some(Domain::RepairOrders),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: repair_orders::GetRepairOrderArgs,
        result: repair_orders::RepairOrderResult,
        handler: repair_orders::get_repair_order,
    },
    tool! {
        name: "service.list_repair_orders",
        title: "List repair orders",
        description: "List a dealership's repair orders, newest activity first, optionally only some statuses (open, in_progress, closed), for one VIN, and within a date range (YYYY-MM-DD, inclusive, dealership time zone; default the last 30 days, at most 92; closed orders count on the day they closed, others on the day they opened). Each order is shown as in service_get_repair_order. Pass next_cursor back as cursor for the next page.",
        domain: Some(Domain::RepairOrders),
        class: ToolClass::Read,
        staff_scope: None,
        open_world: true,
        destructive: false,
        args: repair_orders::ListRepairOrdersArgs,
        result: repair_orders::ListRepairOrdersResult,
        handler: repair_orders::list_repair_orders,
    },
    tool! {
        name: "events.list",
        title: "List change events",
        description: "List a dealership's change events in order: vehicles created, updated (price, status, mileage…; data.changed names the fields) and deleted (sold or removed), leads created and their delivery to the CRM, appointments booked and cancelled. Each event names its resource by kind, id and dms:// URI; read the resource for the details. Filter by types or one resource. Delivery is at least once: deduplicate on the event id. Pass next_cursor back as cursor to get what happened since, also after a pause; it is always present.",
        domain: None,
        class: ToolClass::Read,
        staff_scope: None,
        open_world: false,
        destructive: false,
        args: events::ListArgs,
        result: events::ListResult,
        handler: events::list,
        signed_in: true,
        useful_at: events::useful_at,
    },
];
