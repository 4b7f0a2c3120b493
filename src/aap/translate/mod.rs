//! Each AAP skill's request as its canonical tool's arguments, and the
//! canonical result as AAP's answer. Rules live in the tools; this is shape.

pub mod dealer;
pub mod inventory;
pub mod lead;
pub mod vehicle;
