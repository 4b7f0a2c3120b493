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
        description: "List the dealerships you may use and the domains each serves. Call first: every other tool needs a dealership_id.",
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
        description: "A dealership's public profile: address, phones, opening hours, time zone, currency, brands and capabilities.",
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
        description: "Search a dealership's vehicles for sale (never sold ones). Concise records by default; `response_format: detailed` or inventory_get for every field. `price` is the advertised price, mandatory dealer fees included; money is in minor units (cents). Page with next_cursor.",
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
        description: "One vehicle with every field, by vehicle_id, vin or stock.",
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
        description: "Count a dealership's vehicles for sale by make, model, trim, year, body, condition, fuel, transmission, drivetrain, color and status, with price, mileage and year ranges. Same filters as inventory_search.",
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
        description: "Send a customer's sales lead (ADF) to the dealership's CRM, with an optional vehicle of interest, trade-in and appointment request (never a booking). Needs the customer's consent. Stored, then delivered with retries; a duplicate within the window is not sent again.",
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
        description: "A lead you sent, by lead_id: vehicles, appointment, consent and its delivery to the CRM. Customer details are masked.",
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
        description: "Leads you sent to a dealership (staff: all of them), newest first, by delivery state or time range. Customer details are masked.",
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
        description: "Estimate a trade-in's value from the dealership's valuation provider by VIN and mileage: a low/average/high range in minor units and until when it stands. An estimate, not an offer.",
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
        description: "Open service slots for service codes and the customer's vehicle between two dates (dealership time zone, up to 31 days), earliest first. Holds nothing; unknown codes are refused with the menu.",
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
        description: "Book a service appointment: service codes, the vehicle, a start (e.g. from service_check_availability), the customer and their consent. Answers booked, waitlisted, proposed (start outside opening hours; nothing booked) or requested (sent to the dealership as a lead).",
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
        description: "Cancel a service appointment you booked, by appointment_id; cancelling again succeeds. dry_run cancels nothing.",
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
        description: "A service appointment you booked, by appointment_id: booked, waitlisted or cancelled, and when.",
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
        description: "One repair order from the DMS by ro_number or repair_order_id: status, times, advisor, vehicle, job lines and totals per pay type. The customer as initials. Can take seconds; reports progress given a progressToken.",
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
        description: "A dealership's repair orders, newest activity first, by status, VIN or date range (default the last 30 days). Concise by default (no jobs or totals): `response_format: detailed` or service_get_repair_order for those.",
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
        description: "A dealership's change events in order: vehicles, leads, appointments and repair orders. Each names its resource (kind, id, dms:// URI). At least once: deduplicate on id. next_cursor (always present) gives what happened since.",
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
