//! The Auto Agent Protocol door: AAP v1.3 (an A2A v1.0 profile) served from
//! the same pipeline as MCP. Each dealership with `aap = true` has an agent
//! card ([`card`]) and a JSON-RPC endpoint taking `SendMessage` ([`rpc`]);
//! every skill runs as its canonical tool ([`skill`], [`translate`]) through
//! `Gateway::call_tool`, so scoping, quotas, cache, consent, idempotency,
//! duplicates, the lead outbox, audit and error mapping are the MCP door's.
//! Requests are checked against AAP's own published schemas ([`schemas`])
//! first, and errors are AAP's ([`errors`]).

pub mod card;
mod dispatch;
pub mod errors;
pub mod rpc;
pub mod schemas;
pub mod skill;
pub mod translate;

pub use card::agent_card;
pub use rpc::{Answer, ServiceParameters, answer};
pub use skill::Skill;

/// The AAP extension this door serves (A2A `capabilities.extensions[].uri`).
pub const EXTENSION_URI: &str = "https://autoagentprotocol.org/extensions/aap/v1.3";

/// The AAP release the door implements.
pub const AAP_VERSION: &str = "1.3.0";
