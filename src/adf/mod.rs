//! ADF 1.0 (Auto-lead Data Format): the XML every US dealer CRM takes leads
//! in. A strict generator for what we send and a lenient parser for what the
//! real world sends (and to check our own output round-trips).

mod date;
mod extras;
mod lenient;
mod model;
mod read;
mod read_vehicle;
mod tree;
mod write;

pub use model::*;
pub use read::{AdfParseError, parse};
pub use write::{is_xml_char, render};
