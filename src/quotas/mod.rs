//! Quotas shared by every replica through Redis (`[quotas]`). A layer of its
//! own below adapters and the gateway: adapters count vendor requests against
//! it, the gateway counts callers. It uses config and telemetry only.

/// The start of every quota script: `now`, in microseconds of Redis's own
/// clock (so replicas' clocks never matter; Redis ≥ 5 replicates a script's
/// effects, which makes `TIME` before a write safe).
macro_rules! now_lua {
    () => {
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
"
    };
}

/// The GCRA step quota scripts end with, once `now`, `interval` (µs) and
/// `burst` are set: KEYS[1] holds the key's theoretical arrival time and
/// expires when the quota is full again. `{1, 0}` admitted, `{0, wait_µs}`
/// refused.
macro_rules! gcra_lua {
    () => {
        r"
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allowed_at = new_tat - interval * burst
if now < allowed_at then
  return {0, allowed_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, 0}
"
    };
}

mod shared;
pub mod vendor;
pub mod window;

pub use shared::{Admission, SharedQuota, SharedQuotaError, SharedQuotaStatus, SharedQuotaStore};
pub use vendor::SharedVendorQuota;
