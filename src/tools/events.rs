//! `events.list`: a dealership's change events (AutomotiveMCP Level 3), in
//! order, resumable from a cursor across restarts. A caller sees the events
//! of the domains its scopes can read; lead and appointment events only for
//! its own records unless it has the domain's staff scope.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::contract::error::{ErrorCode, ToolError};
use crate::contract::{Principal, Scope};
use crate::model::event::{Event, EventType, ResourceKind};
use crate::store::events::{self, StoredEvent};
use crate::tools::budget::fit_page;
use crate::tools::{Check, Dealership, Handled, ToolArgs, ToolContext, to_result};

/// Rows read per query while filtering.
const BATCH: u32 = 200;
/// Rows one call looks through at most; past it, the caller resumes from `next_cursor`.
const SCAN_LIMIT: usize = 5_000;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    #[schemars(length(min = 1, max = 64))]
    pub dealership_id: String,
    /// `next_cursor` from the previous call; without one, the oldest kept.
    #[serde(default)]
    #[schemars(length(min = 1, max = 256))]
    pub cursor: Option<String>,
    /// Default: all you may see.
    #[serde(default)]
    pub types: Vec<EventType>,
    /// Only events about this resource.
    #[serde(default)]
    pub resource: Option<ResourceFilter>,
    /// Page size.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// One resource, by kind and id (as events name it).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceFilter {
    pub kind: ResourceKind,
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListResult {
    /// Events in sequence order. Delivery is at least once: deduplicate on `id`.
    pub items: Vec<Event>,
    /// Always present: pass it back as `cursor` to resume after the last event
    /// looked at (also when none matched), now or after a restart.
    pub next_cursor: String,
    /// True when more events may follow at once; false when you are caught up.
    pub has_more: bool,
}

impl ToolArgs for ListArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check.limit("/limit", self.limit);
        if let Some(cursor) = &self.cursor {
            // Signed with the store's key and bound to the dealership.
            let codec = &check.services.event_cursors;
            if let Err(e) = codec.decode(cursor, &self.dealership_id, CURSOR_QUERY) {
                check.problems.push("/cursor", e.to_string());
            }
        }
    }
}

/// What an events cursor is bound to besides its dealership: the event log
/// itself (any filter may resume from any position).
pub const CURSOR_QUERY: &str = "events";

/// Which events a principal may see, by resource kind.
struct Visibility<'a> {
    principal: &'a Principal,
    types: Vec<EventType>,
}

impl<'a> Visibility<'a> {
    /// The caller's readable event types among those asked for; refuses
    /// types the caller's scopes cannot read, naming the scope.
    fn new(principal: &'a Principal, asked: &[EventType]) -> Result<Self, ToolError> {
        let readable = |t: &EventType| principal.has_scope(read_scope(t.resource_kind()));
        if let Some(t) = asked.iter().find(|t| !readable(t)) {
            return Err(forbidden(read_scope(t.resource_kind())));
        }
        let types: Vec<EventType> = if asked.is_empty() {
            EventType::ALL.into_iter().filter(readable).collect()
        } else {
            asked.to_vec()
        };
        if types.is_empty() {
            return Err(forbidden(Scope::InventoryRead));
        }
        Ok(Self { principal, types })
    }

    fn sees(&self, stored: &StoredEvent) -> bool {
        self.types.contains(&stored.event.event_type) && visible_to(self.principal, stored)
    }
}

/// Whether `principal` may see this event: its scopes read the resource's
/// domain, and a record with an owner is its own unless it is staff. (Access
/// to the dealership is the caller's to check.)
pub fn visible_to(principal: &Principal, stored: &StoredEvent) -> bool {
    let kind = stored.event.event_type.resource_kind();
    principal.has_scope(read_scope(kind))
        && match (staff_scope(kind), &stored.owner) {
            (Some(staff), Some(owner)) => principal.has_scope(staff) || **owner == *principal.name,
            _ => true,
        }
}

/// Events are of use where the caller reads a domain the dealership routes.
pub fn useful_at(principal: &Principal, dealership: &Dealership) -> bool {
    EventType::ALL.into_iter().any(|t| {
        let kind = t.resource_kind();
        principal.has_scope(read_scope(kind)) && dealership.routes.contains_key(&kind.domain())
    })
}

fn read_scope(kind: ResourceKind) -> Scope {
    match kind {
        ResourceKind::Vehicle => Scope::InventoryRead,
        ResourceKind::Lead => Scope::LeadsRead,
        ResourceKind::Appointment | ResourceKind::RepairOrder => Scope::ServiceRead,
    }
}

/// The scope that shows every customer's records of this kind.
fn staff_scope(kind: ResourceKind) -> Option<Scope> {
    match kind {
        ResourceKind::Lead => Some(Scope::LeadsStaff),
        ResourceKind::Appointment => Some(Scope::ServiceStaff),
        ResourceKind::Vehicle | ResourceKind::RepairOrder => None,
    }
}

fn forbidden(scope: Scope) -> ToolError {
    ToolError::new(
        ErrorCode::AuthForbidden,
        "Your token does not carry the scope to read these events.",
    )
    .with_details(json!({ "required_scope": scope.as_str() }))
}

pub async fn list(ctx: ToolContext<'_>, args: ListArgs) -> Handled {
    let visible = Visibility::new(ctx.principal, &args.types)?;
    let limit = ctx.page_size(args.limit) as usize;
    let codec = &ctx.services.event_cursors;
    let mut position = args
        .cursor
        .as_deref()
        .and_then(|c| codec.decode(c, &args.dealership_id, CURSOR_QUERY).ok())
        .unwrap_or(0);
    let (mut found, mut scanned, mut at_end) = (Vec::new(), 0usize, false);
    while found.len() < limit && scanned < SCAN_LIMIT {
        let batch = events::after(&ctx.services.store, &args.dealership_id, position, BATCH)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "Could not read events.");
                ToolError::internal()
            })?;
        at_end = batch.len() < BATCH as usize;
        for stored in batch {
            scanned += 1;
            position = stored.event.sequence;
            let wanted = args.resource.as_ref().is_none_or(|r| {
                r.kind == stored.event.resource.kind && r.id == stored.event.resource.id
            });
            if wanted && visible.sees(&stored) {
                found.push(stored.event);
                if found.len() == limit {
                    break;
                }
            }
        }
        if at_end {
            break;
        }
    }
    let has_more = !at_end || found.len() == limit && more_after(&ctx, &args, position).await;
    fit_page(&ctx, &found, |kept| {
        // Cut short by the token budget, the page goes on after its last event.
        let last_kept = kept.checked_sub(1).and_then(|i| found.get(i));
        let (position, has_more) = match last_kept {
            Some(last) if kept < found.len() => (last.sequence, true),
            _ => (position, has_more),
        };
        to_result(&ListResult {
            items: found[..kept].to_vec(),
            next_cursor: codec.encode(&args.dealership_id, CURSOR_QUERY, position),
            has_more,
        })
    })
}

/// Whether the log has events past `position` (a full page may end exactly at the head).
async fn more_after(ctx: &ToolContext<'_>, args: &ListArgs, position: u64) -> bool {
    events::head(&ctx.services.store, &args.dealership_id)
        .await
        .is_ok_and(|head| head > position)
}
