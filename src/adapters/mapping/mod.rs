//! Declarative field mappings (`mappings/*.toml`) from upstream records to
//! canonical types, shared by every adapter kind.

mod apply;
pub mod path;
mod spec;

pub use apply::{MapContext, MappedUnit, Unmappable, map_vehicle, vehicle_id};
pub use path::ValuePath;
pub use spec::{FeedFormat, FieldKind, VEHICLE_FIELDS, VehicleMapping};
