//! Open slots as callers see them: only those still ahead and within the days
//! asked for, earliest first, once each, in the dealership's offset.

use chrono::{DateTime, Duration, FixedOffset, SecondsFormat, Utc};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::adapters::{Adapter, AdapterError, Slot, SlotRequest, UpstreamAdapter};
use crate::tools::ToolContext;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct SlotView {
    /// RFC 3339 with the dealership's offset.
    pub start: String,
    pub end: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisor_id: Option<String>,
}

/// The scheduler's open slots for `request`, cleaned up: vendors pad ranges
/// and repeat slots per advisor.
pub async fn free_slots(
    ctx: &ToolContext<'_>,
    adapter: &Adapter,
    request: &SlotRequest<'_>,
) -> Result<Vec<Slot>, AdapterError> {
    let tz = ctx.dealership.map_or(chrono_tz::UTC, |d| d.timezone);
    let mut slots = adapter.service_slots(request).await?;
    let now = Utc::now();
    slots.retain(|s| {
        let day = s.start.with_timezone(&tz).date_naive();
        s.start > now && day >= request.from && day <= request.to
    });
    slots.sort_by_key(|s| s.start);
    slots.dedup_by_key(|s| (s.start, s.advisor_id.clone()));
    Ok(slots)
}

/// Up to `count` distinct start times from `after` on, looking `days` ahead.
/// Used to offer alternatives; a failure here only means none are offered.
pub async fn next_starts(
    ctx: &ToolContext<'_>,
    adapter: &Adapter,
    request: &SlotRequest<'_>,
    after: DateTime<FixedOffset>,
    count: usize,
) -> Vec<SlotView> {
    let tz = ctx.dealership.map_or(chrono_tz::UTC, |d| d.timezone);
    let slots = match free_slots(ctx, adapter, request).await {
        Ok(slots) => slots,
        Err(e) => {
            tracing::warn!(error = %e, "Could not read open slots to offer as alternatives.");
            return Vec::new();
        }
    };
    let mut seen = Vec::new();
    slots
        .into_iter()
        .filter(|s| s.start >= after)
        .filter(|s| {
            let fresh = !seen.contains(&s.start);
            seen.push(s.start);
            fresh
        })
        .take(count)
        .map(|s| slot_view(s, tz))
        .collect()
}

/// How many days of availability alternatives are looked for in.
pub const LOOKAHEAD_DAYS: i64 = 7;

/// The days to search for alternatives to `start`: its day and the next few.
pub fn lookahead(start: DateTime<FixedOffset>, tz: Tz) -> (chrono::NaiveDate, chrono::NaiveDate) {
    let from = start.with_timezone(&tz).date_naive();
    (from, from + Duration::days(LOOKAHEAD_DAYS - 1))
}

pub fn local(t: DateTime<FixedOffset>, tz: Tz) -> String {
    t.with_timezone(&tz)
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

pub fn slot_view(s: Slot, tz: Tz) -> SlotView {
    SlotView {
        start: local(s.start, tz),
        end: local(s.end, tz),
        advisor_id: s.advisor_id,
    }
}
