//! Resource subscriptions, fed by the event log: a client subscribed to a
//! dealership's event stream (`dms://dealerships/{id}/events`) or to one
//! resource (`…/vehicles/{id}`, `…/leads/{id}`, `…/appointments/{id}`,
//! `…/repair-orders/{n}`) gets `notifications/resources/updated` for it when
//! an event it may see is recorded. 2026-07-28 clients subscribe with
//! `subscriptions/listen` (any transport); clients of the `initialize` era
//! with `resources/subscribe`: held by the session on stdio and with
//! `[server] sessions = "stateful"`; over stateless HTTP kept in the store
//! for the principal and told on its `GET` stream, which any replica may
//! hold ([`tell_principal`]).
//!
//! Watching starts at the log's head when the subscription is made: a
//! notification says "read it again", and the event log with its cursor
//! (`events_list`) is where a client catches up on what it missed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::{Peer, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};

use super::resources::SCHEME;
use crate::contract::Principal;
use crate::gateway::Gateway;
use crate::store::events;
use crate::store::subscriptions as store_subscriptions;
use crate::tools::events::visible_to;

/// Longest wait between looks at the log (new events wake watchers at once).
const IDLE_POLL: Duration = Duration::from_secs(1);
/// Events read per look and dealership.
const BATCH: u32 = 500;

/// What a subscribed URI watches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Target {
    dealership: String,
    /// `None`: the dealership's whole event stream.
    resource_uri: Option<String>,
}

impl Target {
    /// The target of a subscribable `dms://` URI.
    fn parse(uri: &str) -> Option<Self> {
        let rest = uri.strip_prefix(SCHEME)?;
        let parts: Vec<&str> = rest.split('/').collect();
        let ok = |s: &&str| !s.is_empty();
        match parts.as_slice() {
            [dealership, "events"] if ok(dealership) => Some(Self {
                dealership: (*dealership).to_owned(),
                resource_uri: None,
            }),
            [
                dealership,
                "vehicles" | "leads" | "appointments" | "repair-orders",
                id,
            ] if ok(dealership) && ok(id) => Some(Self {
                dealership: (*dealership).to_owned(),
                resource_uri: Some(uri.to_owned()),
            }),
            _ => None,
        }
    }
}

/// Most resources one `subscriptions/listen` may name: each is watched on
/// every new event, and a `*` token could name any number of dealerships.
pub const MAX_LISTEN_URIS: usize = 256;

/// What the HTTP layer decided about a `subscriptions/listen` request body.
pub enum ListenScreen {
    /// Not a listen request: as it came.
    NotListen,
    /// A listen whose resources the caller may watch: the body to serve
    /// (resources of dealerships the caller may not use taken out, so the
    /// acknowledgement never lists them as accepted).
    Screened(Vec<u8>),
    /// Too many resources named (JSON-RPC id of the request).
    TooMany(serde_json::Value),
}

/// Screens a `subscriptions/listen` body for `principal`, before rmcp
/// acknowledges it (rmcp asks the handler which resources it accepts
/// without saying who is asking).
pub fn screen_listen(body: &[u8], principal: &Principal) -> ListenScreen {
    let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(body) else {
        return ListenScreen::NotListen;
    };
    if message.get("method").and_then(serde_json::Value::as_str) != Some("subscriptions/listen") {
        return ListenScreen::NotListen;
    }
    let uris = message
        .pointer_mut("/params/notifications/resourceSubscriptions")
        .and_then(serde_json::Value::as_array_mut);
    if let Some(uris) = uris {
        if uris.len() > MAX_LISTEN_URIS {
            let id = message
                .get("id")
                .cloned()
                .unwrap_or(serde_json::Value::Null);
            return ListenScreen::TooMany(id);
        }
        uris.retain(|uri| {
            uri.as_str()
                .and_then(Target::parse)
                .is_some_and(|t| principal.may_use(&t.dealership))
        });
    }
    ListenScreen::Screened(serde_json::to_vec(&message).unwrap_or_else(|_| body.to_vec()))
}

/// The subscribable URIs of a requested filter (what `accepted_subscription_filter` answers).
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| Target::parse(uri).is_some())
            .cloned()
            .collect::<Vec<_>>()
    });
    let mut filter = SubscriptionFilter::default();
    filter.resource_subscriptions = uris;
    filter
}

/// Whether `uri` can be subscribed to.
pub fn subscribable(uri: &str) -> bool {
    Target::parse(uri).is_some()
}

/// A caller's position in each watched dealership's log.
struct Watch {
    principal: Arc<Principal>,
    positions: BTreeMap<String, u64>,
}

impl Watch {
    fn new(principal: Arc<Principal>) -> Self {
        Self {
            principal,
            positions: BTreeMap::new(),
        }
    }

    /// Starts watching `dealership` after `sequence`, unless already watched.
    fn start_after(&mut self, dealership: &str, sequence: u64) {
        self.positions
            .entry(dealership.to_owned())
            .or_insert(sequence);
    }

