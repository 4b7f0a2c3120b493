//! Declarative field mappings (`mappings/*.toml`) from upstream records to
//! canonical types, shared by every adapter kind.

mod apply;
pub mod explain;
pub mod path;
mod ro_apply;
mod ro_spec;
mod spec;
mod time;
pub mod vocabulary;

pub use apply::{MapContext, MappedUnit, Unmappable, map_vehicle, vehicle_id};
pub use path::ValuePath;
pub use ro_apply::{list_at, map_repair_order};
pub use ro_spec::{RO_FIELDS, RoMapping};
pub use spec::{FeedFormat, FeedSource, FieldKind, VEHICLE_FIELDS, VehicleMapping};
pub use time::{parse_time, read_time};
