//! The canonical contract, checked on what the tools answer for the
//! upstream: required fields, money in minor units of the dealership's
//! currency, sold units never listed, ids that stay the same from one read to
//! the next, paging that neither loses nor repeats a record, and times in the
//! dealership's zone. Reads only: no lead, booking or cancellation is sent.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Offset, TimeZone};
use serde_json::{Value, json};

use super::report::Check;
use crate::kit::bridge::{Answer, Calls};

/// Pages read at most, so a verify run stays bounded whatever the upstream holds.
const MAX_PAGES: usize = 50;
const PAGE: u64 = 100;

/// What one full read through a paged list tool found.
struct Listing {
    items: Vec<Value>,
    /// `total` as the first page said it.
    total: Option<u64>,
    pages: usize,
}

/// Reads every page of `tool` (up to [`MAX_PAGES`]), or the first error.
async fn read_all(bridge: &impl Calls, tool: &str, args: &Value) -> Result<Listing, Value> {
    let mut listing = Listing {
        items: Vec::new(),
        total: None,
        pages: 0,
    };
    let mut cursor: Option<String> = None;
    while listing.pages < MAX_PAGES {
        let mut page_args = args.clone();
        page_args["limit"] = json!(PAGE);
        if let Some(c) = &cursor {
            page_args["cursor"] = json!(c);
        }
        let page = match bridge.call(tool, page_args).await {
            Answer::Ok(page) => page,
            Answer::Error(e) => return Err(e),
        };
        listing.pages += 1;
        if listing.total.is_none() {
            listing.total = page["total"].as_u64();
        }
        listing
            .items
            .extend(page["items"].as_array().cloned().unwrap_or_default());
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if page["has_more"] != json!(true) || cursor.is_none() {
            break;
        }
    }
    Ok(listing)
}

/// The dealership's zone and currency, as the checks compare against them.
pub struct Dealer<'a> {
    pub id: &'a str,
    pub timezone: chrono_tz::Tz,
    pub currency: &'a str,
}

pub async fn inventory(bridge: &impl Calls, dealer: &Dealer<'_>) -> Vec<Check> {
    let domain = "inventory";
    let args = json!({ "dealership_id": dealer.id, "response_format": "detailed" });
    let first = match read_all(bridge, "inventory.search", &args).await {
        Ok(l) => l,
        Err(e) => {
            return vec![Check::fail(
                domain,
                "answers",
                format!("inventory.search failed: {e}"),
            )];
        }
    };
    let mut checks = vec![Check::pass(
        domain,
        "answers",
        format!(
            "{} vehicle(s) in {} page(s)",
            first.items.len(),
            first.pages
        ),
    )];
    if first.items.is_empty() {
        checks.push(Check::warn(
            domain,
            "has vehicles",
            "the upstream listed no vehicle; nothing below was checked on data",
        ));
    }
    checks.push(paging(domain, &first, "id"));
    let mut problems = Vec::new();
    for item in &first.items {
        vehicle_problems(item, dealer, &mut problems);
    }
    checks.push(Check::from_problems(
        domain,
        "required fields, statuses, money, times",
        &problems,
    ));
    let sold: Vec<&str> = first
        .items
        .iter()
        .filter(|v| v["status"] == "sold")
        .filter_map(|v| v["id"].as_str())
        .collect();
    checks.push(Check::from_problems(
        domain,
        "sold units never listed",
        &sold
            .iter()
            .map(|id| format!("{id} is listed as sold"))
            .collect::<Vec<_>>(),
    ));
    match read_all(bridge, "inventory.search", &args).await {
        Ok(second) => checks.push(stable_ids(domain, &first.items, &second.items, "id", "vin")),
        Err(e) => checks.push(Check::fail(
            domain,
            "stable ids",
            format!("second read failed: {e}"),
        )),
    }
    if let Some(item) = first.items.first() {
        checks.push(lookup(bridge, dealer, item).await);
    }
    checks
}

