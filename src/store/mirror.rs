//! SQL for the inventory mirror (`migrations/*/0008`): the units last seen per
//! dealership. A sync writes only what changed, with the events describing
//! the change, in one transaction: after a crash the mirror and the event log
//! agree, and the next sync reports exactly what is still different.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::ts;
use super::{Store, StoreError, events};
use crate::model::Vehicle;
use crate::model::event::NewEvent;

/// Version of a stored unit's shape; bump it with a migration of old rows.
pub const UNIT_SCHEMA_VERSION: i64 = 1;

/// A unit that left the inventory (sold or removed): kept so that `inventory.get`
/// can tell "sold" from "never existed".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneUnit {
    pub id: String,
    pub vin: Option<String>,
    pub stock: Option<String>,
}

/// A dealership's mirror as stored.
#[derive(Debug, Default)]
pub struct StoredMirror {
    pub listed: Vec<Vehicle>,
    pub gone: Vec<GoneUnit>,
    pub last_success_at: Option<DateTime<Utc>>,
    /// When a unit last changed: the copy's version, as [`standing`] reports it.
    pub changed_at: Option<String>,
}

/// How a dealership's stored mirror stands, without reading its units: what a
/// process that does not read the upstream itself compares its copy with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub last_success_at: Option<DateTime<Utc>>,
    pub changed_at: Option<String>,
}

/// What one sync changed, to be written with its events.
#[derive(Debug, Default)]
pub struct MirrorChanges<'a> {
    /// New or changed listed units.
    pub listed: Vec<&'a Vehicle>,
    /// Units that left the inventory since the last sync.
    pub gone: Vec<GoneUnit>,
}

/// Loads `dealership`'s mirror; empty when it was never synced.
pub async fn load(store: &Store, dealership: &str) -> Result<StoredMirror, StoreError> {
    let rows = sqlx::query(
        "SELECT vehicle_id, schema_version, state, vin, stock, vehicle, changed_at
         FROM mirror_units WHERE dealership = $1",
    )
    .bind(dealership)
    .fetch_all(store.pool())
    .await?;
    let mut mirror = StoredMirror::default();
    for row in &rows {
        let changed_at: String = row.try_get("changed_at")?;
        if mirror.changed_at.as_ref().is_none_or(|c| *c < changed_at) {
            mirror.changed_at = Some(changed_at);
        }
        let version: i64 = row.try_get("schema_version")?;
        let id: String = row.try_get("vehicle_id")?;
        if version != UNIT_SCHEMA_VERSION {
            tracing::warn!(
                dealership,
                id,
                version,
                "Skipped a mirrored unit this version cannot read; the next sync replaces it."
            );
            continue;
        }
        let state: String = row.try_get("state")?;
        let vehicle: Option<String> = row.try_get("vehicle")?;
        match (state.as_str(), vehicle) {
            ("listed", Some(json)) => match serde_json::from_str::<Vehicle>(&json) {
                Ok(v) => mirror.listed.push(v),
                Err(e) => {
                    tracing::warn!(dealership, id, error = %e, "Skipped a mirrored unit that does not parse; the next sync replaces it.")
                }
            },
            _ => mirror.gone.push(GoneUnit {
                id,
                vin: row.try_get("vin")?,
                stock: row.try_get("stock")?,
            }),
        }
    }
    mirror.last_success_at = last_success(store, dealership).await?;
    Ok(mirror)
}

async fn last_success(
    store: &Store,
    dealership: &str,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    let last: Option<String> =
        sqlx::query_scalar("SELECT last_success_at FROM mirror_syncs WHERE dealership = $1")
            .bind(dealership)
            .fetch_optional(store.pool())
            .await?;
    Ok(last
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// Where `dealership`'s stored mirror stands: two indexed reads.
pub async fn standing(store: &Store, dealership: &str) -> Result<Standing, StoreError> {
    let changed_at: Option<String> =
        sqlx::query_scalar("SELECT MAX(changed_at) FROM mirror_units WHERE dealership = $1")
            .bind(dealership)
            .fetch_one(store.pool())
            .await?;
    Ok(Standing {
        last_success_at: last_success(store, dealership).await?,
        changed_at,
    })
}

/// Records a successful sync: its changes and their events, atomically.
/// Returns the events' sequences.
pub async fn record_sync(
    store: &Store,
    dealership: &str,
    changes: &MirrorChanges<'_>,
    new_events: &[NewEvent],
    synced_at: DateTime<Utc>,
) -> Result<Vec<u64>, StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    let at = ts(synced_at);
    for vehicle in &changes.listed {
        let json = serde_json::to_string(vehicle).map_err(|e| StoreError::Encode(e.to_string()))?;
        sqlx::query(
            "INSERT INTO mirror_units (dealership, vehicle_id, schema_version, state, vin, stock, vehicle, changed_at)
             VALUES ($1, $2, $3, 'listed', $4, $5, $6, $7)
             ON CONFLICT (dealership, vehicle_id) DO UPDATE SET schema_version = $3,
                 state = 'listed', vin = $4, stock = $5, vehicle = $6, changed_at = $7",
        )
        .bind(dealership)
        .bind(&vehicle.id)
        .bind(UNIT_SCHEMA_VERSION)
        .bind(&vehicle.vin)
        .bind(&vehicle.stock)
        .bind(json)
        .bind(&at)
        .execute(&mut **tx)
        .await?;
    }
    for unit in &changes.gone {
        sqlx::query(
            "INSERT INTO mirror_units (dealership, vehicle_id, schema_version, state, vin, stock, vehicle, changed_at)
             VALUES ($1, $2, $3, 'gone', $4, $5, NULL, $6)
             ON CONFLICT (dealership, vehicle_id) DO UPDATE SET schema_version = $3,
                 state = 'gone', vin = COALESCE($4, mirror_units.vin),
                 stock = COALESCE($5, mirror_units.stock), vehicle = NULL, changed_at = $6",
        )
        .bind(dealership)
        .bind(&unit.id)
        .bind(UNIT_SCHEMA_VERSION)
        .bind(&unit.vin)
        .bind(&unit.stock)
        .bind(&at)
        .execute(&mut **tx)
        .await?;
    }
    sqlx::query(
        "INSERT INTO mirror_syncs (dealership, last_success_at) VALUES ($1, $2)
         ON CONFLICT (dealership) DO UPDATE SET last_success_at = $2",
    )
    .bind(dealership)
    .bind(&at)
    .execute(&mut **tx)
    .await?;
    let sequences = events::append_in(tx, dealership, new_events, synced_at).await?;
    write.tx.commit().await?;
    if !new_events.is_empty() {
        store.announce_events(dealership).await;
    }
    Ok(sequences)
}
