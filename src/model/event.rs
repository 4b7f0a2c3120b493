//! Change events (AutomotiveMCP Level 3): what changed, about which resource,
//! at which dealership. Events name the resource by id and carry a little
//! PII-free data; a consumer reads the resource itself for the rest.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Domain;
use super::crm::CrmStatus;
use super::repair_order::RoStatus;

/// What happened.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum EventType {
    /// A unit appeared in the dealership's inventory.
    #[serde(rename = "vehicle.created")]
    VehicleCreated,
    /// A listed unit changed (price, status, mileage…); `data.changed` names the fields.
    #[serde(rename = "vehicle.updated")]
    VehicleUpdated,
    /// A unit was sold or removed from the inventory.
    #[serde(rename = "vehicle.deleted")]
    VehicleDeleted,
    /// A lead was taken through the bridge.
    #[serde(rename = "lead.created")]
    LeadCreated,
    /// A lead's delivery to the CRM moved on (delivered, failed, retried).
    #[serde(rename = "lead.delivery_updated")]
    LeadDeliveryUpdated,
    /// The CRM says the lead moved on (contacted, appointment set, sold, lost).
    #[serde(rename = "lead.status_changed")]
    LeadStatusChanged,
    /// A service appointment was booked through the bridge.
    #[serde(rename = "appointment.booked")]
    AppointmentBooked,
    /// A service appointment booked through the bridge was cancelled.
    #[serde(rename = "appointment.cancelled")]
    AppointmentCancelled,
    /// A repair order the bridge has read changed status.
    #[serde(rename = "repair_order.updated")]
    RepairOrderUpdated,
}

/// The kind of resource an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    Vehicle,
    Lead,
    Appointment,
    RepairOrder,
}

/// The AutomotiveMCP change type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Created,
    Updated,
    Deleted,
}

impl EventType {
    pub const ALL: [EventType; 9] = [
        Self::VehicleCreated,
        Self::VehicleUpdated,
        Self::VehicleDeleted,
        Self::LeadCreated,
        Self::LeadDeliveryUpdated,
        Self::LeadStatusChanged,
        Self::AppointmentBooked,
        Self::AppointmentCancelled,
        Self::RepairOrderUpdated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::VehicleCreated => "vehicle.created",
            Self::VehicleUpdated => "vehicle.updated",
            Self::VehicleDeleted => "vehicle.deleted",
            Self::LeadCreated => "lead.created",
            Self::LeadDeliveryUpdated => "lead.delivery_updated",
            Self::LeadStatusChanged => "lead.status_changed",
            Self::AppointmentBooked => "appointment.booked",
            Self::AppointmentCancelled => "appointment.cancelled",
            Self::RepairOrderUpdated => "repair_order.updated",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn resource_kind(self) -> ResourceKind {
        match self {
            Self::VehicleCreated | Self::VehicleUpdated | Self::VehicleDeleted => {
                ResourceKind::Vehicle
            }
            Self::LeadCreated | Self::LeadDeliveryUpdated | Self::LeadStatusChanged => {
                ResourceKind::Lead
            }
            Self::AppointmentBooked | Self::AppointmentCancelled => ResourceKind::Appointment,
            Self::RepairOrderUpdated => ResourceKind::RepairOrder,
        }
    }

    pub fn change(self) -> Change {
        match self {
            Self::VehicleCreated | Self::LeadCreated | Self::AppointmentBooked => Change::Created,
            Self::VehicleDeleted | Self::AppointmentCancelled => Change::Deleted,
            Self::VehicleUpdated
            | Self::LeadDeliveryUpdated
            | Self::LeadStatusChanged
            | Self::RepairOrderUpdated => Change::Updated,
        }
    }
}

impl ResourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vehicle => "vehicle",
            Self::Lead => "lead",
            Self::Appointment => "appointment",
            Self::RepairOrder => "repair_order",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Vehicle,
            Self::Lead,
            Self::Appointment,
            Self::RepairOrder,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// The domain whose read scope lets a caller see events about this kind.
    pub fn domain(self) -> Domain {
        match self {
            Self::Vehicle => Domain::Inventory,
            Self::Lead => Domain::Leads,
            Self::Appointment => Domain::Service,
            Self::RepairOrder => Domain::RepairOrders,
        }
    }

