//! dms-bridge: one canonical, typed, safe MCP tool surface for car dealerships,
//! translated through pluggable adapters into the systems they already run.
//!
//! Layers, each using only those below it, and no circle between the files
//! of any folder (both checked by `tests/layers.rs`):
//!
//! - [`cli`], [`kit`] (the integrator's kit: mapping tests, probes,
//!   recording, verification), [`runtime`] (build from config with I/O, start), [`http`] (the
//!   HTTP server: accept loop, front door, callers, OAuth, inbound vendor
//!   events, the MCP transport, ops routes), [`mcp`] (the MCP protocol, over
//!   that transport and stdio) and [`aap`] (the Auto Agent Protocol over A2A,
//!   a second door onto the same pipeline);
//! - [`gateway`]: the dispatch pipeline every call passes through, and only
//!   that: auth, scoping, validation, quotas, read cache, the write step
//!   (idempotency keys, invalidation), the upstream error mapping, audit;
//! - [`tools`]: the canonical surface, one table row per tool plus handlers
//!   that see a `ToolContext`, never the gateway;
//! - [`lifecycle`]: the customer data lifecycle (retention purge, reseal
//!   under the current key, erasure of one customer);
//! - [`leads`] (the lead desk, its domain record and outbox), [`mirror`] (the
//!   inventory mirror and its `vehicle.*` events), [`webhooks`] (signed event
//!   webhooks out, from a durable cursor), [`adapters`]
//!   (a closed set of upstream kinds driven by `adapters/` profiles and
//!   `mappings/` field maps), [`store`] (all SQL);
//! - [`quotas`] (quotas shared by replicas through Redis, used by the gateway
//!   for callers and by adapters for vendors);
//! - [`config`] (strict types, pure validation), [`model`] (canonical types),
//!   [`adf`] (the ADF XML codec);
//! - [`contract`] (errors, payloads, cursors, principals) and [`telemetry`]
//!   (metrics, trace context, progress).
//!
//! [`cli::demo`] runs it all against the mock upstreams of
//! `dms-bridge-testkit` on loopback.

pub mod aap;
pub mod adapters;
pub mod adf;
pub mod cli;
pub mod config;
pub mod contract;
pub mod gateway;
pub mod http;
pub mod kit;
pub mod leads;
pub mod lifecycle;
pub mod mcp;
pub mod mirror;
pub mod model;
pub mod net;
pub mod quotas;
pub mod runtime;
pub mod store;
pub mod telemetry;
pub mod tools;
pub mod webhooks;
