//! The integrator's kit: what a dealer or an integrator runs before go-live to
//! see what a profile and mapping make of an upstream's answers, and to prove
//! that an upstream (or a whole deployment) answers the canonical contract.
//!
//! The kit sits between `cli` and `runtime`: it builds the same runtime the
//! bridge serves with, so what it proves is what production runs.
//!
//! - [`mapping_test`]: a profile and a mapping against a saved upstream answer,
//!   offline, field by field with each field's source path.
//! - [`record`] and [`replay`]: an upstream's real exchanges recorded through
//!   [`proxy`]es into a fixture set ([`fixtures`]), customers faked and
//!   credentials removed ([`pii`]), and served again offline.
//! - [`probe`]: a configured upstream read once per domain, live and
//!   read-only, with timings and rate-limit headers.
//! - [`conform`]: a running deployment checked from outside over MCP.
//! - [`verify`]: an upstream (a vendor's sandbox, a replayed fixture set)
//!   against the canonical contract and the fault matrix.

pub mod bridge;
pub mod conform;
pub mod fixtures;
pub mod format;
pub mod mapping_test;
pub mod pii;
pub mod probe;
pub mod proxy;
pub mod record;
pub mod replay;
pub mod reroute;
pub mod verify;
