//! inventory.search / get / facets semantics, checked against an oracle computed
//! in the test from the unfiltered listing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use common::*;
use serde_json::{Value, json};

async fn everything(client: &Client, dealership: &str) -> Vec<Value> {
    let page = every_page(client, json!({ "dealership_id": dealership })).await;
    page["items"].as_array().unwrap().clone()
}

/// Every match of a search, in full records, across its pages.
async fn search(client: &Client, args: Value) -> Vec<Value> {
    every_page(client, args).await["items"]
        .as_array()
        .unwrap()
        .clone()
}

fn ids(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The listing without `last_verified_at`, which moves with every upstream read.
fn stable(v: &Value) -> Value {
    let mut v = v.clone();
    v.as_object_mut().unwrap().remove("last_verified_at");
    v
}

fn price(v: &Value) -> Option<i64> {
    v["price"]["amount"].as_i64()
}

fn miles(v: &Value) -> Option<u64> {
    let value = v["mileage"]["value"].as_u64()?;
    Some(if v["mileage"]["unit"] == "km" {
        (value * 621_371 + 500_000) / 1_000_000
    } else {
        value
    })
}

#[tokio::test]
async fn filters_match_an_independent_oracle() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let all = everything(&client, "demo-cdk").await;
    let expect = |pred: &dyn Fn(&Value) -> bool| {
        ids(&all.iter().filter(|v| pred(v)).cloned().collect::<Vec<_>>())
    };

    let used = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": { "condition": ["used", "cpo"] } }),
    )
    .await;
    assert_eq!(ids(&used), expect(&|v| v["condition"] != "new"));

    let toyota = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": { "make": ["tOyOtA", "Ford"] } }),
    )
    .await;
    assert_eq!(
        ids(&toyota),
        expect(&|v| v["make"] == "Toyota" || v["make"] == "Ford")
    );
    assert!(!toyota.is_empty());

    let years = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": { "year_min": 2020, "year_max": 2023 } }),
    )
    .await;
    assert_eq!(
        ids(&years),
        expect(&|v| v["year"]
            .as_i64()
            .is_some_and(|y| (2020..=2023).contains(&y)))
    );

    let (lo, hi) = (2_000_000, 3_500_000);
    let priced = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": {
            "price_min": { "amount": lo, "currency": "USD" }, "price_max": { "amount": hi, "currency": "USD" } } }),
    )
    .await;
    assert_eq!(
        ids(&priced),
        expect(&|v| price(v).is_some_and(|p| (lo..=hi).contains(&p)))
    );

    let low_miles = search(&client, json!({ "dealership_id": "demo-cdk", "filters": { "mileage_max": { "value": 30000, "unit": "km" } } })).await;
    assert_eq!(
        ids(&low_miles),
        expect(&|v| miles(v).is_some_and(|m| m <= 18_641))
    );

    let in_transit = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": { "status": ["in_transit"] } }),
    )
    .await;
    assert_eq!(ids(&in_transit), expect(&|v| v["status"] == "in_transit"));
    assert!(!in_transit.is_empty(), "the demo has units in transit");

    let sample = &all[7];
    let words = format!(
        "{} {}",
        sample["make"].as_str().unwrap().to_lowercase(),
        sample["year"]
    );
    let text = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "filters": { "query": words } }),
    )
    .await;
    assert!(ids(&text).contains(sample["id"].as_str().unwrap()));
    assert!(
        text.iter()
            .all(|v| v["make"] == sample["make"] && v["year"] == sample["year"])
    );
}

#[tokio::test]
async fn price_filters_and_sort_use_the_final_price_only() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let all = everything(&client, "demo-cdk").await;
    // A unit whose advertised price differs from its final price.
    let unit = all
        .iter()
        .find(|v| {
            price(v).is_some()
                && v["list_price"]["amount"]
                    .as_i64()
                    .is_some_and(|l| Some(l) != price(v))
        })
        .unwrap();
    let (p, l) = (
        price(unit).unwrap(),
        unit["list_price"]["amount"].as_i64().unwrap(),
    );
    let between = (p.min(l) + p.max(l)) / 2;
    let bound = if p < l { "price_max" } else { "price_min" };
    let hits = search(&client, json!({ "dealership_id": "demo-cdk", "filters": { bound: { "amount": between, "currency": "USD" } } })).await;
    assert!(
        ids(&hits).contains(unit["id"].as_str().unwrap()),
        "filter must use price {p}, not list_price {l}"
    );

    // The feed dealership has call-for-price units (no final price).
    let sorted = search(
        &client,
        json!({ "dealership_id": "demo-feed", "sort": { "field": "price", "order": "desc" } }),
    )
    .await;
    let prices: Vec<Option<i64>> = sorted.iter().map(price).collect();
    let with: Vec<i64> = prices.iter().flatten().copied().collect();
    assert!(with.windows(2).all(|w| w[0] >= w[1]), "descending by price");
    let first_missing = prices
        .iter()
        .position(Option::is_none)
        .unwrap_or(prices.len());
    assert!(
        prices[first_missing..].iter().all(Option::is_none),
        "call-for-price units sort last"
    );
    assert!(
        first_missing < prices.len(),
        "the demo has call-for-price units"
    );
    assert!(sorted.iter().all(|v| v.get("offered_price").is_none()));
}

