//! Lead capture behind `leads.create`: the store records (`record`), the ADF
//! mapping (`adf_map`), the delivery outbox (`outbox`) and the minimised read
//! view (`present`). The desk is what the tools talk to.

pub mod adf_map;
pub mod appointment;
pub mod crm_fields;
pub mod crm_status;
pub mod lead;
pub mod outbox;
pub mod submit;

pub use crate::store::leads::{Decision, ListQuery, NewLead, StoredLead};

use self::lead::Lead;
use crate::config::LeadsConfig;
use crate::model::vin;
use crate::store::sealing::Identity;
use crate::store::{Store, StoreError};

/// Takes leads into the store (the store's commit signals the outboxes).
pub struct LeadDesk {
    store: Store,
    config: LeadsConfig,
}

impl LeadDesk {
    pub fn new(store: &Store, config: LeadsConfig) -> Self {
        Self {
            store: store.clone(),
            config,
        }
    }

    pub fn config(&self) -> &LeadsConfig {
        &self.config
    }

    /// Commits a lead (or recognises a duplicate); a new lead signals
    /// every outbox on the store (`Signal::OutboxDue`), so delivery starts at once.
    pub async fn accept(&self, lead: &NewLead) -> Result<Decision, StoreError> {
        crate::store::leads::accept(&self.store, lead).await
    }

    /// The lead, if `principal` submitted it (`None`: staff, any lead).
    pub async fn get(
        &self,
        dealership: &str,
        lead_id: &str,
        principal: Option<&str>,
    ) -> Result<Option<StoredLead>, StoreError> {
        crate::store::leads::get(&self.store, dealership, lead_id, principal).await
    }

    pub async fn list(&self, query: &ListQuery<'_>) -> Result<Vec<StoredLead>, StoreError> {
        crate::store::leads::list(&self.store, query).await
    }
}

/// A new lead id: time-ordered (UUIDv7), so ids sort like the leads.
pub fn new_lead_id() -> String {
    format!("ld_{}", uuid::Uuid::now_v7().simple())
}

/// What the store keeps of a lead's customer to find it again: the contact
/// points (erasure) and the fingerprint's material (duplicates). The store
/// keeps it sealed and looks it up by keyed hashes only.
pub fn customer_identity(dealership: &str, lead: &Lead) -> Identity {
    Identity {
        email: lead.customer.email.clone(),
        phone: lead.customer.phone.clone(),
        fingerprint: Some(fingerprint(dealership, lead)),
    }
}

/// What makes two leads "equivalent" for the duplicate window: the same
/// dealership, the same customer (e-mail when given, else phone), the same
/// vehicle of interest and trade-in, the same kind of appointment. This is
/// the material: the store keeps a keyed hash of it (and, from before
/// sealing, its plain SHA-256).
pub fn fingerprint(dealership: &str, lead: &Lead) -> String {
    let c = &lead.customer;
    let customer = c
        .email
        .as_deref()
        .map(|e| format!("email:{}", e.trim().to_lowercase()))
        .or_else(|| c.phone.as_deref().map(|p| format!("phone:{p}")))
        .unwrap_or_default();
    let vehicle = lead.vehicle_of_interest.as_ref().map(|v| {
        identity(
            v.vin.as_deref(),
            v.stock.as_deref(),
            v.vehicle_id.as_deref(),
            (v.year, v.make.as_deref(), v.model.as_deref()),
        )
    });
    let trade = lead.trade_in.as_ref().map(|t| {
        identity(
            t.vin.as_deref(),
            None,
            None,
            (t.year, t.make.as_deref(), t.model.as_deref()),
        )
    });
    let appointment = lead.appointment.as_ref().map(|a| a.appointment_type);
    serde_json::json!([dealership, customer, vehicle, trade, appointment]).to_string()
}

fn identity(
    vin_text: Option<&str>,
    stock: Option<&str>,
    id: Option<&str>,
    (year, make, model): (Option<u16>, Option<&str>, Option<&str>),
) -> String {
    if let Some(v) = vin_text {
        return format!("vin:{}", vin::normalize(v));
    }
    if let Some(s) = stock {
        return format!("stock:{}", s.trim().to_lowercase());
    }
    if let Some(i) = id {
        return format!("id:{i}");
    }
    let part = |s: Option<&str>| s.map(|s| s.trim().to_lowercase()).unwrap_or_default();
    format!(
        "ymm:{}/{}/{}",
        year.map(|y| y.to_string()).unwrap_or_default(),
        part(make),
        part(model)
    )
}
