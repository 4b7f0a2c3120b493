//! Quotas shared by every replica through Redis (`[quotas]`). A layer of its
//! own below adapters and the gateway: adapters count vendor requests against
//! it, the gateway counts callers. It uses config and telemetry only.

mod shared;
pub mod vendor;
pub mod window;

pub use shared::{Admission, SharedQuota, SharedQuotaError, SharedQuotaStatus, SharedQuotaStore};
pub use vendor::SharedVendorQuota;
