//! A CDK-shaped inventory on wiremock that a test changes between reads.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::{Request, Respond, ResponseTemplate};

/// A CDK-shaped inventory the test can change between reads, served in pages
/// of at most `cap` records.
#[derive(Clone)]
pub struct Inventory {
    results: Arc<Mutex<Vec<Value>>>,
    cap: usize,
    failing: Arc<AtomicBool>,
}

impl Respond for Inventory {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if self.failing.load(Ordering::SeqCst) {
            return ResponseTemplate::new(503);
        }
        let number = |name: &str| {
            request
                .url
                .query_pairs()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse::<usize>().ok())
                .unwrap_or(0)
        };
        let all = self.results.lock().unwrap();
        // MVS2's changes-since read: `modifiedTimeRange=<start>:<end>`, on the
        // `modifiedTime` the test stamps on the records it changes.
        let window = request
            .url
            .query_pairs()
            .find(|(k, _)| k == "modifiedTimeRange")
            .map(|(_, v)| v.into_owned());
        let results: Vec<Value> = match &window {
            Some(range) => {
                let (from, to) = range.split_once("Z:").unwrap();
                let (from, to) = (format!("{from}Z"), to.to_owned());
                all.iter()
                    .filter(|r| {
                        r["modifiedTime"]
                            .as_str()
                            .is_some_and(|t| t >= from.as_str() && t <= to.as_str())
                    })
                    .cloned()
                    .collect()
            }
            None => all.clone(),
        };
        let start = number("offset").min(results.len());
        let end = (start + number("limit").min(self.cap)).min(results.len());
        let page = &results[start..end];
        let body = json!({
            "summary": { "count": page.len(), "totalCount": results.len(), "limit": number("limit"), "offset": start },
            "results": page,
        });
        // Each page has an ETag; a request naming the current one gets 304.
        let etag = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            body.to_string().hash(&mut hasher);
            format!("\"{:016x}\"", hasher.finish())
        };
        let asked = request
            .headers
            .get("if-none-match")
            .and_then(|v| v.to_str().ok());
        if asked == Some(etag.as_str()) {
            return ResponseTemplate::new(304).insert_header("etag", etag);
        }
        ResponseTemplate::new(200)
            .insert_header("etag", etag)
            .set_body_json(body)
    }
}

impl Inventory {
    pub fn new(results: Vec<Value>, cap: usize) -> Self {
        Self {
            results: Arc::new(Mutex::new(results)),
            cap,
            failing: Arc::default(),
        }
    }

    /// From now on, answers 503 (true) or the inventory (false).
    pub fn fail(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// The records as the upstream serves them now.
    pub fn records(&self) -> Vec<Value> {
        self.results.lock().unwrap().clone()
    }

    /// Serves `records` from now on.
    pub fn replace(&self, records: Vec<Value>) {
        *self.results.lock().unwrap() = records;
    }

    /// Flags the record at `index` deleted, as MVS2 reports a sold unit (a
    /// changes-since read sees it); returns its VIN.
    pub fn mark_deleted(&self, index: usize) -> String {
        let mut results = self.results.lock().unwrap();
        let record = &mut results[index];
        record["deleted"] = json!(true);
        record["modifiedTime"] = json!(now());
        record["vin"].as_str().unwrap().to_owned()
    }

    /// Removes the record at `index` (the unit was sold); returns its VIN.
    pub fn remove(&self, index: usize) -> String {
        let record = self.results.lock().unwrap().remove(index);
        record["vin"].as_str().unwrap().to_owned()
    }

    /// Raises the selling price of the listed record at `index` by 1,000.00.
    pub fn raise_price(&self, index: usize) -> String {
        let mut results = self.results.lock().unwrap();
        let record = &mut results[index];
        let prices = record["financials"]["prices"].as_array_mut().unwrap();
        let selling = prices.iter_mut().find(|p| p["type"] == "SELLING").unwrap();
        // The vendor sends amounts as numbers or as strings.
        let amount: f64 = match &selling["amount"] {
            Value::String(text) => text.parse().unwrap(),
            number => number.as_f64().unwrap(),
        };
        selling["amount"] = json!(format!("{:.2}", amount + 1000.0));
        record["modifiedTime"] = json!(now());
        record["vin"].as_str().unwrap().to_owned()
    }

    /// Index of the first listed record with a selling price at or after `from`.
    pub fn listed_with_selling_price(&self, from: usize) -> usize {
        let results = self.results.lock().unwrap();
        (from..results.len())
            .find(|&i| {
                let r = &results[i];
                r["deleted"] != json!(true)
                    && r["vehicleStatus"]["inventoryStatus"] == "IN_STOCK"
                    && r["financials"]["prices"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|p| p["type"] == "SELLING"))
            })
            .unwrap()
    }
}

/// Index of the listed record with this VIN in the upstream's records.
pub fn index_of(inventory: &Inventory, vin: &str) -> usize {
    inventory
        .records()
        .iter()
        .position(|r| r["vin"] == vin)
        .unwrap()
}

/// A CDK-shaped upstream (token endpoint and inventory) serving the fixture
/// inventory in pages of at most `cap`, and the handle that changes it.
pub async fn upstream(cap: usize) -> (wiremock::MockServer, Inventory) {
    use wiremock::matchers::{method, path};
    let server = wiremock::MockServer::start().await;
    super::mount_token(&server).await;
    let fixture: Value =
        serde_json::from_str(&super::fixture("cdk/merchandisable-vehicles.json")).unwrap();
    let inventory = Inventory::new(fixture["results"].as_array().unwrap().clone(), cap);
    wiremock::Mock::given(method("GET"))
        .and(path(super::INVENTORY_PATH))
        .respond_with(inventory.clone())
        .mount(&server)
        .await;
    (server, inventory)
}

/// Every listed vehicle of `acme`, in full, as one page (see `every_page`).
pub async fn search_all(client: &super::Client) -> Value {
    super::every_page(client, json!({ "dealership_id": "acme" })).await
}

/// The VINs of a search page.
pub fn vins_of(page: &Value) -> std::collections::BTreeSet<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["vin"].as_str().unwrap().to_owned())
        .collect()
}

/// Now as MVS2 writes times (UTC, milliseconds).
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// (type, vin) of each event, in order.
pub fn summary(events: &Value) -> Vec<(String, String)> {
    events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["data"]["vin"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}
