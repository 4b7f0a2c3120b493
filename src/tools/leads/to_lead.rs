//! `leads.create`'s arguments mapped, once, to the lead the bridge keeps
//! ([`crate::leads::lead::Lead`]). Field by field on purpose: a change to the
//! tool's arguments has to decide here what it means for stored leads.

use super::args::{
    AppointmentRequest, CreateArgs, Customer, CustomerAddress, TradeIn, VehicleOfInterest,
};
use crate::leads::lead::{self, LEAD_SCHEMA, Lead};
use crate::tools::customer::consent_record;

impl From<&CreateArgs> for Lead {
    fn from(args: &CreateArgs) -> Self {
        Lead {
            schema_version: LEAD_SCHEMA,
            customer: customer(&args.customer),
            consent: args.consent.as_ref().map(consent_record),
            vehicle_of_interest: args.vehicle_of_interest.as_ref().map(vehicle),
            trade_in: args.trade_in.as_ref().map(trade_in),
            appointment: args.appointment.as_ref().map(appointment),
            message: args.message.clone(),
            source_agent: args.source_agent.clone(),
            submitted_at: args.submitted_at.clone(),
        }
    }
}

fn customer(c: &Customer) -> lead::Customer {
    lead::Customer {
        first_name: c.first_name.clone(),
        last_name: c.last_name.clone(),
        email: c.email.clone(),
        phone: c.phone.clone(),
        preferred_contact: c.preferred_contact,
        address: c.address.as_ref().map(address),
    }
}

fn address(a: &CustomerAddress) -> lead::PostalAddress {
    lead::PostalAddress {
        address_line_1: a.address_line_1.clone(),
        address_line_2: a.address_line_2.clone(),
        city: a.city.clone(),
        state: a.state.clone(),
        zip: a.zip.clone(),
        country: a.country.clone(),
    }
}

fn vehicle(v: &VehicleOfInterest) -> lead::VehicleOfInterest {
    lead::VehicleOfInterest {
        vehicle_id: v.vehicle_id.clone(),
        vin: v.vin.clone(),
        stock: v.stock.clone(),
        year: v.year,
        make: v.make.clone(),
        model: v.model.clone(),
        trim: v.trim.clone(),
        condition: v.condition,
        body: v.body.clone(),
        transmission: v.transmission.clone(),
        mileage: v.mileage,
    }
}

fn trade_in(t: &TradeIn) -> lead::TradeIn {
    lead::TradeIn {
        vin: t.vin.clone(),
        year: t.year,
        make: t.make.clone(),
        model: t.model.clone(),
        trim: t.trim.clone(),
        mileage: t.mileage,
        condition: t.condition,
    }
}

fn appointment(a: &AppointmentRequest) -> lead::AppointmentRequest {
    lead::AppointmentRequest {
        appointment_type: a.appointment_type,
        appointment_at: a.appointment_at.clone(),
        duration_minutes: a.duration_minutes,
        notes: a.notes.clone(),
    }
}
