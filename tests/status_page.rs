//! The status page for people: refused without the operator's credential
//! (an agent's token included) and from other sites; in a real headless
//! Chromium, it shows a lead the demo's CRM refused, and its retry button
//! delivers it. The browser test keeps screenshots in target/screenshots/.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common;
use common::browser::Browser;
use common::leads::{lead, wait_delivery};
use common::{Bridge, call, connect, ok};
use reqwest::StatusCode;

const OPERATOR: &str = "demo-operator-token";

/// The demo with lead delivery giving up after two quick attempts, and a
/// lead of demo-cdk that its CRM refused (the CRM keeps refusing until told).
async fn demo_with_a_dead_lead() -> (Bridge, common::Client, String) {
    let bridge = common::demo_edited(|toml| {
        toml.replace(
            r#"delivery = { max_attempts = 12, base_delay = "2s", max_delay = "1m""#,
            r#"delivery = { max_attempts = 2, base_delay = "50ms", max_delay = "200ms""#,
        )
    })
    .await;
    bridge.mocks.as_ref().unwrap().crm.fail_every(1);
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let created = ok(&call(&client, "leads.create", lead("demo-cdk", 7)).await);
    let lead_id = created["lead_id"].as_str().unwrap().to_owned();
    wait_delivery(
        &client,
        "demo-cdk",
        &lead_id,
        "failed",
        Duration::from_secs(30),
    )
    .await;
    (bridge, client, lead_id)
}

fn status_url(bridge: &Bridge) -> String {
    format!("http://{}/status", bridge.addr)
}

