//! Built-in vendor profiles (`adapters/`) and field mappings (`mappings/`),
//! embedded so the binary works on its own; configs may also point at files.

pub const PROFILES: &[&str] = &[
    "cdk-fortellis",
    "blackbook",
    "jdpower",
    "xtime",
    "tekion",
    "opentrack",
    "reynolds-rci",
    "activix",
];
pub const MAPPINGS: &[&str] = &[
    "cdk-inventory",
    "tekion-inventory",
    "opentrack-inventory",
    "reynolds-inventory",
    "homenet-csv",
    "google-vehicle-listings",
    "meta-automotive-xml",
    "cdk-repair-orders",
    "tekion-repair-orders",
    "opentrack-repair-orders",
    "reynolds-repair-orders",
];

pub fn builtin_profile(name: &str) -> Option<&'static str> {
    Some(match name {
        "cdk-fortellis" => include_str!("../../adapters/cdk-fortellis.toml"),
        "blackbook" => include_str!("../../adapters/blackbook.toml"),
        "jdpower" => include_str!("../../adapters/jdpower.toml"),
        "xtime" => include_str!("../../adapters/xtime.toml"),
        "tekion" => include_str!("../../adapters/tekion.toml"),
        "opentrack" => include_str!("../../adapters/opentrack.toml"),
        "reynolds-rci" => include_str!("../../adapters/reynolds-rci.toml"),
        "activix" => include_str!("../../adapters/activix.toml"),
        _ => return None,
    })
}

pub fn builtin_mapping(name: &str) -> Option<&'static str> {
    Some(match name {
        "cdk-inventory" => include_str!("../../mappings/cdk-inventory.toml"),
        "tekion-inventory" => include_str!("../../mappings/tekion-inventory.toml"),
        "opentrack-inventory" => include_str!("../../mappings/opentrack-inventory.toml"),
        "reynolds-inventory" => include_str!("../../mappings/reynolds-inventory.toml"),
        "homenet-csv" => include_str!("../../mappings/homenet-csv.toml"),
        "google-vehicle-listings" => include_str!("../../mappings/google-vehicle-listings.toml"),
        "meta-automotive-xml" => include_str!("../../mappings/meta-automotive-xml.toml"),
        "cdk-repair-orders" => include_str!("../../mappings/cdk-repair-orders.toml"),
        "tekion-repair-orders" => include_str!("../../mappings/tekion-repair-orders.toml"),
        "opentrack-repair-orders" => include_str!("../../mappings/opentrack-repair-orders.toml"),
        "reynolds-repair-orders" => include_str!("../../mappings/reynolds-repair-orders.toml"),
        _ => return None,
    })
}

/// A reference with a path separator or a `.toml` suffix names a file, not a built-in.
pub fn is_file_reference(reference: &str) -> bool {
    reference.contains('/') || reference.ends_with(".toml")
}

/// Reads a profile or mapping: a built-in by name, else a file relative to `base`.
pub fn read(
    reference: &str,
    base: &std::path::Path,
    builtin: fn(&str) -> Option<&'static str>,
) -> Result<String, String> {
    if !is_file_reference(reference) {
        return builtin(reference)
            .map(str::to_owned)
            .ok_or_else(|| format!("no built-in {reference:?}"));
    }
    let path = base.join(reference);
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}
