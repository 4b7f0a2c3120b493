//! The integration tests, one module per file of `tests/`, linked into one
//! binary. Each file used to be its own test binary: 69 binaries of ~150 MB
//! each filled the disk of a CI machine (the linker died of SIGBUS) and spent
//! minutes linking the same library again and again. Three files keep a binary
//! of their own (see `Cargo.toml`): two install a process-wide log subscriber
//! and read every line of the process, one needs the `demo` feature.
//!
//! Run one file with `cargo test --test integration NAME::`.

mod common;

#[path = "aap_door.rs"]
mod aap_door;
#[path = "adf_format.rs"]
mod adf_format;
#[path = "auth_scoping.rs"]
mod auth_scoping;
#[path = "booking_crash.rs"]
mod booking_crash;
#[path = "cdk_rest_adapter.rs"]
mod cdk_rest_adapter;
#[path = "chaos.rs"]
mod chaos;
#[path = "config_check.rs"]
mod config_check;
#[path = "data_lifecycle.rs"]
mod data_lifecycle;
#[path = "deals_jdpower.rs"]
mod deals_jdpower;
#[path = "deals_trade_value.rs"]
mod deals_trade_value;
#[path = "demo_inventory.rs"]
mod demo_inventory;
#[path = "docs.rs"]
mod docs;
#[path = "events.rs"]
mod events;
#[path = "feed_adapter.rs"]
mod feed_adapter;
#[path = "feed_xml.rs"]
mod feed_xml;
#[path = "fixtures_mapping.rs"]
mod fixtures_mapping;
#[path = "gateway_cache.rs"]
mod gateway_cache;
#[path = "gateway_operations.rs"]
mod gateway_operations;
#[path = "gateway_rate_limits.rs"]
mod gateway_rate_limits;
#[path = "gateway_resilience.rs"]
mod gateway_resilience;
#[path = "http_answers.rs"]
mod http_answers;
#[path = "http_connection_cap.rs"]
mod http_connection_cap;
#[path = "http_protocol.rs"]
mod http_protocol;
#[path = "http_timeouts.rs"]
mod http_timeouts;
#[path = "inbound_events.rs"]
mod inbound_events;
#[path = "invalid_arguments.rs"]
mod invalid_arguments;
#[path = "inventory_mirror.rs"]
mod inventory_mirror;
#[path = "inventory_reads.rs"]
mod inventory_reads;
#[path = "inventory_search.rs"]
mod inventory_search;
#[path = "kit_conform.rs"]
mod kit_conform;
#[path = "kit_mapping_test.rs"]
mod kit_mapping_test;
#[path = "kit_probe.rs"]
mod kit_probe;
#[path = "kit_record_replay.rs"]
mod kit_record_replay;
#[path = "kit_tutorial.rs"]
mod kit_tutorial;
#[path = "kit_verify.rs"]
mod kit_verify;
#[path = "layers.rs"]
mod layers;
#[path = "lead_records.rs"]
mod lead_records;
#[path = "leads_consent.rs"]
mod leads_consent;
#[path = "leads_contact_points.rs"]
mod leads_contact_points;
#[path = "leads_create.rs"]
mod leads_create;
#[path = "leads_crm_api.rs"]
mod leads_crm_api;
#[path = "leads_delivery.rs"]
mod leads_delivery;
#[path = "leads_idempotency.rs"]
mod leads_idempotency;
#[path = "leads_kill.rs"]
mod leads_kill;
#[path = "leads_text.rs"]
mod leads_text;
#[path = "leads_vehicle_availability.rs"]
mod leads_vehicle_availability;
#[path = "mcp_endpoint.rs"]
mod mcp_endpoint;
#[path = "oauth_sign_in.rs"]
mod oauth_sign_in;
#[path = "operator_telemetry.rs"]
mod operator_telemetry;
#[path = "otel_export.rs"]
mod otel_export;
#[path = "ownership.rs"]
mod ownership;
#[path = "postgres_store.rs"]
mod postgres_store;
#[path = "prompts_completions_logging.rs"]
mod prompts_completions_logging;
#[path = "recovery_calls.rs"]
mod recovery_calls;
#[path = "reload.rs"]
mod reload;
#[path = "repair_order_events.rs"]
mod repair_order_events;
#[path = "repair_order_mappings.rs"]
mod repair_order_mappings;
#[path = "repair_orders_cdk.rs"]
mod repair_orders_cdk;
#[path = "repair_orders_tekion.rs"]
mod repair_orders_tekion;
#[path = "replicas.rs"]
mod replicas;
#[path = "service_availability.rs"]
mod service_availability;
#[path = "shared_quotas.rs"]
mod shared_quotas;
#[path = "soap_inventory.rs"]
mod soap_inventory;
#[path = "soap_repair_orders.rs"]
mod soap_repair_orders;
#[path = "status_page.rs"]
mod status_page;
#[path = "store_sharing.rs"]
mod store_sharing;
#[path = "subscriptions.rs"]
mod subscriptions;
#[path = "tasks.rs"]
mod tasks;
#[path = "tools_list_contract.rs"]
mod tools_list_contract;
#[path = "upstream_faults.rs"]
mod upstream_faults;
#[path = "vocabulary_facets.rs"]
mod vocabulary_facets;
#[path = "webhooks.rs"]
mod webhooks;
