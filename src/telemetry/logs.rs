//! Which log lines the process writes (`DMS_BRIDGE_LOG`, `EnvFilter` syntax).
//!
//! Turning the bridge up to `debug` should show the bridge, not the libraries
//! under it: at debug sqlx logs every statement, and rustls, hyper, h2 and
//! reqwest every handshake, frame and pooled connection, several lines per
//! tool call. Those targets stay at the level below unless the operator names
//! them (`DMS_BRIDGE_LOG=debug,sqlx=debug` shows the statements).

/// The filter when `DMS_BRIDGE_LOG` is unset.
pub const DEFAULT_FILTER: &str = "info";

/// Library targets and the level they keep unless named.
const QUIET_TARGETS: &[(&str, &str)] = &[
    ("sqlx", "warn"),
    ("rustls", "info"),
    ("hyper", "info"),
    ("hyper_util", "info"),
    ("h2", "info"),
    ("reqwest", "info"),
    ("tower", "info"),
    ("tower_http", "info"),
    ("redis", "info"),
    ("mio", "info"),
    ("lettre", "info"),
    ("rmcp", "warn"),
];

/// The directives for a filter given as `DMS_BRIDGE_LOG` (or the default):
/// the operator's own, then a level for each library target they did not name.
pub fn directives(given: Option<&str>) -> String {
    let given = given
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .unwrap_or(DEFAULT_FILTER);
    let named = |target: &str| {
        given.split(',').any(|directive| {
            let name = directive
                .split(['=', '['])
                .next()
                .unwrap_or_default()
                .trim();
            name == target || name.starts_with(&format!("{target}::"))
        })
    };
    let mut out = given.to_owned();
    for (target, level) in QUIET_TARGETS.iter().filter(|(t, _)| !named(t)) {
        out.push_str(&format!(",{target}={level}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_stay_quiet_under_a_bare_level() {
        let d = directives(Some("debug"));
        assert!(d.starts_with("debug,"), "{d}");
        assert!(d.contains(",sqlx=warn"), "{d}");
        assert!(d.contains(",h2=info"), "{d}");
        assert!(d.contains(",rmcp=warn"), "{d}");
    }

    #[test]
    fn a_named_library_keeps_the_operators_level() {
        let d = directives(Some("debug,sqlx::query=debug,hyper=trace"));
        assert!(!d.contains("sqlx=warn"), "{d}");
        assert!(!d.contains("hyper=info"), "{d}");
        // hyper_util is another target, not a module of hyper.
        assert!(d.contains("hyper_util=info"), "{d}");
    }

    #[test]
    fn unset_or_blank_is_the_default() {
        assert_eq!(directives(None), directives(Some("  ")));
        assert!(directives(None).starts_with("info,"));
    }
}