#[tokio::test]
async fn sorts_are_total_and_stable() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    for (field, key) in [
        ("mileage", "mileage"),
        ("year", "year"),
        ("days_in_stock", "days_in_stock"),
    ] {
        let asc = search(
            &client,
            json!({ "dealership_id": "demo-feed", "sort": { "field": field } }),
        )
        .await;
        let values: Vec<i64> = asc
            .iter()
            .filter_map(|v| v[key].as_i64().or_else(|| v[key]["value"].as_i64()))
            .collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{field} ascending");
        let again = search(
            &client,
            json!({ "dealership_id": "demo-feed", "sort": { "field": field } }),
        )
        .await;
        assert_eq!(asc, again, "same order every time");
    }
    let by_make = search(
        &client,
        json!({ "dealership_id": "demo-cdk", "sort": { "field": "make" } }),
    )
    .await;
    let makes: Vec<String> = by_make
        .iter()
        .map(|v| v["make"].as_str().unwrap().to_lowercase())
        .collect();
    assert!(makes.windows(2).all(|w| w[0] <= w[1]));
}

#[tokio::test]
async fn cursor_pages_cover_every_match_exactly_once() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let args = json!({ "dealership_id": "demo-feed", "limit": 7, "filters": { "condition": ["used", "cpo", "new"] }, "sort": { "field": "price" } });
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut total = None;
    for _ in 0..50 {
        let mut a = args.clone();
        if let Some(c) = &cursor {
            a["cursor"] = json!(c);
        }
        let page = ok(&call(&client, "inventory.search", a).await);
        assert_eq!(page["limit"], 7);
        total = Some(page["total"].as_u64().unwrap());
        seen.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["id"].as_str().unwrap().to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let unique: BTreeSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no vehicle twice");
    assert_eq!(seen.len() as u64, total.unwrap());
    assert_eq!(
        ids(&everything(&client, "demo-feed").await).len(),
        seen.len()
    );
}

#[tokio::test]
async fn get_by_id_vin_or_stock_returns_the_same_vehicle() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let all = everything(&client, "demo-cdk").await;
    let unit = all
        .iter()
        .find(|v| v["vin"].is_string() && v["stock"].is_string())
        .unwrap();
    let d = "demo-cdk";
    for args in [
        json!({ "dealership_id": d, "vehicle_id": unit["id"] }),
        json!({ "dealership_id": d, "vin": unit["vin"].as_str().unwrap().to_lowercase() }),
        json!({ "dealership_id": d, "stock": unit["stock"] }),
        json!({ "dealership_id": d, "vehicle_id": unit["id"], "stock": "does-not-matter", "zip": "78704" }),
    ] {
        let got = ok(&call(&client, "inventory.get", args.clone()).await);
        assert_eq!(stable(&got["vehicle"]), stable(unit), "{args}");
        assert!(got["vehicle"].get("offered_price").is_none());
    }
    let missing = err(&call(
        &client,
        "inventory.get",
        json!({ "dealership_id": d, "vehicle_id": "veh_0000000000000000" }),
    )
    .await);
    assert_eq!(missing["code"], "inventory.vehicle_not_found");
    assert_eq!(missing["details"]["aap_code"], "VEHICLE_NOT_FOUND");
}

