//! Service scheduling as every adapter kind reports it and the tools answer
//! it: the dealership's service menu, open slots, bookings and cancellations.

use chrono::{DateTime, FixedOffset, NaiveDate};

/// One service on the dealership's menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceItem {
    pub code: String,
    pub name: Option<String>,
}

/// What the caller wants a slot for.
#[derive(Debug, Clone)]
pub struct SlotRequest<'a> {
    pub service_codes: &'a [String],
    /// Inclusive local dates.
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub vin: Option<&'a str>,
    pub year: Option<i32>,
    pub make: Option<&'a str>,
    pub model: Option<&'a str>,
}

/// An open slot, in the dealership's local offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub advisor_id: Option<String>,
}

/// A booking to make. Carries customer data: never log it.
#[derive(Debug, Clone)]
pub struct BookingRequest<'a> {
    pub service_codes: &'a [String],
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub vin: Option<&'a str>,
    pub year: Option<i32>,
    pub make: Option<&'a str>,
    pub model: Option<&'a str>,
    pub first_name: &'a str,
    pub last_name: &'a str,
    pub email: Option<&'a str>,
    /// E.164.
    pub phone: Option<&'a str>,
    pub comment: Option<&'a str>,
    /// The bridge's id for this booking, the same on every send of it: a
    /// scheduler that takes a client reference books it once however often
    /// it arrives (after a crash, a retry sends it again).
    pub reference: &'a str,
}

/// A booking as the store keeps it from before it is sent until the
/// scheduler's answer is recorded: enough to send it again, the same way,
/// after a crash. Carries customer data: kept only while unsettled.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BookingToSend {
    pub schema_version: u32,
    pub reference: String,
    pub service_codes: Vec<String>,
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub vin: Option<String>,
    pub year: Option<i32>,
    pub make: Option<String>,
    pub model: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub comment: Option<String>,
}

impl BookingToSend {
    pub const SCHEMA_VERSION: u32 = 1;

    pub fn request(&self) -> BookingRequest<'_> {
        BookingRequest {
            service_codes: &self.service_codes,
            start: self.start,
            end: self.end,
            vin: self.vin.as_deref(),
            year: self.year,
            make: self.make.as_deref(),
            model: self.model.as_deref(),
            first_name: &self.first_name,
            last_name: &self.last_name,
            email: self.email.as_deref(),
            phone: self.phone.as_deref(),
            comment: self.comment.as_deref(),
            reference: &self.reference,
        }
    }
}

/// What the scheduler made of a booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    pub appointment_id: Option<String>,
    pub status: BookedStatus,
}

/// A scheduler's answer to a booking, in canonical terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BookedStatus {
    /// The slot is the customer's.
    Booked,
    /// The scheduler queued the customer for the slot; the dealership confirms later.
    Waitlisted,
}

/// An appointment to cancel.
#[derive(Debug, Clone)]
pub struct CancelRequest<'a> {
    pub appointment_id: &'a str,
    pub reason: Option<&'a str>,
}