fn vehicle_problems(item: &Value, dealer: &Dealer<'_>, problems: &mut Vec<String>) {
    let id = item["id"].as_str().unwrap_or("?");
    let mut say = |what: String| problems.push(format!("{id}: {what}"));
    if !item["id"].as_str().is_some_and(|s| s.starts_with("veh_")) {
        say("id is missing or not a vehicle id".into());
    }
    if item["dealership_id"] != json!(dealer.id) {
        say(format!("dealership_id is {}", item["dealership_id"]));
    }
    if !matches!(
        item["status"].as_str(),
        Some("available" | "in_transit" | "pending")
    ) {
        say(format!("status {} is not a listed status", item["status"]));
    }
    if !matches!(item["condition"].as_str(), Some("new" | "used" | "cpo")) {
        say(format!(
            "condition {} is not new, used or cpo",
            item["condition"]
        ));
    }
    if item["vin"].is_null() && item["stock"].is_null() {
        say("neither a VIN nor a stock number".into());
    }
    for field in ["price", "list_price", "msrp"] {
        if let Some(problem) = money_problem(&item[field], dealer.currency) {
            say(format!("{field}: {problem}"));
        }
    }
    match item["last_verified_at"].as_str() {
        Some(at) => {
            if let Some(problem) = zone_problem(at, dealer.timezone) {
                say(format!("last_verified_at: {problem}"));
            }
        }
        None => say("last_verified_at is missing".into()),
    }
}

/// Money is `{amount, currency}` with a whole, positive amount in minor units.
fn money_problem(value: &Value, currency: &str) -> Option<String> {
    if value.is_null() {
        return None;
    }
    if !value["amount"].is_i64() && !value["amount"].is_u64() {
        return Some(format!(
            "amount {} is not a whole number of minor units",
            value["amount"]
        ));
    }
    if value["amount"].as_i64().is_some_and(|a| a < 0) {
        return Some("amount is negative".into());
    }
    (value["currency"] != json!(currency)).then(|| {
        format!(
            "currency {} is not the dealership's {currency}",
            value["currency"]
        )
    })
}

/// A time is RFC 3339 with the dealership's UTC offset at that instant.
fn zone_problem(text: &str, tz: chrono_tz::Tz) -> Option<String> {
    let Ok(at) = DateTime::parse_from_rfc3339(text) else {
        return Some(format!("{text:?} is not an RFC 3339 time"));
    };
    let local = tz.from_utc_datetime(&at.naive_utc()).offset().fix();
    (local != *at.offset())
        .then(|| format!("{text} is not in the dealership's zone {tz} (offset {local})"))
}

/// Every record once: as many as `total` said, no key twice.
fn paging(domain: &'static str, listing: &Listing, key: &str) -> Check {
    let mut seen = BTreeSet::new();
    let repeated: Vec<String> = listing
        .items
        .iter()
        .filter_map(|i| i[key].as_str())
        .filter(|k| !seen.insert(*k))
        .map(|k| format!("{k} came twice"))
        .collect();
    let mut problems = repeated;
    if let Some(total) = listing.total
        && total != seen.len() as u64
        && listing.pages < MAX_PAGES
    {
        problems.push(format!(
            "total says {total}, the pages held {} distinct record(s)",
            seen.len()
        ));
    }
    Check::from_problems(domain, "paging neither loses nor repeats", &problems)
}

/// Two reads name the same records by the same ids.
fn stable_ids(
    domain: &'static str,
    first: &[Value],
    second: &[Value],
    key: &str,
    natural: &str,
) -> Check {
    let index = |items: &[Value]| -> BTreeMap<String, Value> {
        items
            .iter()
            .filter_map(|i| Some((i[key].as_str()?.to_owned(), i[natural].clone())))
            .collect()
    };
    let (a, b) = (index(first), index(second));
    let mut problems: Vec<String> = a
        .keys()
        .filter(|k| !b.contains_key(*k))
        .map(|k| format!("{k} is gone on the second read"))
        .collect();
    problems.extend(
        a.iter()
            .filter(|(k, v)| b.get(*k).is_some_and(|w| w != *v))
            .map(|(k, _)| format!("{k} names another {natural} on the second read")),
    );
    Check::from_problems(domain, "stable ids", &problems)
}

async fn lookup(bridge: &impl Calls, dealer: &Dealer<'_>, item: &Value) -> Check {
    let domain = "inventory";
    let args = json!({ "dealership_id": dealer.id, "vehicle_id": item["id"] });
    match bridge.call("inventory.get", args).await {
        Answer::Ok(found) => {
            let vehicle = &found["vehicle"];
            let same = vehicle["id"] == item["id"] && vehicle["vin"] == item["vin"];
            if same {
                Check::pass(
                    domain,
                    "lookup by id",
                    "inventory.get answers the listed vehicle",
                )
            } else {
                Check::fail(
                    domain,
                    "lookup by id",
                    format!("inventory.get answered {found}"),
                )
            }
        }
        Answer::Error(e) => {
            Check::fail(domain, "lookup by id", format!("inventory.get failed: {e}"))
        }
    }
}

