//! The store's schema migrations, embedded in the binary.
//!
//! `sqlx::migrate!` would embed the same files, but its macro compiles a
//! second copy of SQLite and of sqlx's drivers for the build host: about a
//! hundred seconds of a first build on two cores (BENCHMARKS.md "Build and
//! CI time"). The files are read with `include_str!` instead; versions,
//! descriptions and checksums are the ones the macro gave, so stores that
//! it migrated carry on.

use std::borrow::Cow;

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

use super::StoreDialect;

/// Every migration, oldest first, as `NNNN_description` (the file name).
const NAMES: [&str; 20] = [
    "0001_audit",
    "0002_leads",
    "0003_service_bookings",
    "0004_record_owners",
    "0005_idempotency",
    "0006_records_without_answers",
    "0007_tasks",
    "0008_events",
    "0009_webhooks",
    "0010_inbound_events",
    "0011_repair_order_statuses",
    "0012_work_leases",
    "0013_merged_leads",
    "0014_inbound_bodies",
    "0015_keys",
    "0016_booking_intents",
    "0017_resource_subscriptions",
    "0018_lead_crm_statuses",
    "0019_customer_data_lifecycle",
    "0020_audit_door",
];

macro_rules! files {
    ($dir:literal) => {
        [
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0001_audit.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0002_leads.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0003_service_bookings.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0004_record_owners.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0005_idempotency.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0006_records_without_answers.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0007_tasks.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0008_events.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0009_webhooks.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0010_inbound_events.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0011_repair_order_statuses.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0012_work_leases.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0013_merged_leads.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0014_inbound_bodies.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0015_keys.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0016_booking_intents.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0017_resource_subscriptions.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0018_lead_crm_statuses.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0019_customer_data_lifecycle.sql"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/",
                $dir,
                "/0020_audit_door.sql"
            )),
        ]
    };
}

const SQLITE: [&str; 20] = files!("sqlite");
const POSTGRES: [&str; 20] = files!("postgres");

/// The migrator for `dialect`'s schema.
pub fn migrator(dialect: StoreDialect) -> Migrator {
    let sources = match dialect {
        StoreDialect::Sqlite => &SQLITE,
        StoreDialect::Postgres => &POSTGRES,
    };
    let migrations = NAMES
        .iter()
        .zip(sources)
        .map(|(name, sql)| migration(name, sql));
    Migrator::with_migrations(migrations.collect())
}

/// As `sqlx::migrate!` reads a file: the version before the first `_`, the
/// rest with spaces for underscores as the description.
fn migration(name: &'static str, sql: &'static str) -> Migration {
    let (version, description) = name.split_once('_').unwrap_or((name, ""));
    Migration::new(
        version.parse().unwrap_or_default(),
        Cow::Owned(description.replace('_', " ")),
        MigrationType::Simple,
        sql.into_sql_str(),
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_file_is_embedded_in_order() {
        for dir in ["sqlite", "postgres"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(dir);
            let mut files: Vec<String> = std::fs::read_dir(path)
                .unwrap()
                .map(|e| {
                    e.unwrap()
                        .file_name()
                        .to_string_lossy()
                        .trim_end_matches(".sql")
                        .to_owned()
                })
                .collect();
            files.sort();
            assert_eq!(files, NAMES.to_vec(), "migrations/{dir}");
        }
        let versions: Vec<i64> = migrator(StoreDialect::Sqlite)
            .iter()
            .map(|m| m.version)
            .collect();
        assert_eq!(versions, (1..=NAMES.len() as i64).collect::<Vec<_>>());
    }
}
