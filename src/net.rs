//! Outbound HTTP clients, all on one TLS crypto provider.
//!
//! rustls needs a crypto provider. reqwest's default brings aws-lc-rs, whose
//! C library was the slowest single step of a first build (86 s of CPU on two
//! cores, BENCHMARKS.md "Build and CI time"); ring, which the SMTP client
//! already uses, is built anyway. reqwest is built without a provider of its
//! own, so ring is made the process's provider before any client is built.

use std::sync::Once;

/// A reqwest client builder, the process's TLS provider installed first.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
}

/// Makes ring the process's rustls provider, once. Clients other code builds
/// (rmcp's, in tests) need it too; installing it again changes nothing.
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means a provider is installed already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
