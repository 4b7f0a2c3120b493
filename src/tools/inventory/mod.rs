//! `inventory.search`, `inventory.get` and `inventory.facets`.

mod args;
pub mod query;

pub use args::*;

use serde_json::json;

use std::sync::Arc;

use crate::adapters::{InventorySnapshot, Lookup, UnitRef, UpstreamAdapter};
use crate::contract::cursor::CursorCodec;
use crate::contract::error::{ErrorCode, ToolError};
use crate::mirror::MirrorError;
use crate::model::{Domain, vin};
use crate::tools::budget::fit_page;
use crate::tools::to_result;
use crate::tools::{Check, Handled, HandlerError, ToolArgs, ToolContext};

impl ToolArgs for SearchArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check_filters(&self.filters, "/filters", check);
        check.limit("/limit", self.limit);
        if let Some(cursor) = &self.cursor {
            check.cursor("/cursor", cursor, &self.dealership_id, &search_hash(self));
        }
    }
}

impl ToolArgs for FacetsArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check_filters(&self.filters, "/filters", check);
    }
}

impl ToolArgs for GetArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        if self.vehicle_id.is_none() && self.vin.is_none() && self.stock.is_none() {
            check
                .problems
                .push("", "give one of vehicle_id, vin or stock");
        }
        if let Some(v) = &self.vin {
            check.vin("/vin", v);
        }
    }
}

fn check_filters(f: &Filters, at: &str, check: &mut Check<'_>) {
    if let (Some(min), Some(max)) = (f.year_min, f.year_max)
        && min > max
    {
        check
            .problems
            .push(format!("{at}/year_max"), "year_max is below year_min");
    }
    for (name, money) in [("price_min", &f.price_min), ("price_max", &f.price_max)] {
        if let Some(m) = money {
            check.money(&format!("{at}/{name}"), m);
        }
    }
    if let (Some(min), Some(max)) = (&f.price_min, &f.price_max)
        && min.amount > max.amount
    {
        check
            .problems
            .push(format!("{at}/price_max"), "price_max is below price_min");
    }
    if let Some(v) = &f.vin {
        check.vin(&format!("{at}/vin"), v);
    }
}

/// A cursor that starts `args`' search at `offset`: for a door that pages
/// by offset (AAP's `skip`) rather than by cursor.
pub fn cursor_at(cursors: &CursorCodec, args: &SearchArgs, offset: u64) -> String {
    cursors.encode(&args.dealership_id, &search_hash(args), offset)
}

/// Binds cursors to everything that shapes the result order and membership.
fn search_hash(args: &SearchArgs) -> String {
    CursorCodec::query_hash(&json!({ "filters": args.filters, "sort": args.sort, "zip": args.zip }))
}

/// The dealership's inventory: the mirror's copy where it is mirrored (with a
/// notice when that copy is stale), else a read of the upstream.
async fn inventory(
    ctx: &ToolContext<'_>,
    dealership_id: &str,
) -> Result<(Arc<InventorySnapshot>, Option<StaleNotice>), HandlerError> {
    let mirror = &ctx.services.mirror;
    if !mirror.mirrors(dealership_id) {
        return Ok((ctx.adapter(Domain::Inventory)?.inventory().await?, None));
    }
    match mirror.inventory(dealership_id).await {
        Ok(mirrored) => {
            let stale = mirrored.stale_since.map(|at| StaleNotice {
                last_synced_at: at,
                message: "The dealership's inventory system has not answered the bridge since last_synced_at; availability and prices may have changed. Confirm with the dealership before promising a vehicle.".into(),
            });
            Ok((mirrored.copy, stale))
        }
        Err(MirrorError::Upstream(e)) => Err(e.into()),
        Err(MirrorError::Store(e)) => {
            tracing::error!(dealership = dealership_id, error = %e, "The inventory mirror could not be stored.");
            Err(ToolError::internal().into())
        }
    }
}

pub async fn search(ctx: ToolContext<'_>, args: SearchArgs) -> Handled {
    let (snapshot, stale) = inventory(&ctx, &args.dealership_id).await?;
    let hits = query::select(&snapshot, &args.filters, args.sort);
    let limit = ctx.page_size(args.limit);
    let hash = search_hash(&args);
    let cursors = &ctx.services.cursors;
    let page = cursors.page(
        args.cursor.as_deref(),
        &args.dealership_id,
        &hash,
        limit,
        hits.len(),
    );
    let items: Vec<Listed<'_>> = hits[page.range.clone()]
        .iter()
        .map(|v| Listed::of(v, args.response_format))
        .collect();
    fit_page(&ctx, &items, |kept| {
        let next_cursor = page.cursor_after(kept, cursors, &args.dealership_id, &hash);
        to_result(&SearchResult {
            items: items[..kept].to_vec(),
            has_more: next_cursor.is_some(),
            next_cursor,
            total: hits.len() as u64,
            limit,
            stale: stale.clone(),
        })
    })
}

pub async fn facets(ctx: ToolContext<'_>, args: FacetsArgs) -> Handled {
    let (snapshot, stale) = inventory(&ctx, &args.dealership_id).await?;
    let hits = query::select(&snapshot, &args.filters, None);
    to_result(&FacetsResult {
        stale,
        ..query::facets(&hits)
    })
}

pub async fn get(ctx: ToolContext<'_>, args: GetArgs) -> Handled {
    let (snapshot, stale) = inventory(&ctx, &args.dealership_id).await?;
    let normalized_vin = args.vin.as_deref().map(vin::normalize);
    let unit = match (&args.vehicle_id, &normalized_vin, &args.stock) {
        (Some(id), _, _) => UnitRef::Id(id),
        (None, Some(v), _) => UnitRef::Vin(v),
        (None, None, Some(s)) => UnitRef::Stock(s),
        (None, None, None) => return Err(ToolError::internal().into()),
    };
    let search_again = json!({ "dealership_id": args.dealership_id, "filters": {} });
    match snapshot.lookup(unit) {
        Lookup::Listed(v) => to_result(&GetResult {
            vehicle: (**v).clone(),
            stale,
        }),
        Lookup::Sold => Err(ToolError::new(
            ErrorCode::InventoryVehicleUnavailable,
            "This vehicle has been sold or withdrawn and is no longer available.",
        )
        .with_next_tool_call(
            "inventory_search",
            search_again,
            "Search for similar vehicles that are available.",
        )
        .into()),
        Lookup::NotFound => Err(ToolError::new(
            ErrorCode::InventoryVehicleNotFound,
            "This dealership has no vehicle with that identifier.",
        )
        .with_next_tool_call(
            "inventory_search",
            search_again,
            "Search the dealership's inventory to find the vehicle's id.",
        )
        .into()),
    }
}