async fn get(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn only_the_operator_gets_in_and_only_from_the_pages_own_origin() {
    let (bridge, _client, lead_id) = demo_with_a_dead_lead().await;
    let url = status_url(&bridge);
    let operator = format!("Bearer {OPERATOR}");

    // No credential: the sign-in form, 401, and nothing of the bridge's state.
    let anonymous = get(&url, &[]).await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let form = anonymous.text().await.unwrap();
    assert!(form.contains("name=\"token\""), "{form}");
    assert!(!form.contains(&lead_id));

    // An agent's token, however broad, is not the operator's.
    let agent = get(&url, &[("authorization", "Bearer demo-token-group")]).await;
    assert_eq!(agent.status(), StatusCode::UNAUTHORIZED);
    assert!(!agent.text().await.unwrap().contains(&lead_id));

    // A forged or expired sign-in cookie.
    let forged = get(&url, &[("cookie", "dms_bridge_status=99999999999.00")]).await;
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);

    // The operator, as a script would.
    let page = get(&url, &[("authorization", &operator)]).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.unwrap();
    assert!(html.contains(&format!("id=\"lead-{lead_id}\"")), "{html}");
    assert!(
        html.contains("<td>unavailable</td>"),
        "the class of the CRM's last answer (a 500 reads as unavailable) is shown: {html}"
    );
    // No customer data: the lead's name, e-mail and phone are not on the page.
    for pii in ["Whitfield7", "dana7@example.com", "5125550188"] {
        assert!(!html.contains(pii), "{pii} on the status page");
    }

    // Another site's page, even with the credential; a foreign Host.
    let foreign = get(
        &url,
        &[
            ("authorization", &operator),
            ("origin", "https://evil.example"),
        ],
    )
    .await;
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let rebinding = get(
        &url,
        &[("authorization", &operator), ("host", "evil.example")],
    )
    .await;
    assert_eq!(rebinding.status(), StatusCode::FORBIDDEN);

    // A cross-site form post, and a same-site one without the sign-in's form token.
    let http = reqwest::Client::new();
    let retry = format!("{url}/leads/{lead_id}/retry");
    let cross = http
        .post(&retry)
        .header("sec-fetch-site", "cross-site")
        .header("authorization", &operator)
        .form(&[("form_token", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    let jar_cookie = sign_in(&url).await;
    let tokenless = http
        .post(&retry)
        .header("cookie", &jar_cookie)
        .form(&[("form_token", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(tokenless.status(), StatusCode::FORBIDDEN);
    // Nothing was retried by the refused posts.
    let still = get(&url, &[("authorization", &operator)])
        .await
        .text()
        .await
        .unwrap();
    assert!(still.contains(&format!("id=\"lead-{lead_id}\"")));
}

/// Signs in through the form; the `Cookie` header value to send after.
async fn sign_in(url: &str) -> String {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let wrong = http
        .post(format!("{url}/sign-in"))
        .form(&[("token", "demo-token-cdk")])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let signed = http
        .post(format!("{url}/sign-in"))
        .form(&[("token", OPERATOR)])
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), StatusCode::SEE_OTHER);
    let set = signed.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    set.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn without_a_status_table_there_is_no_page() {
    let bridge = common::with_config(&common::small_config("", None)).await;
    let page = get(&status_url(&bridge), &[]).await;
    // Whatever answers the path (the MCP front door asks for a token), it is no page.
    assert_ne!(page.status(), StatusCode::OK);
    assert!(!page.text().await.unwrap().contains("name=\"token\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_the_page_shows_the_failed_lead_and_its_retry_delivers_it() {
    let (bridge, client, lead_id) = demo_with_a_dead_lead().await;
    let url = status_url(&bridge);
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    let browser = Browser::start().await;

    browser.goto(&url).await;
    let token = browser.find("input[name=token]").await;
    browser.type_into(&token, OPERATOR).await;
    let submit = browser.find("button[type=submit]").await;
    browser.click(&submit).await;

    let row = format!("#lead-{lead_id}");
    let shown = browser.text(&row).await;
    assert!(
        shown.contains("dead") && shown.contains("unavailable"),
        "{shown}"
    );
    assert!(browser.text("#outbox-totals").await.contains("dead 1"));
    browser
        .screenshot(&shots.join("status-page-failed-lead.png"))
        .await;

    // The CRM is back; the operator retries from the page and confirms.
    bridge.mocks.as_ref().unwrap().crm.fail_every(0);
    let retry = browser.find(&format!("{row} a.retry")).await;
    browser.click(&retry).await;
    assert!(
        browser
            .url()
            .await
            .ends_with(&format!("/leads/{lead_id}/retry"))
    );
    let confirm = browser.find("#confirm").await;
    browser.click(&confirm).await;
    let notice = browser.text("#notice").await;
    assert!(notice.contains("queued for delivery again"), "{notice}");

    wait_delivery(
        &client,
        "demo-cdk",
        &lead_id,
        "delivered",
        Duration::from_secs(30),
    )
    .await;
    browser.goto(&url).await;
    let html = browser.source().await;
    assert!(
        !html.contains(&format!("id=\"lead-{lead_id}\"")),
        "the lead is no longer in trouble"
    );
    assert!(browser.text("#outbox-totals").await.contains("dead 0"));
    browser
        .screenshot(&shots.join("status-page-after-retry.png"))
        .await;
    browser.quit().await;
}

#[tokio::test]
async fn a_webhook_dead_letter_retried_from_the_page_is_delivered_once() {
    let bridge = common::demo_edited(|toml| {
        toml.replace(
            "# types = [\"lead.created\", \"appointment.booked\"]",
            "types = [\"lead.created\"]",
        )
        .replace(
            "max_attempts = 12\nbase_delay = \"2s\"\nmax_delay = \"1m\"",
            "max_attempts = 1\nbase_delay = \"20ms\"\nmax_delay = \"50ms\"",
        )
    })
    .await;
    let hooks = &bridge.mocks.as_ref().unwrap().webhooks;
    hooks.fail_every(1);
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    ok(&call(&client, "leads.create", lead("demo-cdk", 8)).await);
    let store = bridge.gateway.store();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let letter = loop {
        let (letters, _) = dms_bridge::store::operator::dead_letters(store, 10)
            .await
            .unwrap();
        if let Some(letter) = letters.into_iter().next() {
            break letter;
        }
        assert!(std::time::Instant::now() < deadline, "no dead letter");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (letter.endpoint.as_str(), letter.dealership.as_str()),
        ("demo-receiver", "demo-cdk")
    );
    let url = status_url(&bridge);
    let operator = format!("Bearer {OPERATOR}");
    let retry = format!(
        "/status/webhooks/demo-receiver/demo-cdk/{}/retry",
        letter.sequence
    );
    let html = get(&url, &[("authorization", &operator)])
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains(&format!("href=\"{retry}\"")), "{html}");

    hooks.fail_every(0);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let post = || async {
        let answer = http
            .post(format!("http://{}{retry}", bridge.addr))
            .header("authorization", &operator)
            .form(&[("form_token", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        answer.headers()["location"].to_str().unwrap().to_owned()
    };
    assert!(post().await.contains("done=redelivered"));
    let (left, total) = dms_bridge::store::operator::dead_letters(store, 10)
        .await
        .unwrap();
    assert!(left.is_empty() && total == 0, "{left:?}");
    let event = dms_bridge::store::events::after(store, "demo-cdk", letter.sequence - 1, 1)
        .await
        .unwrap()
        .remove(0)
        .event;
    let taken: Vec<_> = hooks
        .deliveries()
        .into_iter()
        .filter(|d| d.id == event.id)
        .collect();
    assert_eq!(taken.len(), 1, "the receiver took it once: {taken:?}");
    // A second retry finds no dead letter and sends nothing.
    assert!(post().await.contains("done=gone"));
    assert_eq!(
        hooks
            .deliveries()
            .iter()
            .filter(|d| d.id == event.id)
            .count(),
        1
    );
}

/// On the real binary, whose log this test reads: each refusal is logged,
/// an agent's token by the agent's name (never the token).
#[tokio::test]
async fn refusals_are_logged_and_an_agents_token_is_named() {
    use common::config::{BridgeConfig, Dealership, Token, quoted};
    let dir = tempfile::tempdir().unwrap();
    let addr = common::process::free_addr();
    let toml = BridgeConfig::new()
        .section("server", &format!("listen = {}", quoted(&addr.to_string())))
        .section(
            "status",
            &format!("operator_token = {{ value = {} }}", quoted(OPERATOR)),
        )
        // Not the default file store in the working directory.
        .section("store", "url = \"sqlite::memory:\"")
        .dealership(Dealership::acme())
        .token(Token::new(
            "acme-bot",
            "acme-bot-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
        .render();
    let path = dir.path().join("bridge.toml");
    std::fs::write(&path, toml).unwrap();
    let log_path = dir.path().join("bridge.log");
    let env = [("DMS_BRIDGE_LOG", "warn")];
    let _bridge = common::process::start_bridge_logging(&path, addr, &env, &log_path).await;
    let url = format!("http://{addr}/status");
    let agent = get(&url, &[("authorization", "Bearer acme-bot-token")]).await;
    assert_eq!(agent.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(get(&url, &[]).await.status(), StatusCode::UNAUTHORIZED);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let log = loop {
        let log = std::fs::read_to_string(&log_path).unwrap();
        if log.matches("Refused a status page request").count() >= 2 {
            break log;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "refusals not logged:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        log.contains("with an agent's token") && log.contains("principal=acme-bot"),
        "{log}"
    );
    assert!(log.contains("no operator credential"), "{log}");
    assert!(
        !log.contains("acme-bot-token"),
        "a token reached the log:\n{log}"
    );
}