#[tokio::test]
async fn facets_agree_with_search() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let filters = json!({ "condition": ["used", "cpo"] });
    let hits = search(
        &client,
        json!({ "dealership_id": "demo-feed", "filters": filters }),
    )
    .await;
    let facets = ok(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "demo-feed", "filters": filters }),
    )
    .await);
    assert_eq!(facets["total"].as_u64().unwrap() as usize, hits.len());
    let sum = |name: &str| {
        facets[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["count"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("conditions") as usize, hits.len());
    assert_eq!(sum("statuses") as usize, hits.len());
    let toyota = facets["makes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["value"] == "Toyota")
        .unwrap()["count"]
        .as_u64()
        .unwrap();
    assert_eq!(
        toyota as usize,
        hits.iter().filter(|v| v["make"] == "Toyota").count()
    );
    let prices: Vec<i64> = hits.iter().filter_map(price).collect();
    assert_eq!(
        facets["price_range"]["min"]["amount"].as_i64().unwrap(),
        *prices.iter().min().unwrap()
    );
    assert_eq!(
        facets["price_range"]["max"]["amount"].as_i64().unwrap(),
        *prices.iter().max().unwrap()
    );
    let counts: Vec<u64> = facets["makes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["count"].as_u64().unwrap())
        .collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "most frequent first"
    );
}

#[tokio::test]
async fn dealership_profile_comes_from_configuration() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let profile = ok(&call(
        &client,
        "dealership.get",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await);
    assert_eq!(profile["timezone"], "America/Chicago");
    assert_eq!(profile["currency"], "USD");
    assert_eq!(
        profile["domains"],
        json!(["inventory", "leads", "service", "repair_orders", "deals"])
    );
    assert_eq!(profile["phones"][0]["number"], "+15125550140");
    assert_eq!(profile["hours"][0]["weekly"]["monday"], "09:00-20:00");
}

#[tokio::test]
async fn resources_mirror_the_reads() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(
        listed.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        ["dms://dealerships/demo-cdk"]
    );
    let unit = everything(&client, "demo-cdk").await.remove(0);
    let uri = format!(
        "dms://dealerships/demo-cdk/vehicles/{}",
        unit["id"].as_str().unwrap()
    );
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text")
    };
    let body: Value = serde_json::from_str(text).unwrap();
    assert_eq!(stable(&body["vehicle"]), stable(&unit));
    let forbidden = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "dms://dealerships/demo-feed",
        ))
        .await;
    assert!(forbidden.is_err());
}

/// The text block a model reads, and what the bridge estimates it costs.
fn estimated_tokens(result: &rmcp::model::CallToolResult) -> usize {
    let text = &result.content[0].as_text().expect("a text block").text;
    dms_bridge::contract::tokens::estimate(text)
}

#[tokio::test]
async fn pages_stop_at_the_token_budget_and_their_cursors_go_on_from_there() {
    let bridge =
        demo_edited(|toml| toml.replacen("[limits]\n", "[limits]\nmax_result_tokens = 3000\n", 1))
            .await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let total = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 1 }),
    )
    .await)["total"]
        .as_u64()
        .unwrap();

    for format in ["detailed", "concise"] {
        let (mut seen, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
        loop {
            let mut args =
                json!({ "dealership_id": "demo-cdk", "limit": 100, "response_format": format });
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            let result = call(&client, "inventory.search", args).await;
            assert!(
                estimated_tokens(&result) <= 3000,
                "{format} page {pages} is over the budget"
            );
            let page = ok(&result);
            pages += 1;
            seen.extend(
                ids(page["items"].as_array().unwrap())
                    .into_iter()
                    .map(|id| (pages, id)),
            );
            assert_eq!(
                page["has_more"],
                page.get("next_cursor").is_some(),
                "{page}"
            );
            match page.get("next_cursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
            assert!(pages < 100, "paging does not end");
        }
        let distinct: BTreeSet<&String> = seen.iter().map(|(_, id)| id).collect();
        assert_eq!(
            seen.len() as u64,
            total,
            "{format}: every vehicle once across {pages} pages"
        );
        assert_eq!(distinct.len() as u64, total, "{format}: no vehicle twice");
        assert!(
            pages > 1,
            "{format}: {total} vehicles fit in one page of 3,000 tokens"
        );
    }

    // A single answer over the budget is refused, with the budget in the details.
    let facets = call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await;
    let error = err(&facets);
    assert_eq!(error["code"], "request.result_too_large", "{error}");
    assert_eq!(error["details"]["max_tokens"], 3000, "{error}");
    assert!(
        error["details"]["estimated_tokens"].as_u64().unwrap() > 3000,
        "{error}"
    );
}

#[tokio::test]
async fn concise_records_are_the_detailed_ones_cut_down_to_the_fields_to_choose_by() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let page = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 100 }),
    )
    .await);
    assert!(
        page.get("next_cursor").is_none(),
        "the whole demo inventory fits one concise page"
    );
    let concise = page["items"].as_array().unwrap().clone();
    let detailed = everything(&client, "demo-cdk").await;
    assert_eq!(ids(&concise), ids(&detailed));
    let fields = [
        "id",
        "stock",
        "status",
        "condition",
        "year",
        "make",
        "model",
        "trim",
        "exterior_color",
        "mileage",
        "price",
        "offered_price",
    ];
    for (short, full) in concise.iter().zip(&detailed) {
        assert_eq!(short["id"], full["id"], "the same order");
        for (key, value) in short.as_object().unwrap() {
            assert!(
                fields.contains(&key.as_str()),
                "{key} is not a concise field"
            );
            assert_eq!(&full[key], value, "{key} as in the full record");
        }
        for key in fields {
            assert_eq!(
                short.get(key),
                full.get(key),
                "{key} kept when the record has it"
            );
        }
    }
}
