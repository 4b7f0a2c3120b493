//! Who an adapter serves. Every kind reads it (records are mapped in the
//! dealership's currency and time zone), so it belongs to no one kind.

/// Who the adapter serves; records are mapped in this dealership's terms.
#[derive(Debug, Clone)]
pub struct DealershipContext {
    pub id: String,
    pub currency: String,
    pub timezone: chrono_tz::Tz,
    /// State or province code (e.g. `TX`), for providers that price by region.
    pub region: String,
}
