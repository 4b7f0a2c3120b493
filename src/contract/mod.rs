//! What every layer speaks: the client-visible error contract, tool results
//! as they travel, pagination cursors and the calling principal. Nothing here
//! imports anything else of the crate, so any layer may depend on it.

pub mod cursor;
pub mod error;
pub mod payload;
pub mod principal;
pub mod redact;
pub mod tokens;

pub use error::{ErrorCode, Problem, Problems, ToolError};
pub use payload::Payload;
pub use principal::{DealershipGrant, Owner, Principal, Scope};
