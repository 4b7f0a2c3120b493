//! `[store] url`: which database, checked for its shape only (no file is
//! opened and no server reached). Messages never repeat the URL: a
//! PostgreSQL URL may carry a password.

use super::{Config, ConfigError};

/// The database a store URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreDialect {
    /// `sqlite://path/to/file.db`, `sqlite:file.db` or `sqlite::memory:`.
    Sqlite,
    /// `postgres://user@host:port/database` (or `postgresql://`).
    Postgres,
}

impl StoreDialect {
    /// The dialect by the URL's scheme alone.
    pub fn of_url(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Self::Postgres)
        } else {
            None
        }
    }
}

/// Query parameters sqlx's SQLite driver takes; it refuses any other.
const SQLITE_PARAMETERS: &[&str] = &["mode", "cache", "immutable", "vfs"];

pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    if let Err(problem) = check_url(&config.store.url) {
        errors.push(ConfigError::new("store.url", problem));
    }
}

fn check_url(url: &str) -> Result<(), String> {
    match StoreDialect::of_url(url) {
        Some(StoreDialect::Sqlite) => check_sqlite(url),
        Some(StoreDialect::Postgres) => check_postgres(url),
        None => Err(
            "use sqlite://path/to/file.db, sqlite::memory: or postgres://user@host:5432/database"
                .into(),
        ),
    }
}

fn check_sqlite(url: &str) -> Result<(), String> {
    let rest = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:");
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path.is_empty() {
        return Err("a sqlite URL names a file (sqlite://path/to/file.db) or :memory:".into());
    }
    for (key, _) in url::form_urlencoded::parse(query.as_bytes()) {
        if !SQLITE_PARAMETERS.contains(&key.as_ref()) {
            return Err(format!(
                "unknown sqlite URL parameter {key:?}; known: {}",
                SQLITE_PARAMETERS.join(", ")
            ));
        }
    }
    Ok(())
}

fn check_postgres(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("not a valid postgres:// URL ({e})"))?;
    let segments = parsed.path().trim_start_matches('/');
    if segments.contains('/') {
        return Err("a postgres URL's path is one database name (postgres://host/database)".into());
    }
    if parsed.host_str().is_none_or(str::is_empty)
        && !parsed.query_pairs().any(|(key, _)| key == "host")
    {
        return Err(
            "a postgres URL names its server (postgres://host/database, or ?host=/socket/dir)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_are_checked_by_shape() {
        for good in [
            "sqlite::memory:",
            "sqlite://dms-bridge.db",
            "sqlite:///var/lib/dms-bridge/bridge.db?mode=rwc",
            "postgres://bridge@db.internal:5432/dms_bridge",
            "postgresql://bridge:secret@127.0.0.1/dms_bridge?sslmode=require",
            "postgres:///dms_bridge?host=/var/run/postgresql",
        ] {
            assert_eq!(check_url(good), Ok(()), "{good}");
        }
        for bad in [
            "mysql://db/bridge",
            "sqlite://",
            "sqlite://bridge.db?journal=wal",
            "postgres://db.internal/a/b",
            "postgres:///dms_bridge",
            "postgres://[::1/db",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn messages_never_repeat_the_url() {
        let url = "postgres://bridge:hunter2@db/a/b";
        assert!(!check_url(url).unwrap_err().contains("hunter2"));
    }
}
