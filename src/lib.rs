//! dms-bridge: one canonical, typed, safe MCP tool surface for car dealerships,
//! translated through pluggable adapters into the systems they already run.
//!
//! Layout: [`config`] (strict types, pure validation) → [`runtime`] (build with
//! I/O) → [`gateway`] (the dispatch pipeline every call passes through) →
//! [`tools`] (the canonical surface) → [`adapters`] (closed set of upstream
//! kinds driven by `adapters/` profiles and `mappings/` field maps), exposed by
//! [`mcp`] over Streamable HTTP and stdio. [`cli::demo`] runs it all against
//! the mock upstreams of `dms-bridge-testkit` on loopback.

pub mod adapters;
pub mod adf;
pub mod cli;
pub mod config;
pub mod gateway;
pub mod leads;
pub mod mcp;
pub mod model;
pub mod runtime;
pub mod store;
pub mod tools;
