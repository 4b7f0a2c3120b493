//! The inventory mirror. Each mirrored dealership's inventory is read in the
//! background, every interval and when an inbound vendor event asks, and
//! inventory reads are answered from the copy: upstream load follows
//! inventory change, not agent traffic. The differences between two reads
//! become `vehicle.*` events, written with the copy in one transaction, and
//! the copy survives restarts, so the first read after one is compared with
//! what was seen before it.
//!
//! Several processes on one store read each inventory once between them:
//! the holder of the dealership's `mirror/<id>` lease reads the upstream and
//! records; the others reload their copy from the store when the holder
//! signals a change (and check every [`FOLLOW_EVERY`], in case a signal was
//! lost), and take over the reading when the lease passes to them.

pub mod diff;
pub mod inbound;
pub mod repair_orders;
mod status;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Mutex, Notify};
use tokio_util::sync::CancellationToken;

use crate::adapters::{Adapter, AdapterError, InventorySnapshot, SoldUnit, UpstreamAdapter};
use crate::config::MirrorConfig;
use crate::store::leases::{Lease, Leases};
use crate::store::mirror::{GoneUnit, MirrorChanges};
use crate::store::{Signal, Store, StoreError};
use crate::telemetry::metrics::Metrics;

pub use inbound::{InboundSink, InboundSinks};
pub use status::MirrorStatus;

/// Why a read of the mirror could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error(transparent)]
    Upstream(#[from] AdapterError),
    #[error("the mirror could not be stored: {0}")]
    Store(#[from] StoreError),
}

/// One dealership's inventory to mirror.
pub struct MirrorSource {
    pub dealership: String,
    pub adapter: Arc<Adapter>,
    pub every: Duration,
}

/// The mirrored copy, and whether it is past `stale_after`.
pub struct Mirrored {
    pub copy: Arc<InventorySnapshot>,
    /// Set when no read has succeeded for longer than `stale_after`.
    pub stale_since: Option<DateTime<Utc>>,
}

/// Every mirrored dealership. Cheap to clone.
#[derive(Clone)]
pub struct Mirror {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    config: MirrorConfig,
    metrics: Arc<Metrics>,
    dealerships: BTreeMap<String, Arc<Dealership>>,
    /// Upstreams whose vendor pushes change events, by upstream id.
    inbound: InboundSinks,
}

struct Dealership {
    id: String,
    adapter: Arc<Adapter>,
    every: Duration,
    /// Whether this process reads the upstream (set at start; until then it does).
    lease: std::sync::OnceLock<Lease>,
    state: RwLock<State>,
    /// Bumped whenever the copy's content changes: cached answers carry it.
    generation: std::sync::atomic::AtomicU64,
    /// One read at a time: a burst of first calls reads the upstream once.
    syncing: Mutex<()>,
    /// Set by inbound vendor events: read now (see `event_gap`).
    wake: Notify,
    /// Least time between two reads events ask for, so no push rate can
    /// spend the vendor's quota faster (`inbound_events.min_read_interval`).
    event_gap: Duration,
}

#[derive(Default)]
struct State {
    copy: Option<Arc<InventorySnapshot>>,
    gone: BTreeMap<String, GoneUnit>,
    last_success_at: Option<DateTime<Utc>>,
    /// The last full read (a changes-since read does not count); none yet
    /// after a start, so the first read after one is full.
    last_full_at: Option<DateTime<Utc>>,
    last_error: Option<&'static str>,
    held_back: Option<HeldBack>,
    /// The stored copy's version this copy matches (see `store::mirror::Standing`).
    stored_changed_at: Option<String>,
    /// Successful upstream reads by this process so far.
    reads: u64,
}

/// How a sync reads the upstream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// A changes-since read where the upstream offers one and the last full
    /// read is recent enough; a full read otherwise.
    Changes,
    /// Every unit, whatever the upstream offers.
    Full,
    /// Only when there is no copy yet (the first calls wait for it).
    IfMissing,
    /// As `Changes`, unless this process has read the upstream since its
    /// `reads` count was the one given: the background loop's first read,
    /// which an agent's first call may have made already.
    ChangesUnlessReadSince(u64),
}