pub async fn repair_orders(bridge: &impl Calls, dealer: &Dealer<'_>) -> Vec<Check> {
    let domain = "repair_orders";
    let args = json!({ "dealership_id": dealer.id, "response_format": "detailed" });
    let first = match read_all(bridge, "service.list_repair_orders", &args).await {
        Ok(l) => l,
        Err(e) => {
            return vec![Check::fail(
                domain,
                "answers",
                format!("service.list_repair_orders failed: {e}"),
            )];
        }
    };
    let mut checks = vec![Check::pass(
        domain,
        "answers",
        format!("{} repair order(s) in the last 30 days", first.items.len()),
    )];
    if first.items.is_empty() {
        checks.push(Check::warn(
            domain,
            "has repair orders",
            "none in the last 30 days; nothing below was checked on data",
        ));
    }
    checks.push(paging(domain, &first, "ro_number"));
    let mut problems = Vec::new();
    for item in &first.items {
        repair_order_problems(item, dealer, &mut problems);
    }
    checks.push(Check::from_problems(
        domain,
        "required fields, statuses, money, times",
        &problems,
    ));
    let leaked: Vec<String> = first
        .items
        .iter()
        .filter(|ro| !ro["customer_name"].is_null() || !ro["customer"].is_null())
        .map(|ro| format!("{} carries the customer's name", ro["ro_number"]))
        .collect();
    checks.push(Check::from_problems(
        domain,
        "customer shown as initials only",
        &leaked,
    ));
    match read_all(bridge, "service.list_repair_orders", &args).await {
        Ok(second) => checks.push(stable_ids(
            domain,
            &first.items,
            &second.items,
            "ro_number",
            "status",
        )),
        Err(e) => checks.push(Check::fail(
            domain,
            "stable ids",
            format!("second read failed: {e}"),
        )),
    }
    if let Some(ro) = first.items.first() {
        let args = json!({ "dealership_id": dealer.id, "ro_number": ro["ro_number"] });
        checks.push(match bridge.call("service.get_repair_order", args).await {
            Answer::Ok(found) if found["repair_order"]["ro_number"] == ro["ro_number"] => {
                Check::pass(
                    domain,
                    "lookup by number",
                    "service.get_repair_order answers the listed order",
                )
            }
            Answer::Ok(found) => {
                Check::fail(domain, "lookup by number", format!("answered {found}"))
            }
            Answer::Error(e) => Check::fail(domain, "lookup by number", format!("failed: {e}")),
        });
    }
    checks
}

fn repair_order_problems(ro: &Value, dealer: &Dealer<'_>, problems: &mut Vec<String>) {
    let number = ro["ro_number"].as_str().unwrap_or("?").to_owned();
    let mut say = |what: String| problems.push(format!("{number}: {what}"));
    if ro["ro_number"].as_str().is_none_or(str::is_empty) {
        say("ro_number is missing".into());
    }
    if !matches!(
        ro["status"].as_str(),
        Some("open" | "in_progress" | "closed")
    ) {
        say(format!(
            "status {} is not open, in_progress or closed",
            ro["status"]
        ));
    }
    for field in ["opened_at", "promised_at", "closed_at"] {
        if let Some(at) = ro[field].as_str()
            && let Some(problem) = zone_problem(at, dealer.timezone)
        {
            say(format!("{field}: {problem}"));
        }
    }
    for total in ro["totals"].as_array().into_iter().flatten() {
        for part in ["total", "labor", "parts", "tax"] {
            if let Some(problem) = money_problem(&total[part], dealer.currency) {
                say(format!("totals.{part}: {problem}"));
            }
        }
    }
}

