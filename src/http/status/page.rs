//! The status page's HTML: server-rendered, no script, one inline style
//! sheet. Every value from the store or the config is escaped. Leads appear
//! by id only; no customer data is shown.

use std::fmt::Write;

use chrono::{DateTime, Utc};

use super::view::{LIST_ROWS, Snapshot};

/// Escapes text for HTML element content and quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes text for one path segment of a link.
pub fn seg(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.bad{color:#a00;font-weight:600}.warn{color:#a60}.ok{color:#070}\
.notice{background:#eef6ff;border:1px solid #9bd;padding:.5em 1em}form.inline{display:inline}\
h1 small{font-weight:normal;color:#666;font-size:60%}";

/// A whole page around `body`.
pub fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        esc(title)
    )
}

fn when(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        None => "never".into(),
        Some(t) => {
            let ago = (now - t).num_seconds().max(0);
            let ago = match ago {
                0..60 => format!("{ago} s ago"),
                60..3600 => format!("{} min ago", ago / 60),
                _ => format!("{} h ago", ago / 3600),
            };
            format!("<time datetime=\"{}\">{ago}</time>", t.to_rfc3339())
        }
    }
}

/// The sign-in form (`message`: why it is shown again).
pub fn sign_in(path: &str, message: Option<&str>) -> String {
    let message = message
        .map(|m| format!("<p class=\"bad\">{}</p>", esc(m)))
        .unwrap_or_default();
    document(
        "dms-bridge status: sign in",
        &format!(
            "<h1>dms-bridge status</h1>{message}\
             <form method=\"post\" action=\"{}/sign-in\">\
             <label>Operator token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label> \
             <button type=\"submit\">Sign in</button></form>\
             <p>The operator token is <code>[status] operator_token</code> in the bridge's config. Agent tokens do not open this page.</p>",
            esc(path)
        ),
    )
}

/// A page asking to confirm `what` before it is done by posting to `action`.
pub fn confirm(what: &str, action: &str, form_token: &str, back: &str) -> String {
    document(
        "dms-bridge status: confirm",
        &format!(
            "<h1>Confirm</h1><p>{}</p>\
             <form method=\"post\" action=\"{}\"><input type=\"hidden\" name=\"form_token\" value=\"{}\">\
             <button type=\"submit\" id=\"confirm\">Yes, retry now</button> <a href=\"{}\">Cancel</a></form>",
            esc(what),
            esc(action),
            esc(form_token),
            esc(back)
        ),
    )
}

/// The status page itself.
pub fn status(s: &Snapshot, path: &str, form_token: &str, notice: Option<&str>) -> String {
    let mut b = String::with_capacity(64 * 1024);
    let now = s.taken_at;
    let _ = write!(
        b,
        "<h1>dms-bridge status <small>v{} · toolset {} · {}</small></h1>\
         <form class=\"inline\" method=\"post\" action=\"{p}/sign-out\"><input type=\"hidden\" name=\"form_token\" value=\"{t}\"><button type=\"submit\">Sign out</button></form> \
         <a href=\"{p}\">Refresh</a>",
        env!("CARGO_PKG_VERSION"),
        crate::tools::TOOLSET_VERSION,
        now.format("%Y-%m-%d %H:%M:%S UTC"),
        p = esc(path),
        t = esc(form_token),
    );
    if let Some(n) = notice {
        let _ = write!(b, "<p class=\"notice\" id=\"notice\">{}</p>", esc(n));
    }
    // What may need a person's hand first.
    outbox(&mut b, s, path);
    webhooks(&mut b, s, path);
    upstreams(&mut b, s);
    inventory(&mut b, s);
    outcomes(&mut b, s);
    document("dms-bridge status", &b)
}

fn upstreams(b: &mut String, s: &Snapshot) {
    b.push_str("<h2>Dealerships and upstreams</h2><table id=\"upstreams\"><tr><th>Dealership</th><th>Domain</th><th>Upstream</th><th>Circuit</th><th>Last success</th><th>Last error</th><th>Quota use</th></tr>");
    for d in &s.dealerships {
        for r in &d.routes {
            let circuit = r.circuit.as_str();
            let class = if circuit == "closed" { "ok" } else { "bad" };
            let error = r.last_error.map_or_else(
                || "none".to_owned(),
                |(at, c)| format!("{} ({})", esc(c), when(Some(at), s.taken_at)),
            );
            let quota = r.quota.map_or_else(
                || "no quota set".to_owned(),
                |q| {
                    format!(
                        "{} of {} per {}",
                        q.used,
                        q.requests,
                        humantime::format_duration(q.per)
                    )
                },
            );
            let _ = write!(
                b,
                "<tr><td>{} <small>{}</small></td><td>{}</td><td>{}</td><td class=\"{class}\">{circuit}</td><td>{}</td><td>{error}</td><td>{quota}</td></tr>",
                esc(&d.name),
                esc(&d.id),
                r.domain,
                esc(&r.upstream),
                when(r.last_success, s.taken_at),
            );
        }
    }
    b.push_str("</table>");
}

fn inventory(b: &mut String, s: &Snapshot) {
    b.push_str("<h2>Inventory freshness</h2>");
    if s.inventory.is_empty() {
        b.push_str("<p>No dealership's inventory is mirrored.</p>");
        return;
    }
    b.push_str("<table id=\"inventory\"><tr><th>Dealership</th><th>Units listed</th><th>Last read</th><th>State</th><th>Last error</th></tr>");
    for m in &s.inventory {
        let state = match (m.stale, m.held_back_removals) {
            (_, Some(n)) => format!("<span class=\"warn\">{n} removals held back</span>"),
            (true, None) => "<span class=\"bad\">stale</span>".to_owned(),
            (false, None) => "<span class=\"ok\">fresh</span>".to_owned(),
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{state}</td><td>{}</td></tr>",
            esc(&m.dealership),
            m.listed,
            when(m.last_success_at, s.taken_at),
            m.last_error.unwrap_or("none"),
        );
    }
    b.push_str("</table>");
}

fn outbox(b: &mut String, s: &Snapshot, path: &str) {
    let _ = write!(
        b,
        "<h2>Lead outbox</h2><p id=\"outbox-totals\">queued {}, failing {}, dead {}</p>",
        s.outbox_total("queued"),
        s.outbox_total("failing"),
        s.outbox_total("dead"),
    );
    if !s.outbox.is_empty() {
        b.push_str(
            "<table><tr><th>Dealership</th><th>CRM</th><th>Standing</th><th>Leads</th></tr>",
        );
        for c in &s.outbox {
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.dealership),
                esc(&c.upstream),
                esc(&c.standing),
                c.count
            );
        }
        b.push_str("</table>");
    }
    if s.troubled.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<h3>Deliveries in trouble</h3><p>The dead first, latest attempt first; at most {LIST_ROWS} shown.</p>\
         <table id=\"troubled\"><tr><th>Lead</th><th>Dealership</th><th>CRM</th><th>Standing</th><th>Attempts</th><th>CRM's last answer</th><th>Last attempt</th><th>Next attempt</th><th></th></tr>"
    );
    for t in &s.troubled {
        let retry = if t.standing == "dead" {
            format!(
                "<a class=\"retry\" href=\"{}/leads/{}/retry\">Retry…</a>",
                esc(path),
                esc(&seg(&t.lead_id))
            )
        } else {
            "retried automatically".to_owned()
        };
        let _ = write!(
            b,
            "<tr id=\"lead-{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{retry}</td></tr>",
            esc(&t.lead_id),
            esc(&t.lead_id),
            esc(&t.dealership),
            esc(&t.upstream),
            if t.standing == "dead" { "bad" } else { "warn" },
            esc(&t.standing),
            t.attempts,
            esc(t.last_error.as_deref().unwrap_or("none")),
            esc(t.last_attempt_at.as_deref().unwrap_or("")),
            if t.standing == "dead" {
                ""
            } else {
                t.next_attempt_at.as_deref().unwrap_or("")
            },
        );
    }
    b.push_str("</table>");
}