/// Deltas ask from a little before the last good read: upstream clocks and
/// commit delays differ from ours.
const DELTA_OVERLAP: chrono::TimeDelta = chrono::TimeDelta::minutes(2);

/// How often a process that does not read a dealership's upstream compares
/// its copy with the store and sees whether the lease passed to it.
pub const FOLLOW_EVERY: Duration = Duration::from_secs(30);

#[derive(Clone, Copy)]
struct HeldBack {
    removals: usize,
    reads: u32,
}

impl Mirror {
    pub fn new(
        store: Store,
        config: MirrorConfig,
        metrics: Arc<Metrics>,
        sources: Vec<MirrorSource>,
        inbound: InboundSinks,
    ) -> Self {
        let dealerships = sources
            .into_iter()
            .map(|s| {
                let d = Dealership {
                    id: s.dealership.clone(),
                    adapter: s.adapter,
                    every: s.every,
                    lease: std::sync::OnceLock::new(),
                    state: RwLock::default(),
                    generation: std::sync::atomic::AtomicU64::new(0),
                    syncing: Mutex::new(()),
                    wake: Notify::new(),
                    event_gap: inbound.min_read_interval(&s.dealership),
                };
                (s.dealership, Arc::new(d))
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                store,
                config,
                metrics,
                dealerships,
                inbound,
            }),
        }
    }

    /// Loads every stored copy, then reads each inventory in the background
    /// (where this process holds its lease) until `cancel` fires.
    pub async fn start(&self, leases: &Leases, cancel: &CancellationToken) {
        for d in self.inner.dealerships.values() {
            let lease = leases.take(&format!("mirror/{}", d.id)).await;
            // Set once, here: a second start would keep the first lease.
            let _ = d.lease.set(lease);
            if let Err(e) = self.load(d).await {
                tracing::warn!(dealership = %d.id, error = %e, "Could not load the mirrored inventory; reading it afresh.");
            }
            let reads = d.read().reads;
            let (mirror, d, cancel) = (self.clone(), d.clone(), cancel.child_token());
            tokio::spawn(async move { mirror.run(&d, reads, cancel).await });
        }
    }

    /// True when `dealership`'s inventory is answered from the mirror.
    pub fn mirrors(&self, dealership: &str) -> bool {
        self.inner.dealerships.contains_key(dealership)
    }

    /// The mirrored inventory; the first call before any successful read waits for one.
    pub async fn inventory(&self, dealership: &str) -> Result<Mirrored, MirrorError> {
        let d = self
            .inner
            .dealerships
            .get(dealership)
            .ok_or(AdapterError::Unsupported)?;
        let held = d.read().copy.clone();
        let copy = match held {
            Some(copy) => copy,
            None => self.sync(d, Read::IfMissing).await?,
        };
        let stale_since = d.read().last_success_at.filter(|at| self.is_stale(*at));
        Ok(Mirrored { copy, stale_since })
    }

    /// What answers computed from `dealership`'s copy depend on: its
    /// generation and whether it is stale. `None` for an unmirrored dealership.
    pub fn cache_tag(&self, dealership: &str) -> Option<String> {
        let d = self.inner.dealerships.get(dealership)?;
        let generation = d.generation.load(std::sync::atomic::Ordering::Acquire);
        let stale = d.read().last_success_at.is_some_and(|at| self.is_stale(at));
        Some(format!("{generation}:{}", u8::from(stale)))
    }

    /// When `dealership`'s copy was last read, if that is longer ago than
    /// `stale_after` (so answers from it carry the stale notice).
    pub fn stale_since(&self, dealership: &str) -> Option<DateTime<Utc>> {
        let d = self.inner.dealerships.get(dealership)?;
        d.read().last_success_at.filter(|at| self.is_stale(*at))
    }

    fn is_stale(&self, last_success_at: DateTime<Utc>) -> bool {
        Utc::now()
            .signed_duration_since(last_success_at)
            .to_std()
            .is_ok_and(|age| age > self.inner.config.stale_after)
    }

    /// Asks for a read of `dealership`'s inventory now (an inbound vendor
    /// event said a unit changed). Returns false for an unmirrored dealership.
    pub fn request_sync(&self, dealership: &str) -> bool {
        let Some(d) = self.inner.dealerships.get(dealership) else {
            return false;
        };
        if d.reads_upstream() {
            d.wake.notify_one();
        } else {
            // The process holding the lease reads; tell it.
            let (store, id) = (self.inner.store.clone(), d.id.clone());
            tokio::spawn(async move {
                store
                    .announce(Signal::SyncRequested { dealership: id })
                    .await;
            });
        }
        true
    }

    /// The inbound events `upstream` accepts, if its vendor pushes any.
    pub fn inbound(&self, upstream: &str) -> Option<std::sync::Arc<InboundSink>> {
        self.inner.inbound.get(upstream)
    }

    /// Reads `dealership`'s whole inventory now and records what changed.
    pub async fn sync_now(&self, dealership: &str) -> Result<(), MirrorError> {
        let d = self
            .inner
            .dealerships
            .get(dealership)
            .ok_or(AdapterError::Unsupported)?;
        self.sync(d, Read::Full).await.map(|_| ())
    }

    /// `reads_at_start`: this process's read count when the loop was started;
    /// a read made since (by the first agent call) is the loop's first one.
    async fn run(&self, d: &Dealership, reads_at_start: u64, cancel: CancellationToken) {
        let mut signals = self.inner.store.signals();
        let mut reading = d.reads_upstream();
        let mut next_read = Read::ChangesUnlessReadSince(reads_at_start);
        // When the last read events asked for began: the next waits for `event_gap`.
        let mut last_asked: Option<tokio::time::Instant> = None;
        loop {
            let now_reading = d.reads_upstream();
            if now_reading {
                // Taking over: start from what the last reader recorded, so
                // its changes are not reported again.
                if !reading && let Err(e) = self.load(d).await {
                    tracing::warn!(dealership = %d.id, error = %e, "Could not load the mirrored inventory before reading it.");
                }
                let read = std::mem::replace(&mut next_read, Read::Changes);
                if let Err(e) = self.sync(d, read).await {
                    tracing::warn!(dealership = %d.id, error = %e, "Inventory read failed; serving the last good copy.");
                }
            } else {
                self.follow(d).await;
            }
            reading = now_reading;
            let wait = if reading {
                d.every
            } else {
                d.every.min(FOLLOW_EVERY)
            };
            let asked = tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(wait) => false,
                _ = d.wake.notified() => true,
                () = wanted(&mut signals, &d.id, reading) => false,
            };
            if asked {
                // Events asking for a read meanwhile are one read at the gap's end.
                if let Some(at) = last_asked {
                    tokio::select! {
                        _ = cancel.cancelled() => break,
                        _ = tokio::time::sleep_until(at + d.event_gap) => {}
                    }
                }
                last_asked = Some(tokio::time::Instant::now());
            }
        }
    }

    /// Brings the copy to what the store holds, if the reader recorded a change.
    async fn follow(&self, d: &Dealership) {
        let standing = match crate::store::mirror::standing(&self.inner.store, &d.id).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(dealership = %d.id, error = %e, "Cannot compare the mirrored inventory with the store.");
                return;
            }
        };
        let current = d.read().stored_changed_at == standing.changed_at;
        if current {
            d.write().last_success_at = standing.last_success_at;
        } else if let Err(e) = self.load(d).await {
            tracing::warn!(dealership = %d.id, error = %e, "Could not reload the mirrored inventory.");
        }
    }

    /// Loads the stored copy; units are vouched for as of the last good read.
    async fn load(&self, d: &Dealership) -> Result<(), StoreError> {
        let stored = crate::store::mirror::load(&self.inner.store, &d.id).await?;
        let Some(synced_at) = stored.last_success_at else {
            return Ok(());
        };
        let stamp = synced_at.fixed_offset();
        let listed = stored
            .listed
            .into_iter()
            .map(|mut v| {
                v.last_verified_at = v.last_verified_at.max(stamp);
                Arc::new(v)
            })
            .collect();
        let gone: BTreeMap<String, GoneUnit> =
            stored.gone.into_iter().map(|g| (g.id.clone(), g)).collect();
        let sold = gone.values().map(sold_unit).collect();
        let copy = InventorySnapshot::new(listed, sold, Some(synced_at)).indexed();
        self.set_units_gauge(d, copy.listed.len());
        let mut state = d.write();
        state.copy = Some(Arc::new(copy));
        state.gone = gone;
        state.last_success_at = Some(synced_at);
        state.stored_changed_at = stored.changed_at;
        d.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// One read of the upstream, compared with the copy and recorded.
    async fn sync(
        &self,
        d: &Dealership,
        read: Read,
    ) -> Result<Arc<InventorySnapshot>, MirrorError> {
        let _turn = d.syncing.lock().await;
        // Callers that queued behind the first read take its copy.
        let (held, reads) = {
            let state = d.read();
            (state.copy.clone(), state.reads)
        };
        match (read, held) {
            (Read::IfMissing, Some(copy)) => return Ok(copy),
            (Read::ChangesUnlessReadSince(before), Some(copy)) if reads > before => {
                return Ok(copy);
            }
            _ => {}
        }
        if !d.reads_upstream() {
            return self.unrecorded_copy(d).await;
        }
        let (previous, gone) = {
            let state = d.read();
            (state.copy.clone(), state.gone.clone())
        };
        let (fresh, full) = match self.read_upstream(d, previous.as_ref(), read).await {
            Ok(fresh) => fresh,
            Err(e) => {
                d.write().last_error = Some(e.class());
                self.count_sync(d, e.class());
                return Err(e.into());
            }
        };
        let now = Utc::now();
        let plan = diff::plan(
            previous.as_deref(),
            &gone,
            &fresh,
            fresh.fetched_at.unwrap_or(now),
        );
        if let Some(previous) = &previous
            && self.holds_back(d, &plan, previous.listed.len())
        {
            return Ok(previous.clone());
        }
        self.record(d, &plan, now).await?;
        let units_changed = !plan.upserts.is_empty() || !plan.removed.is_empty();
        if units_changed {
            let signal = Signal::MirrorChanged {
                dealership: d.id.clone(),
            };
            self.inner.store.announce(signal).await;
        }
        let copy = Arc::new(served_copy(&fresh, &plan, now));
        if !plan.events.is_empty() {
            tracing::info!(dealership = %d.id, events = plan.events.len(), listed = copy.listed.len(), "Inventory changed.");
        }
        self.count_events(d, plan.events.len());
        self.set_units_gauge(d, copy.listed.len());
        self.count_sync(d, "ok");
        let changed = previous.is_none() || !plan.events.is_empty();
        let mut state = d.write();
        state.copy = Some(copy.clone());
        state.gone = plan.gone;
        if changed {
            d.generation
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        state.last_success_at = Some(now);
        state.reads += 1;
        if full {
            state.last_full_at = Some(now);
        }
        state.last_error = None;
        state.held_back = None;
        if units_changed {
            state.stored_changed_at = Some(crate::store::ts(now));
        }
        Ok(copy)
    }

    /// The copy for a process that does not read the upstream: the stored
    /// one, or (before the reader's first read) one read now and not
    /// recorded, so that only the reader writes events.
    async fn unrecorded_copy(&self, d: &Dealership) -> Result<Arc<InventorySnapshot>, MirrorError> {
        self.load(d).await?;
        if let Some(copy) = d.read().copy.clone() {
            return Ok(copy);
        }
        let fresh = d.adapter.inventory().await?;
        let copy = Arc::new(
            InventorySnapshot::new(
                fresh.listed.clone(),
                fresh.sold.clone(),
                fresh.fetched_at.or(Some(Utc::now())),
            )
            .indexed(),
        );
        d.write().copy = Some(copy.clone());
        Ok(copy)
    }

    /// Writes the read's changes and events to the store, in one transaction.
    async fn record(
        &self,
        d: &Dealership,
        plan: &diff::Plan,
        now: DateTime<Utc>,
    ) -> Result<(), MirrorError> {
        let changes = MirrorChanges {
            listed: plan.upserts.iter().map(|v| &**v).collect(),
            gone: plan.removed.clone(),
        };
        let recorded = crate::store::mirror::record_sync(
            &self.inner.store,
            &d.id,
            &changes,
            &plan.events,
            now,
        )
        .await;
        if let Err(e) = recorded {
            d.write().last_error = Some("store");
            self.count_sync(d, "store");
            return Err(e.into());
        }
        Ok(())
    }

    /// The inventory as it stands upstream: a changes-since read applied to
    /// the copy where allowed, else a full read (`true`).
    async fn read_upstream(
        &self,
        d: &Dealership,
        previous: Option<&Arc<InventorySnapshot>>,
        read: Read,
    ) -> Result<(Arc<InventorySnapshot>, bool), AdapterError> {
        let (last_full, last_success) = {
            let state = d.read();
            (state.last_full_at, state.last_success_at)
        };
        let now = Utc::now();
        let changes_wanted = matches!(read, Read::Changes | Read::ChangesUnlessReadSince(_));
        let delta_allowed = changes_wanted
            && d.adapter.inventory_delta().is_some_and(|full_every| {
                last_full.is_some_and(|at| {
                    now.signed_duration_since(at)
                        .to_std()
                        .is_ok_and(|age| age < full_every)
                })
            });
        if let (true, Some(previous), Some(since)) = (delta_allowed, previous, last_success)
            && let Some(changes) = d.adapter.inventory_changes(since - DELTA_OVERLAP).await?
        {
            return Ok((Arc::new(diff::merge(previous, &changes)), false));
        }
        Ok((d.adapter.inventory().await?, true))
    }

    /// The mass-removal guard: a read removing too many units is kept back
    /// until `confirm_removals` reads in a row agree.
    fn holds_back(&self, d: &Dealership, plan: &diff::Plan, listed_before: usize) -> bool {
        let config = &self.inner.config;
        if !plan.removes_too_many(listed_before, config.max_removed_share) {
            return false;
        }
        let mut state = d.write();
        let reads = state.held_back.map_or(1, |h| h.reads + 1);
        if reads >= config.confirm_removals {
            tracing::warn!(dealership = %d.id, removals = plan.removed.len(), reads, "Applying a mass removal that several reads in a row agree on.");
            return false;
        }
        state.held_back = Some(HeldBack {
            removals: plan.removed.len(),
            reads,
        });
        drop(state);
        tracing::warn!(
            dealership = %d.id,
            removals = plan.removed.len(),
            listed_before,
            "An inventory read would remove too many units; held back until the next reads agree."
        );
        self.count_sync(d, "held_back");
        true
    }
}

impl Dealership {
    /// True when this process reads the upstream and records what changed.
    fn reads_upstream(&self) -> bool {
        self.lease.get().is_none_or(Lease::is_held)
    }

    /// The state, even if a panicking writer poisoned the lock (it holds no invariant across writes).
    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }
}

