//! Leads stored before lead records had a schema version stay readable: a row
//! written by the bridge at migration 0004 (the tool's arguments as stored
//! then, an idempotency key and answer on the submission) is migrated on
//! start and answers `leads.get` like any other lead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::leads::leads_config;
use common::{call, connect, ok, with_config};

const OLD_LEAD: &str = "ld_0192f0c4d6a87c3e9b1f2a3b4c5d6e7f";

/// A store at migration 0004 holding one lead in the old form.
async fn store_before_versioning(db: &std::path::Path) {
    let url = format!("sqlite://{}?mode=rwc", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    dms_bridge::store::migrations::migrator(dms_bridge::store::StoreDialect::Sqlite)
        .run_to(4, &pool)
        .await
        .unwrap();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/store-fixtures/lead-schema-1.sql"
    ))
    .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(fixture))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

#[tokio::test]
async fn a_lead_stored_in_the_old_form_reads_after_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    store_before_versioning(&db).await;
    let intake = "http://127.0.0.1:9/adf";
    let bridge = with_config(&leads_config(
        intake,
        &format!("[store]\nurl = \"sqlite://{}\"\n", db.display()),
    ))
    .await;
    let client = connect(&bridge.url, Some("agent-token")).await;

    let view = ok(&call(
        &client,
        "leads.get",
        serde_json::json!({ "dealership_id": "acme", "lead_id": OLD_LEAD }),
    )
    .await);

    assert_eq!(view["lead_id"], OLD_LEAD);
    assert_eq!(view["source_agent"], "test-agent");
    assert_eq!(view["customer"]["name"], "D. W.");
    assert_eq!(view["customer"]["preferred_contact"], "email");
    assert_eq!(view["vehicle_of_interest"]["vin"], "1HGCV1F34LA000123");
    assert_eq!(view["vehicle_of_interest"]["condition"], "used");
    assert_eq!(view["trade_in"]["make"], "Ford");
    assert_eq!(view["trade_in"]["condition"], "fair");
    assert_eq!(view["appointment"]["appointment_type"], "test_drive");
    assert_eq!(view["appointment"]["status"], "requested");
    assert_eq!(
        view["consent"]["allowed_channels"],
        serde_json::json!(["email", "sms"])
    );
    assert_eq!(view["delivery"]["state"], "delivered");
    assert_eq!(view["delivery"]["receipt"], "crm-receipt-1");
    assert_eq!(view["submissions"], 1);

    // Listed as well: the migrated submission row still names its owner.
    let listed = ok(&call(
        &client,
        "leads.list",
        serde_json::json!({ "dealership_id": "acme" }),
    )
    .await);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
}