fn webhooks(b: &mut String, s: &Snapshot, path: &str) {
    b.push_str("<h2>Webhooks</h2>");
    if s.webhooks.is_empty() {
        b.push_str("<p>No webhook endpoint is configured.</p>");
        return;
    }
    b.push_str("<table id=\"webhooks\"><tr><th>Endpoint</th><th>Undelivered</th><th>Dead letters</th><th>Last error</th></tr>");
    for w in &s.webhooks {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
            esc(&w.endpoint),
            w.undelivered,
            if w.dead_letters == 0 { "ok" } else { "bad" },
            w.dead_letters,
            esc(w.last_error.as_deref().unwrap_or("none")),
        );
    }
    b.push_str("</table>");
    if s.dead_letters.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<h3>Dead letters</h3><p>{} in all, the newest {} shown.</p><table id=\"dead-letters\"><tr><th>Endpoint</th><th>Dealership</th><th>Event</th><th>Attempts</th><th>Last error</th><th>Given up</th><th></th></tr>",
        s.dead_letter_total,
        s.dead_letters.len()
    );
    for d in &s.dead_letters {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a class=\"retry\" href=\"{}/webhooks/{}/{}/{}/retry\">Retry…</a></td></tr>",
            esc(&d.endpoint),
            esc(&d.dealership),
            d.sequence,
            d.attempts,
            esc(&d.last_error),
            esc(&d.dead_at),
            esc(path),
            esc(&seg(&d.endpoint)),
            esc(&seg(&d.dealership)),
            d.sequence,
        );
    }
    b.push_str("</table>");
}

fn outcomes(b: &mut String, s: &Snapshot) {
    b.push_str("<h2>Tool calls in the last hour</h2>");
    if s.outcomes.is_empty() {
        b.push_str("<p>None recorded (the audit log is off, or no call came).</p>");
        return;
    }
    b.push_str("<table id=\"outcomes\"><tr><th>Tool</th><th>Dealership</th><th>Outcome</th><th>Calls</th><th>Latest</th></tr>");
    for o in &s.outcomes {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&o.tool),
            esc(o.dealership.as_deref().unwrap_or("")),
            if o.outcome == "ok" { "ok" } else { "bad" },
            esc(&o.outcome),
            o.calls,
            esc(&o.last_at),
        );
    }
    b.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(seg("a b/c"), "a%20b%2Fc");
    }
}
