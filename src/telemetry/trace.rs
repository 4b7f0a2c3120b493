//! W3C trace context. Each call has a trace id, taken from the caller's
//! `traceparent` (the MCP request's `_meta`, else the HTTP header) or made up;
//! it tags the call's logs and audit record and is sent on to upstreams.

use std::fmt;

tokio::task_local! {
    /// The trace of the call being served, for upstream requests made inside it.
    pub static CURRENT: TraceContext;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// 32 lower-case hex digits.
    pub trace_id: String,
    /// The caller's span (16 hex digits), when the caller sent a `traceparent`.
    pub parent_id: Option<String>,
    pub sampled: bool,
}

impl TraceContext {
    /// Parses `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
    pub fn from_traceparent(header: &str) -> Option<Self> {
        let parts: Vec<&str> = header.trim().split('-').collect();
        let [version, trace_id, parent, flags] = parts.as_slice() else {
            return None;
        };
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        };
        let valid = hex(version, 2)
            && *version != "ff"
            && hex(trace_id, 32)
            && hex(parent, 16)
            && hex(flags, 2);
        let nonzero = trace_id.chars().any(|c| c != '0') && parent.chars().any(|c| c != '0');
        (valid && nonzero).then(|| Self {
            trace_id: (*trace_id).to_owned(),
            parent_id: Some((*parent).to_owned()),
            sampled: u8::from_str_radix(flags, 16).is_ok_and(|f| f & 1 == 1),
        })
    }

    pub fn generate() -> Self {
        Self {
            // A trace id must be unique, not secret: the thread-local generator
            // is enough and spares a getrandom system call per tool call.
            trace_id: format!("{:032x}", fastrand::u128(1..)),
            parent_id: None,
            sampled: false,
        }
    }

    /// A `traceparent` for an outgoing request: same trace, a new span id.
    pub fn child_header(&self) -> String {
        let span = format!("{:016x}", fastrand::u64(1..));
        format!(
            "00-{}-{span}-{}",
            self.trace_id,
            if self.sampled { "01" } else { "00" }
        )
    }

    /// The `traceparent` to send upstream from inside a call, if any
    /// (`telemetry::otlp::outgoing_traceparent` prefers the exporting span).
    pub fn current_header() -> Option<String> {
        CURRENT.try_with(|t| t.child_header()).ok()
    }
}

impl fmt::Display for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.trace_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_traceparents_only() {
        let t = TraceContext::from_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .unwrap();
        assert_eq!(t.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(t.sampled);
        assert!(
            t.child_header()
                .starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-")
        );
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "garbage",
        ] {
            assert!(TraceContext::from_traceparent(bad).is_none(), "{bad}");
        }
    }
}