    /// The subscribed URIs that new events concern, each once, in first-event order.
    async fn changed(&mut self, gateway: &Gateway, uris: &BTreeSet<String>) -> Vec<String> {
        let targets: Vec<(String, Target)> = uris
            .iter()
            .filter_map(|u| Target::parse(u).map(|t| (u.clone(), t)))
            .filter(|(_, t)| self.principal.may_use(&t.dealership))
            .collect();
        let dealerships: BTreeSet<&str> =
            targets.iter().map(|(_, t)| t.dealership.as_str()).collect();
        let mut changed = Vec::new();
        for dealership in dealerships {
            let store = gateway.store();
            let position = match self.positions.get(dealership) {
                Some(p) => *p,
                None => {
                    // Watching starts now: earlier events are events_list's to tell.
                    let head = events::head(store, dealership).await.unwrap_or(0);
                    self.positions.insert(dealership.to_owned(), head);
                    continue;
                }
            };
            let batch = match events::after(store, dealership, position, BATCH).await {
                Ok(batch) => batch,
                Err(e) => {
                    tracing::warn!(error = %e, "Could not read events for subscribers.");
                    continue;
                }
            };
            if let Some(last) = batch.last() {
                self.positions
                    .insert(dealership.to_owned(), last.event.sequence);
            }
            for stored in batch.iter().filter(|s| visible_to(&self.principal, s)) {
                for (uri, target) in targets.iter().filter(|(_, t)| t.dealership == dealership) {
                    let concerned = target
                        .resource_uri
                        .as_ref()
                        .is_none_or(|r| *r == stored.event.resource.uri);
                    if concerned && !changed.contains(uri) {
                        changed.push(uri.clone());
                    }
                }
            }
        }
        changed
    }
}

fn updated(uri: String) -> ServerNotification {
    ServerNotification::ResourceUpdatedNotification(ResourceUpdatedNotification::new(
        ResourceUpdatedNotificationParam::new(uri),
    ))
}

/// Serves one 2026-07-28 `subscriptions/listen` until the client ends it.
pub async fn listen(
    gateway: &Gateway,
    principal: Arc<Principal>,
    subscription: SubscriptionContext,
) -> Result<(), McpError> {
    let uris: BTreeSet<String> = subscription
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    let mut watch = Watch::new(principal);
    loop {
        for uri in watch.changed(gateway, &uris).await {
            if subscription.sink().send(updated(uri)).await.is_err() {
                return Ok(());
            }
        }
        tokio::select! {
            _ = subscription.cancelled() => return Ok(()),
            _ = gateway.store().events_appended().notified() => {}
            _ = tokio::time::sleep(IDLE_POLL) => {}
        }
    }
}

/// Whether `principal` may subscribe to `uri`, and from which event: the
/// dealership's head now. `None` for a URI that cannot be subscribed to or
/// a dealership the principal may not use (alike, so ids cannot be probed).
pub async fn stored_subscription(
    gateway: &Gateway,
    principal: &Principal,
    uri: &str,
) -> Option<store_subscriptions::Subscription> {
    let target = Target::parse(uri).filter(|t| principal.may_use(&t.dealership))?;
    let head = events::head(gateway.store(), &target.dealership)
        .await
        .unwrap_or(0);
    Some(store_subscriptions::Subscription {
        uri: uri.to_owned(),
        after_sequence: head,
    })
}

/// Tells `principal` of updates to the resources it subscribed to over
/// stateless HTTP, as JSON-RPC notification texts on `out` (its `GET`
/// stream), until the client goes away. The subscriptions are read from the
/// store on every look, so one made through any replica counts at once.
pub async fn tell_principal(
    gateway: Gateway,
    principal: Arc<Principal>,
    mut out: futures::channel::mpsc::Sender<String>,
) {
    use futures::SinkExt;
    let mut watch = Watch::new(principal.clone());
    loop {
        let subscribed = store_subscriptions::of(gateway.store(), &principal.name)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "Could not read resource subscriptions.");
                Vec::new()
            });
        for s in &subscribed {
            if let Some(target) = Target::parse(&s.uri) {
                watch.start_after(&target.dealership, s.after_sequence);
            }
        }
        let uris: BTreeSet<String> = subscribed.into_iter().map(|s| s.uri).collect();
        for uri in watch.changed(&gateway, &uris).await {
            let message = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": { "uri": uri },
            });
            if out.send(message.to_string()).await.is_err() {
                return;
            }
        }
        if out.is_closed() {
            return;
        }
        tokio::select! {
            _ = gateway.store().events_appended().notified() => {}
            _ = tokio::time::sleep(IDLE_POLL) => {}
        }
    }
}

/// One session's `resources/subscribe` set (clients of the `initialize` era),
/// watched by one task that ends with the session.
#[derive(Default)]
pub struct SessionSubscriptions {
    uris: Mutex<BTreeSet<String>>,
    watching: std::sync::atomic::AtomicBool,
}

impl SessionSubscriptions {
    /// Adds `uri`; the first subscription starts the session's watcher.
    pub fn subscribe(
        self: &Arc<Self>,
        uri: String,
        gateway: &Gateway,
        principal: Arc<Principal>,
        peer: Peer<RoleServer>,
    ) {
        self.lock().insert(uri);
        if self
            .watching
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let (subscriptions, gateway) = (self.clone(), gateway.clone());
        tokio::spawn(async move { subscriptions.watch(gateway, principal, peer).await });
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.lock().remove(uri);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.uris.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn watch(&self, gateway: Gateway, principal: Arc<Principal>, peer: Peer<RoleServer>) {
        let mut watch = Watch::new(principal);
        loop {
            let uris = self.lock().clone();
            for uri in watch.changed(&gateway, &uris).await {
                // A closed session cannot be told anything more: stop watching.
                if peer.send_notification(updated(uri)).await.is_err() {
                    return;
                }
            }
            if peer.is_transport_closed() {
                return;
            }
            tokio::select! {
                _ = gateway.store().events_appended().notified() => {}
                _ = tokio::time::sleep(IDLE_POLL) => {}
            }
        }
    }
}
