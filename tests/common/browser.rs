//! A real browser for tests of pages people use: Debian's Chromium, headless,
//! driven over the W3C WebDriver protocol by Debian's `chromedriver`
//! (`scripts/test.sh` installs both). Stops when dropped.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// The key W3C WebDriver names an element reference by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    http: reqwest::Client,
    session: String,
    _driver: Child,
}

impl Browser {
    /// Starts chromedriver on a free loopback port and opens a headless session.
    pub async fn start() -> Self {
        let port = super::process::free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver (Debian package chromium-driver; scripts/test.sh installs it)");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not start within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // An element looked for waits up to 10 s to appear: a click that submits
        // a form returns before the page it leads to has loaded (a CI run found
        // the sign-in page still there when the next page's row was looked for).
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "timeouts": { "implicit": 10_000 },
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1400"]
            }
        }}});
        let answer: Value = http
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}"));
        Self {
            http,
            session: format!("{base}/session/{id}"),
            _driver: driver,
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if answer["value"]["error"].is_string() {
            panic!("WebDriver {path}: {}", answer["value"]);
        }
        answer["value"].clone()
    }

    pub async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    /// The element `css` selects (panics if none does).
    pub async fn find(&self, css: &str) -> String {
        let found = self
            .command(
                reqwest::Method::POST,
                "/element",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await;
        found[ELEMENT].as_str().unwrap().to_owned()
    }

    pub async fn click(&self, element: &str) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }

    pub async fn type_into(&self, element: &str, text: &str) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// The rendered text of the element `css` selects.
    pub async fn text(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.command(
            reqwest::Method::GET,
            &format!("/element/{element}/text"),
            None,
        )
        .await
        .as_str()
        .unwrap()
        .to_owned()
    }

    pub async fn url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The page's HTML as the browser holds it now.
    pub async fn source(&self) -> String {
        self.command(reqwest::Method::GET, "/source", None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Saves a PNG of the window to `path`.
    pub async fn screenshot(&self, path: &std::path::Path) {
        use base64::Engine;
        let png = self
            .command(reqwest::Method::GET, "/screenshot", None)
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    pub async fn quit(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}
