//! MCP resources mirror the reads (AutomotiveMCP: resources are side-effect-free
//! reads): `dms://dealerships/{dealership_id}`,
//! `dms://dealerships/{dealership_id}/vehicles/{vehicle_id}`,
//! `dms://dealerships/{dealership_id}/leads/{lead_id}`,
//! `dms://dealerships/{dealership_id}/appointments/{appointment_id}`,
//! `dms://dealerships/{dealership_id}/repair-orders/{ro_number}` and
//! `dms://dealerships/{dealership_id}/events`. Reads go through
//! the same dispatch pipeline as the tools they mirror, so scoping, validation
//! and error mapping are the same.

use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use crate::contract::Principal;
use crate::contract::error::{ErrorCode, ToolError};
use crate::gateway::{Caller, Gateway};

pub(super) const SCHEME: &str = "dms://dealerships/";
const JSON: &str = "application/json";

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SCHEME}{{dealership_id}}"), "dealership")
            .with_title("Dealership profile")
            .with_description("A dealership's public profile, as dealership_get answers it.")
            .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/vehicles/{{vehicle_id}}"),
            "vehicle",
        )
        .with_title("Vehicle")
        .with_description(
            "One vehicle for sale, as inventory_get answers it (vehicle_id from inventory_search).",
        )
        .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/leads/{{lead_id}}"),
            "lead",
        )
        .with_title("Lead")
        .with_description(
            "A lead taken through the bridge and its delivery state, as leads_get answers it.",
        )
        .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/appointments/{{appointment_id}}"),
            "appointment",
        )
        .with_title("Service appointment")
        .with_description(
            "A service appointment booked through the bridge, as service_get_appointment answers it.",
        )
        .with_mime_type(JSON),
        ResourceTemplate::new(format!("{SCHEME}{{dealership_id}}/events"), "events")
            .with_title("Change events")
            .with_description(
                "The dealership's change events, oldest kept first, as events_list answers them. Subscribe to it to be told when new events arrive; resume with events_list and its cursor.",
            )
            .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SCHEME}{{dealership_id}}/repair-orders/{{ro_number}}"),
            "repair_order",
        )
        .with_title("Repair order")
        .with_description(
            "One repair order from the dealership's DMS, as service_get_repair_order answers it.",
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
    let (tool, args) = parse(uri).ok_or_else(|| {
        // SEP-2164: the error names the URI that was not found.
        McpError::resource_not_found(format!("No resource at {uri}"), Some(json!({ "uri": uri })))
    })?;
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
        Err(error) => Err(read_error(&error)),
    }
}

/// JSON-RPC `error.code` for a rate-limited read (AAP `RATE_LIMITED`).
pub const RATE_LIMITED: i32 = -32002;
/// JSON-RPC's implementation-defined server error, for a read that failed in
/// the dealer's system or in the bridge's own rules.
pub const SERVER_ERROR: i32 = -32000;

/// The JSON-RPC error for a failed read, with the tool's structured error in
/// `data.error` as a tool result would carry it.
///
/// The error data does not echo the URI (SEP-2164 says it SHOULD): a URI is
/// caller input that can carry customer data, and rmcp logs error data.
fn read_error(error: &ToolError) -> McpError {
    let mut data = error.to_json();
    let message = error.message.clone();
    match error.code {
        ErrorCode::InventoryVehicleNotFound
        | ErrorCode::LeadsLeadNotFound
        | ErrorCode::ServiceAppointmentNotFound
        | ErrorCode::ServiceRepairOrderNotFound
        | ErrorCode::AuthForbidden
        | ErrorCode::AuthUnauthorized => McpError::resource_not_found(message, Some(data)),
        ErrorCode::RequestInvalidArguments => McpError::invalid_params(message, Some(data)),
        ErrorCode::RateLimited | ErrorCode::UpstreamRateLimited => {
            // Where a client looks for it first: beside the structured error.
            if let Some(wait) = error.details.as_ref().and_then(|d| d.get("retry_after_ms")) {
                data["retry_after_ms"] = wait.clone();
            }
            data["aap_code"] = json!("RATE_LIMITED");
            McpError::new(rmcp::model::ErrorCode(RATE_LIMITED), message, Some(data))
        }
        ErrorCode::Internal => McpError::internal_error(message, Some(data)),
        _ => McpError::new(rmcp::model::ErrorCode(SERVER_ERROR), message, Some(data)),
    }
}

/// The tool one of [`templates`]'s resources is read through, by the
/// template's URI (`None` for a URI that is not one of them).
pub fn template_tool(uri_template: &str) -> Option<&'static str> {
    templates()
        .iter()
        .find(|t| t.uri_template == uri_template)?;
    // Every variable as a sample value: the path's shape names the tool.
    let sample: String = uri_template
        .split('{')
        .enumerate()
        .map(|(i, part)| match (i, part.split_once('}')) {
            (0, _) | (_, None) => part.to_owned(),
            (_, Some((_, after))) => format!("x{after}"),
        })
        .collect();
    parse(&sample).map(|(tool, _)| tool)
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
        [dealership, "events"] if !dealership.is_empty() => {
            Some(("events.list", json!({ "dealership_id": dealership })))
        }
        [dealership, "leads", lead] if !dealership.is_empty() && !lead.is_empty() => Some((
            "leads.get",
            json!({ "dealership_id": dealership, "lead_id": lead }),
        )),
        [dealership, "appointments", id] if !dealership.is_empty() && !id.is_empty() => Some((
            "service.get_appointment",
            json!({ "dealership_id": dealership, "appointment_id": id }),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::error::rate_limited;

    #[test]
    fn every_template_names_the_tool_it_is_read_through() {
        let tools: Vec<_> = templates()
            .iter()
            .map(|t| template_tool(&t.uri_template))
            .collect();
        assert_eq!(
            tools,
            [
                Some("dealership.get"),
                Some("inventory.get"),
                Some("leads.get"),
                Some("service.get_appointment"),
                Some("events.list"),
                Some("service.get_repair_order"),
            ]
        );
        assert_eq!(
            template_tool("dms://dealerships/{dealership_id}/nope"),
            None
        );
    }

    #[test]
    fn read_errors_keep_their_meaning() {
        let limited = read_error(&rate_limited(
            "anonymous",
            std::time::Duration::from_millis(1500),
        ));
        assert_eq!(limited.code.0, RATE_LIMITED);
        let data = limited.data.unwrap();
        assert_eq!(data["retry_after_ms"], 1500);
        assert_eq!(data["aap_code"], "RATE_LIMITED");
        assert_eq!(data["error"]["code"], "rate_limited");
        let code = |c: ErrorCode| read_error(&ToolError::new(c, "x")).code.0;
        assert_eq!(code(ErrorCode::InventoryVehicleNotFound), -32002);
        assert_eq!(code(ErrorCode::RequestInvalidArguments), -32602);
        assert_eq!(code(ErrorCode::UpstreamUnavailable), SERVER_ERROR);
        assert_eq!(code(ErrorCode::UpstreamTimeout), SERVER_ERROR);
        assert_eq!(code(ErrorCode::InventoryVehicleUnavailable), SERVER_ERROR);
        assert_eq!(code(ErrorCode::UpstreamRateLimited), RATE_LIMITED);
        assert_eq!(code(ErrorCode::Internal), -32603);
    }
}
