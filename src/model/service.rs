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