    /// The `dms://` path segment of this kind's resources.
    fn segment(self) -> &'static str {
        match self {
            Self::Vehicle => "vehicles",
            Self::Lead => "leads",
            Self::Appointment => "appointments",
            Self::RepairOrder => "repair-orders",
        }
    }

    /// The resource's `dms://` URI (the MCP resource templates' scheme).
    pub fn uri(self, dealership_id: &str, id: &str) -> String {
        format!("dms://dealerships/{dealership_id}/{}/{id}", self.segment())
    }
}

/// A change the bridge is about to record. `owner` is the principal whose
/// record the resource is (a lead's or booking's creator): callers without
/// the domain's staff scope only see events about their own records.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_type: EventType,
    pub resource_id: String,
    pub occurred_at: DateTime<Utc>,
    pub owner: Option<String>,
    /// Minimal, PII-free facts about the change (never a customer's data).
    pub data: Value,
}

/// The resource an event is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventResource {
    pub kind: ResourceKind,
    pub id: String,
    /// The resource's `dms://` URI; `resources/read` answers it where a template exists.
    pub uri: String,
}

/// One recorded event, as `events.list` and webhooks carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Unique across the bridge; deduplicate on it.
    pub id: String,
    /// Position in the dealership's event log: gap-free and increasing.
    pub sequence: u64,
    #[serde(rename = "type")]
    pub event_type: EventType,
    pub dealership_id: String,
    pub resource: EventResource,
    pub change: Change,
    /// When the change happened, as well as the bridge knows.
    pub occurred_at: DateTime<Utc>,
    /// When the bridge recorded it.
    pub observed_at: DateTime<Utc>,
    /// Facts about the change, never personal data (e.g. `changed`, `price`, `status`).
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub data: Value,
}

impl Event {
    /// The event id for a dealership's `sequence`-th event.
    pub fn id_for(dealership_id: &str, sequence: u64) -> String {
        format!("evt_{dealership_id}_{sequence}")
    }
}

impl NewEvent {
    /// A lead taken through the bridge by `owner`.
    pub fn lead_created(lead_id: &str, owner: &str, at: DateTime<Utc>) -> Self {
        Self {
            event_type: EventType::LeadCreated,
            resource_id: lead_id.to_owned(),
            occurred_at: at,
            owner: Some(owner.to_owned()),
            data: serde_json::json!({ "delivery_state": "pending" }),
        }
    }

    /// A lead's delivery moved to `state` (`delivered`, `pending` for a retry, `failed`).
    pub fn lead_delivery(
        lead_id: &str,
        owner: Option<String>,
        state: &str,
        attempts: u32,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            event_type: EventType::LeadDeliveryUpdated,
            resource_id: lead_id.to_owned(),
            occurred_at: at,
            owner,
            data: serde_json::json!({ "delivery_state": state, "attempts": attempts }),
        }
    }

    /// The CRM says lead `lead_id` is now `status` (it was `previous`).
    pub fn lead_status(
        lead_id: &str,
        owner: Option<String>,
        status: CrmStatus,
        previous: CrmStatus,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            event_type: EventType::LeadStatusChanged,
            resource_id: lead_id.to_owned(),
            occurred_at: at,
            owner,
            data: serde_json::json!({
                "status": status.as_str(),
                "previous_status": previous.as_str(),
            }),
        }
    }

    /// An appointment booked (`status`: booked or waitlisted) or cancelled through the bridge.
    pub fn appointment(
        event_type: EventType,
        appointment_id: &str,
        owner: &str,
        status: &str,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            event_type,
            resource_id: appointment_id.to_owned(),
            occurred_at: at,
            owner: Some(owner.to_owned()),
            data: serde_json::json!({ "status": status }),
        }
    }

    /// A repair order's status changed between two reads by the bridge.
    pub fn repair_order_status(
        ro_number: &str,
        status: RoStatus,
        previous: Option<RoStatus>,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            event_type: EventType::RepairOrderUpdated,
            resource_id: ro_number.to_owned(),
            occurred_at: at,
            owner: None,
            data: serde_json::json!({
                "ro_number": ro_number,
                "status": status.as_str(),
                "previous_status": previous.map(RoStatus::as_str),
            }),
        }
    }
}
