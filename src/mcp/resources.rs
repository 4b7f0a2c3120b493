//! MCP resources mirror the reads (AutomotiveMCP: resources are side-effect-free
//! reads): `dms://dealerships/{dealership_id}`,
//! `dms://dealerships/{dealership_id}/vehicles/{vehicle_id}`,
//! `dms://dealerships/{dealership_id}/leads/{lead_id}` and
//! `dms://dealerships/{dealership_id}/repair-orders/{ro_number}`. Reads go through
//! the same dispatch pipeline as the tools they mirror, so scoping, validation
//! and error mapping are the same.

use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use crate::gateway::auth::Principal;
use crate::gateway::error::ErrorCode;
use crate::gateway::{Caller, Gateway};

const SCHEME: &str = "dms://dealerships/";
const JSON: &str = "application/json";

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SCHEME}{{dealership_id}}"), "dealership")
            .with_title("Dealership profile")
            .with_description("A dealership's public profile, as dealership.get answers it.")
            .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/vehicles/{{vehicle_id}}"),
            "vehicle",
        )
        .with_title("Vehicle")
        .with_description(
            "One vehicle for sale, as inventory.get answers it (vehicle_id from inventory.search).",
        )
        .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/leads/{{lead_id}}"),
            "lead",
        )
        .with_title("Lead")
        .with_description(
            "A lead taken through the bridge and its delivery state, as leads.get answers it.",
        )
        .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/repair-orders/{{ro_number}}"),
            "repair_order",
        )
        .with_title("Repair order")
        .with_description(
            "One repair order from the dealership's DMS, as service.get_repair_order answers it.",
        )
        .with_mime_type(JSON),
    ]
}

/// The dealerships the caller may read, one resource each.
pub fn list(gateway: &Gateway, principal: &Principal) -> Vec<Resource> {
    gateway
        .dealerships()
        .filter(|d| principal.may_use(&d.profile.id))
        .map(|d| {
            Resource::new(format!("{SCHEME}{}", d.profile.id), d.profile.id.clone())
                .with_title(d.profile.name.clone())
                .with_mime_type(JSON)
        })
        .collect()
}

/// Reads a resource by URI through the tool it mirrors.
pub async fn read(
    gateway: &Gateway,
    caller: &Caller,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let (tool, args) = parse(uri)
        .ok_or_else(|| McpError::resource_not_found(format!("No resource at {uri}"), None))?;
    let Value::Object(args) = args else {
        return Err(McpError::internal_error("resource arguments", None));
    };
    let outcome = gateway
        .call_tool(caller, tool, Some(args))
        .await
        .map_err(|_| McpError::internal_error("resource tool missing", None))?;
    match outcome.result {
        Ok(payload) => Ok(ReadResourceResult::new(vec![
            ResourceContents::text(payload.text(), uri).with_mime_type(JSON),
        ])),
        Err(error) => {
            let data = Some(error.to_json());
            Err(match error.code {
                ErrorCode::InventoryVehicleNotFound
                | ErrorCode::LeadsLeadNotFound
                | ErrorCode::ServiceRepairOrderNotFound
                | ErrorCode::AuthForbidden
                | ErrorCode::AuthUnauthorized => {
                    McpError::resource_not_found(error.message.clone(), data)
                }
                ErrorCode::RequestInvalidArguments => {
                    McpError::invalid_params(error.message.clone(), data)
                }
                _ => McpError::internal_error(error.message.clone(), data),
            })
        }
    }
}

fn parse(uri: &str) -> Option<(&'static str, Value)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [dealership] if !dealership.is_empty() => {
            Some(("dealership.get", json!({ "dealership_id": dealership })))
        }
        [dealership, "vehicles", vehicle] if !dealership.is_empty() && !vehicle.is_empty() => {
            Some((
                "inventory.get",
                json!({ "dealership_id": dealership, "vehicle_id": vehicle }),
            ))
        }
        [dealership, "leads", lead] if !dealership.is_empty() && !lead.is_empty() => Some((
            "leads.get",
            json!({ "dealership_id": dealership, "lead_id": lead }),
        )),
        [dealership, "repair-orders", number] if !dealership.is_empty() && !number.is_empty() => {
            Some((
                "service.get_repair_order",
                json!({ "dealership_id": dealership, "ro_number": number }),
            ))
        }
        _ => None,
    }
}
