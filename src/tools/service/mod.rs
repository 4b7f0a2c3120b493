//! Service scheduling tools: `service.check_availability`,
//! `service.book_appointment`, `service.cancel_appointment` and
//! `service.get_appointment`, over the
//! dealership's scheduler (an Xtime-shaped API in the built-in profiles).

mod appointment;
mod availability;
mod book;
mod book_args;
mod cancel;
mod fallback;
mod recovery;
pub mod resend;
mod slots;
mod vehicle;

pub use appointment::{AppointmentView, GetAppointmentArgs, get_appointment};
pub use availability::{AvailabilityArgs, AvailabilityResult, check_availability};
pub use book::book_appointment;
pub use book_args::{BOOKING_SCOPE, BookArgs, BookResult, BookingCustomer, BookingStatus};
pub use cancel::{CancelArgs, CancelResult, cancel_appointment};
pub use slots::SlotView;
pub use vehicle::ServiceCode;
