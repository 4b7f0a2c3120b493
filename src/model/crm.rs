//! What a CRM says became of a lead, in one vocabulary across CRMs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A lead's progress at the dealership, as its CRM reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CrmStatus {
    /// Received; nobody has reached the customer yet.
    New,
    /// Staff tried to reach the customer, or did.
    Contacted,
    /// A visit or test drive is booked.
    AppointmentSet,
    /// The customer bought.
    Sold,
    /// Closed without a sale (lost, invalid or a duplicate at the CRM).
    Lost,
}

impl CrmStatus {
    pub const ALL: [Self; 5] = [
        Self::New,
        Self::Contacted,
        Self::AppointmentSet,
        Self::Sold,
        Self::Lost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Contacted => "contacted",
            Self::AppointmentSet => "appointment_set",
            Self::Sold => "sold",
            Self::Lost => "lost",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A lead the CRM has closed: its status is not read again.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Sold | Self::Lost)
    }
}