/// One valuation: values in minor units, ordered low ≤ average ≤ high, and
/// a validity that ends in the future, in the dealership's zone.
pub async fn trade_value(bridge: &impl Calls, dealer: &Dealer<'_>, args: Value) -> Check {
    let domain = "deals";
    let name = "trade value of the given VIN";
    let answer = match bridge.call("deals.request_trade_value", args).await {
        Answer::Ok(a) => a,
        Answer::Error(e) => return Check::fail(domain, name, format!("failed: {e}")),
    };
    let mut problems = Vec::new();
    for part in ["low", "average", "high"] {
        if answer["trade_in"][part].is_null() {
            problems.push(format!("trade_in.{part} is missing"));
        }
        if let Some(problem) = money_problem(&answer["trade_in"][part], dealer.currency) {
            problems.push(format!("trade_in.{part}: {problem}"));
        }
    }
    let amount = |part: &str| answer["trade_in"][part]["amount"].as_i64();
    if let (Some(low), Some(average), Some(high)) =
        (amount("low"), amount("average"), amount("high"))
        && !(low <= average && average <= high)
    {
        problems.push(format!(
            "low {low}, average {average}, high {high} are out of order"
        ));
    }
    match answer["valid_until"].as_str() {
        Some(until) => {
            if let Some(problem) = zone_problem(until, dealer.timezone) {
                problems.push(format!("valid_until: {problem}"));
            }
            if DateTime::parse_from_rfc3339(until).is_ok_and(|t| t < chrono::Utc::now()) {
                problems.push(format!("valid_until {until} has passed"));
            }
        }
        None => problems.push("valid_until is missing".into()),
    }
    Check::from_problems(domain, name, &problems)
}

/// The scheduler's open slots for the first code on its service menu, over
/// the next week: times in the dealership's zone, each ending after it
/// starts, inside the days asked for, ahead, earliest first. Returns the
/// arguments it used, for the fault cells; checking holds nothing.
pub async fn service_availability(
    bridge: &impl Calls,
    dealer: &Dealer<'_>,
) -> (Vec<Check>, Option<Value>) {
    let domain = "service";
    // An unknown code is refused with the menu in the details (TOOLSET.md).
    let today = chrono::Utc::now()
        .with_timezone(&dealer.timezone)
        .date_naive();
    let (from, to) = (today + chrono::Days::new(1), today + chrono::Days::new(7));
    let mut args = json!({ "dealership_id": dealer.id, "service_codes": ["VERIFY-PROBE"],
                           "year": 2022, "make": "Toyota", "model": "RAV4",
                           "from": from.to_string(), "to": to.to_string() });
    let menu = match bridge
        .call("service.check_availability", args.clone())
        .await
    {
        Answer::Error(e) => e["error"]["details"]["service_menu"].clone(),
        Answer::Ok(_) => Value::Null,
    };
    let code = menu
        .as_array()
        .and_then(|m| m.first())
        .and_then(|item| item["code"].as_str().or_else(|| item.as_str()))
        .map(str::to_owned);
    let Some(code) = code else {
        let check = Check::fail(
            domain,
            "service menu",
            format!("an unknown code was not refused with the menu: {menu}"),
        );
        return (vec![check], None);
    };
    let mut checks = vec![Check::pass(
        domain,
        "service menu",
        format!("first code {code}"),
    )];
    args["service_codes"] = json!([code]);
    let slots = match bridge
        .call("service.check_availability", args.clone())
        .await
    {
        Answer::Ok(answer) => answer["items"].as_array().cloned().unwrap_or_default(),
        Answer::Error(e) => {
            checks.push(Check::fail(domain, "availability answers", e.to_string()));
            return (checks, Some(args));
        }
    };
    checks.push(Check::pass(
        domain,
        "availability answers",
        format!("{} slot(s) from {from} to {to}", slots.len()),
    ));
    let mut problems = Vec::new();
    let mut previous = None;
    for slot in &slots {
        let (Some(start), Some(end)) = (slot["start"].as_str(), slot["end"].as_str()) else {
            problems.push(format!("a slot without start or end: {slot}"));
            continue;
        };
        problems.extend(zone_problem(start, dealer.timezone).map(|p| format!("start: {p}")));
        problems.extend(zone_problem(end, dealer.timezone).map(|p| format!("end: {p}")));
        let (Ok(s), Ok(e)) = (
            DateTime::parse_from_rfc3339(start),
            DateTime::parse_from_rfc3339(end),
        ) else {
            continue;
        };
        if e <= s {
            problems.push(format!("{start} ends at {end}"));
        }
        let day = s.with_timezone(&dealer.timezone).date_naive();
        if day < from || day > to || s < chrono::Utc::now() {
            problems.push(format!("{start} is outside {from}..{to} or past"));
        }
        if previous.is_some_and(|p| s < p) {
            problems.push(format!("{start} comes after a later slot"));
        }
        previous = Some(s);
    }
    checks.push(Check::from_problems(
        domain,
        "slots in the zone, ahead, in order",
        &problems,
    ));
    (checks, Some(args))
}