/// Returns when a signal concerns `dealership`'s copy: for the reader, a read
/// asked for elsewhere; for the others, a change recorded; for both, signals
/// that may have been lost.
async fn wanted(
    signals: &mut tokio::sync::broadcast::Receiver<Signal>,
    dealership: &str,
    reading: bool,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match signals.recv().await {
            Ok(Signal::SyncRequested { dealership: d }) if reading && d == dealership => return,
            Ok(Signal::MirrorChanged { dealership: d }) if !reading && d == dealership => return,
            Ok(Signal::Resync) | Err(RecvError::Lagged(_)) => return,
            Ok(_) => {}
            Err(RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// What reads answer from: the fresh read's listed units, and as sold both
/// what it reports sold and every unit known to have left.
fn served_copy(
    fresh: &InventorySnapshot,
    plan: &diff::Plan,
    now: DateTime<Utc>,
) -> InventorySnapshot {
    let reported: std::collections::HashSet<&str> =
        fresh.sold.iter().map(|s| s.id.as_str()).collect();
    let mut sold = fresh.sold.clone();
    sold.extend(
        plan.gone
            .values()
            .filter(|g| !reported.contains(g.id.as_str()))
            .map(sold_unit),
    );
    InventorySnapshot::new(fresh.listed.clone(), sold, fresh.fetched_at.or(Some(now))).indexed()
}

fn sold_unit(g: &GoneUnit) -> SoldUnit {
    SoldUnit {
        id: g.id.clone(),
        vin: g.vin.clone(),
        stock: g.stock.clone(),
    }
}
