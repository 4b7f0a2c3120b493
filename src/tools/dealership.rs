//! `dealership.list` and `dealership.get`: answered from configuration.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::Domain;

/// No arguments.
// An empty `properties` beside `additionalProperties: false` makes the
// validator name each field sent (`/unexpected`), as for every other tool.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("properties" = {}))]
pub struct ListArgs {}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    /// Id from `dealership.list`.
    #[schemars(length(min = 1, max = 64))]
    pub dealership_id: String,
}

/// One dealership the caller may use.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DealershipSummary {
    pub id: String,
    pub name: String,
    pub city: String,
    pub region: String,
    pub timezone: String,
    /// Domains you can use here with your access (e.g. `inventory`).
    pub domains: Vec<Domain>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListResult {
    pub items: Vec<DealershipSummary>,
    /// Always false: every dealership you may use is on the one page.
    pub has_more: bool,
    /// Dealerships listed.
    pub total: u64,
}

use crate::tools::to_result;
use crate::tools::{Handled, ToolArgs, ToolContext};

impl ToolArgs for ListArgs {
    fn dealership_id(&self) -> Option<&str> {
        None
    }
}

impl ToolArgs for GetArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }
}

pub async fn list(ctx: ToolContext<'_>, _args: ListArgs) -> Handled {
    let items: Vec<DealershipSummary> = ctx
        .services
        .dealerships()
        .filter(|d| ctx.principal.may_use(&d.profile.id))
        .map(|d| DealershipSummary {
            id: d.profile.id.clone(),
            name: d.profile.name.clone(),
            city: d.profile.address.city.clone(),
            region: d.profile.address.region.clone(),
            timezone: d.profile.timezone.clone(),
            domains: d.domains_for(ctx.principal),
        })
        .collect();
    let total = items.len() as u64;
    to_result(&ListResult {
        items,
        has_more: false,
        total,
    })
}

pub async fn get(ctx: ToolContext<'_>, _args: GetArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let mut profile = dealership.profile.clone();
    profile.domains = dealership.domains_for(ctx.principal);
    to_result(&profile)
}
