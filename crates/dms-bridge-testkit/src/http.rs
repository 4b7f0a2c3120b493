//! HTTP clients for the mocks and the tests.
//!
//! Built together with the bridge, reqwest has rustls without a crypto
//! provider (the bridge's `net` module installs ring); every client here
//! installs it first too, so a mock or a test that runs before any bridge
//! still gets a working client. rmcp's HTTP client needs it as well: call
//! [`install_tls_provider`] before connecting one.

use std::sync::Once;

/// A reqwest client builder, the TLS provider installed first.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder()
}

/// A default reqwest client, the TLS provider installed first.
pub fn client() -> reqwest::Client {
    client_builder().build().unwrap_or_default()
}

/// Makes ring the process's rustls provider, once; a provider already
/// installed (by the bridge) is as good.
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
