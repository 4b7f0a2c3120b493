#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dms-bridge check --config FILE`, run as a real process: every problem is
//! listed with its path and the exit code is 2, or it prints OK and exits 0,
//! without touching the network. Plus direct `from_toml_str` assertions on the
//! order and uniqueness of reported problems.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dms_bridge::config::{ConfigError, from_toml_str};

const BIN: &str = env!("CARGO_BIN_EXE_dms-bridge");
/// A `check` that takes longer than this is waiting on something it should
/// not (a request through a proxy on a closed port, a name that never resolves).
const CHECK_BUDGET: Duration = Duration::from_secs(60);

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Outcome {
    /// The `  - path: message` lines of a failed check, in order.
    fn problems(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter_map(|l| l.strip_prefix("  - "))
            .collect()
    }
}

/// Runs `dms-bridge check --config <file holding toml>` with extra environment.
fn check_with_env(toml: &str, env: &[(&str, &str)]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bridge.toml");
    std::fs::write(&path, toml).unwrap();
    run_check(&path, env)
}

fn check(toml: &str) -> Outcome {
    check_with_env(toml, &[])
}

fn run_check(path: &Path, env: &[(&str, &str)]) -> Outcome {
    let started = Instant::now();
    let mut command = Command::new(BIN);
    command
        .args(["check", "--config"])
        .arg(path)
        .env_remove("SOME_UNSET_VAR_XYZ")
        .env_remove("OTHER_UNSET_VAR_XYZ")
        .env_remove("FEED_KEY_UNSET_XYZ")
        .env("DMS_BRIDGE_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("spawn dms-bridge");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > CHECK_BUDGET {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`dms-bridge check` did not finish within {CHECK_BUDGET:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Outcome {
        code: status.code().expect("exited normally"),
        stdout,
        stderr,
    }
}

const ADDRESS: &str = r#"address = { line1 = "1 Main St", city = "Springfield", region = "IL", postal_code = "62701", country = "US" }"#;

/// A small valid config with a feed upstream whose URL nobody listens on.
fn valid_config() -> String {
    format!(
        r#"
[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
{ADDRESS}
routes = {{ inventory = "feed" }}

[upstreams.feed]
kind = "feed"
url = "http://127.0.0.1:1/inventory.csv"
mapping = "homenet-csv"

[[tokens]]
name = "acme"
secret = {{ value = "acme-token" }}
dealerships = ["acme"]
scopes = ["amcp:inventory:read"]
"#
    )
}

/// The embedded demo template made concrete.
fn demo_config(upstream: &str) -> String {
    dms_bridge::cli::demo::TEMPLATE
        .replace("{cdk_url}", upstream)
        .replace("{feed_url}", upstream)
        .replace("{crm_url}", upstream)
        .replace("{blackbook_url}", upstream)
        .replace("{jdpower_url}", upstream)
        .replace("{reynolds_url}", upstream)
        .replace("{activix_url}", upstream)
        .replace("{xtime_url}", upstream)
        .replace("{tekion_url}", upstream)
        .replace("{opentrack_url}", upstream)
        .replace("{webhook_url}", upstream)
        .replace("{smtp_port}", "2525")
        .replace("{listen}", "127.0.0.1:8787")
}

/// Asserts a failed check: exit 2, nothing on stdout, and exactly `expected`
/// as the `(path, fragment of message)` of each listed problem, in order.
fn assert_problems(outcome: &Outcome, expected: &[(&str, &str)]) {
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(!outcome.stdout.contains("OK"), "{outcome:?}");
    assert!(
        outcome.stderr.contains(&format!(
            "{} problem(s) in the configuration",
            expected.len()
        )),
        "expected {} problems: {outcome:?}",
        expected.len()
    );
    let problems = outcome.problems();
    assert_eq!(problems.len(), expected.len(), "{outcome:?}");
    for (line, (path, fragment)) in problems.iter().zip(expected) {
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}: ")
        };
        assert!(
            line.starts_with(&prefix),
            "{line:?} should be at {path:?}; {outcome:?}"
        );
        assert!(
            line.contains(fragment),
            "{line:?} should mention {fragment:?}; {outcome:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------

/// Asserts a passed check whose summary counts what `counts` says.
fn assert_ok(outcome: &Outcome, counts: &str) {
    assert_eq!(outcome.code, 0, "{outcome:?}");
    assert!(
        outcome.stdout.contains(&format!("OK ({counts})")),
        "{outcome:?}"
    );
    assert!(!outcome.stderr.contains("problem"), "{outcome:?}");
}

#[test]
fn the_demo_template_is_ok() {
    let outcome = check(&demo_config("http://127.0.0.1:1"));
    assert_ok(&outcome, "6 dealership(s), 13 upstream(s), 2 token(s)");
}

/// bench/run.sh serves this file for its uncached runs; a config change must not break it.
#[test]
fn the_benchmark_config_is_ok() {
    let toml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/uncached.toml"))
        .unwrap()
        .replace("{listen}", "127.0.0.1:8787")
        .replace("{cdk_url}", "http://127.0.0.1:1")
        .replace("{store}", "/tmp/dms-bridge-bench.db");
    assert_ok(&check(&toml), "1 dealership(s), 1 upstream(s), 1 token(s)");
}

#[test]
fn a_small_valid_config_is_ok() {
    let outcome = check(&valid_config());
    assert_eq!(outcome.code, 0, "{outcome:?}");
    assert!(
        outcome
            .stdout
            .contains("OK (1 dealership(s), 1 upstream(s), 1 token(s))"),
        "{outcome:?}"
    );
}

#[test]
fn check_needs_no_network() {
    // Upstreams on a closed port and on names that can never resolve, and every
    // proxy pointing at the closed port: any request would fail or hang.
    let proxies = [
        ("HTTP_PROXY", "http://127.0.0.1:1"),
        ("HTTPS_PROXY", "http://127.0.0.1:1"),
        ("ALL_PROXY", "http://127.0.0.1:1"),
        ("http_proxy", "http://127.0.0.1:1"),
        ("https_proxy", "http://127.0.0.1:1"),
        ("all_proxy", "http://127.0.0.1:1"),
    ];
    for upstream in ["http://127.0.0.1:1", "https://dms.bridge-test.invalid"] {
        let outcome = check_with_env(&demo_config(upstream), &proxies);
        assert_eq!(outcome.code, 0, "{upstream}: {outcome:?}");
        assert!(
            outcome.stdout.contains("OK (6 dealership(s)"),
            "{upstream}: {outcome:?}"
        );
    }
}

#[test]
fn structural_problems_are_all_listed_with_their_paths() {
    let toml = format!(
        r#"
colour = "red"

[limits]
max_limit = "lots"

[[dealerships]]
id = "acme"
name = "Acme Motors"
nickname = "Acme"
{ADDRESS}

[[tokens]]
name = "acme"
secret = {{ value = "acme-token" }}
dealerships = ["acme"]
scopes = ["amcp:inventory:read"]
"#
    );
    let outcome = check(&toml);
    assert_problems(
        &outcome,
        &[
            ("", "unknown key(s): colour"),
            ("dealerships[0]", "timezone"),
            ("dealerships[0]", "nickname"),
            ("limits.max_limit", "expected a whole number"),
        ],
    );
}

/// A CDK upstream whose inline client secret must never be printed.
const INLINE_SECRET: &str = "SUPER-SECRET-VALUE-123";

fn upstream_config(upstream_lines: &str, limits: &str) -> String {
    format!(
        r#"
[limits]
{limits}

[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
{ADDRESS}
routes = {{ inventory = "cdk" }}

[upstreams.cdk]
kind = "rest"
profile = "cdk-fortellis"
base_url = "https://api.example.com/cdk"
token_url = "https://api.example.com/oauth2/token"
client_id = {{ value = "id" }}
client_secret = {{ value = "{INLINE_SECRET}" }}
vars = {{ subscription_id = "sub-1" }}
{upstream_lines}

[[tokens]]
name = "acme"
secret = {{ value = "acme-token" }}
dealerships = ["acme"]
scopes = ["amcp:inventory:read"]
"#
    )
}

fn assert_no_secret(outcome: &Outcome) {
    for text in [&outcome.stdout, &outcome.stderr] {
        assert!(
            !text.contains(INLINE_SECRET),
            "a secret was printed: {outcome:?}"
        );
        assert!(
            !text.contains("acme-token"),
            "a token was printed: {outcome:?}"
        );
    }
}

/// An outside audit's finding: a typo, a wrong type or a wrong `kind` inside
/// an upstream dumped the whole table, inline client secret included, with
/// "not valid under any of the schemas listed in the 'oneOf' keyword".
#[test]
fn a_mistake_in_an_upstream_is_named_by_path_and_prints_no_secret() {
    let typo = check(&upstream_config(r#"refresh_intervall = "10m""#, ""));
    assert_problems(
        &typo,
        &[("upstreams.cdk", "unknown key(s): refresh_intervall")],
    );
    assert_no_secret(&typo);

    let wrong_type = check(&upstream_config("timeout = 30", ""));
    assert_problems(
        &wrong_type,
        &[("upstreams.cdk.timeout", "expected a string")],
    );
    assert_no_secret(&wrong_type);

    let wrong_kind =
        check(&upstream_config("", "").replace(r#"kind = "rest""#, r#"kind = "restful""#));
    assert_problems(
        &wrong_kind,
        &[(
            "upstreams.cdk.kind",
            "the kinds are adf_email, adf_http, feed, rest, soap",
        )],
    );
    assert_no_secret(&wrong_kind);

    let secret_of_wrong_type = check(&upstream_config("", "").replace(
        &format!(r#"{{ value = "{INLINE_SECRET}" }}"#),
        "12345678901",
    ));
    assert_eq!(secret_of_wrong_type.code, 2, "{secret_of_wrong_type:?}");
    assert!(
        secret_of_wrong_type.problems()[0].starts_with("upstreams.cdk.client_secret"),
        "{secret_of_wrong_type:?}"
    );
    assert!(
        !secret_of_wrong_type.stderr.contains("12345678901"),
        "{secret_of_wrong_type:?}"
    );
}

#[test]
fn a_duration_that_does_not_read_is_named_by_path_without_its_value() {
    let outcome = check(&upstream_config("", r#"call_timeout = "thirty""#));
    assert_problems(&outcome, &[("limits.call_timeout", "expected a duration")]);
    assert!(!outcome.stderr.contains("thirty"), "{outcome:?}");
    assert_no_secret(&outcome);
}

#[test]
fn a_static_token_may_not_take_a_signed_in_subjects_name() {
    let outcome = check(&valid_config().replace(r#"name = "acme""#, r#"name = "oauth:alice""#));
    assert_problems(
        &outcome,
        &[("tokens[0].name", "must not start with \"oauth:\"")],
    );
}

#[test]
fn the_status_pages_credential_is_no_agents_and_its_path_no_routes() {
    let with_status = |table: &str| format!("{}\n[status]\n{table}\n", valid_config());
    // An agent's secret as the operator's: the page would open to the agent.
    let shared = check(&with_status(r#"operator_token = { value = "acme-token" }"#));
    assert_problems(
        &shared,
        &[("status.operator_token", "is the secret of tokens[0]")],
    );
    assert_no_secret(&shared);
    let short = check(&with_status(r#"operator_token = { value = "short" }"#));
    assert_problems(
        &short,
        &[("status.operator_token", "at least 16 characters")],
    );
    // A missing secret file is named; nothing starts.
    let missing = check(&with_status(
        r#"operator_token = { file = "/nonexistent/operator" }"#,
    ));
    assert_problems(
        &missing,
        &[("status.operator_token", "cannot read secret file")],
    );
    let shadowing = check(&with_status(
        "operator_token = { value = \"0123456789abcdef-operator\" }\npath = \"/metrics\"\nsession = \"10s\"",
    ));
    assert_problems(
        &shadowing,
        &[
            ("status.path", "a path the bridge serves already"),
            ("status.session", "between 1m and 7d"),
        ],
    );
    let fine = check(&with_status(
        r#"operator_token = { value = "0123456789abcdef-operator" }"#,
    ));
    assert_ok(&fine, "1 dealership(s), 1 upstream(s), 1 token(s)");
}

/// Eight semantic problems, none of them structural in the operator's eyes.
fn semantic_config() -> String {
    format!(
        r#"
[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "Mars/Olympus_Mons"
{ADDRESS}
phones = [{{ name = "sales", number = "555-0100" }}]
routes = {{ inventory = "missing-upstream" }}

[[dealerships]]
id = "acme"
name = "Acme Motors East"
timezone = "America/New_York"
{ADDRESS}
routes = {{ inventory = "cdk" }}

[upstreams.cdk]
kind = "rest"
profile = "reynolds-magic"
base_url = "ftp://dms.example.com/cdk"

[[tokens]]
name = "acme"
secret = {{ value = "acme-token" }}
dealerships = ["acme", "ghost"]
scopes = ["amcp:inventory:read", "amcp:inventory:delete"]
"#
    )
}

const SEMANTIC_PROBLEMS: [(&str, &str); 8] = [
    ("dealerships[0].timezone", "Mars/Olympus_Mons"),
    ("dealerships[0].phones[0].number", ""),
    ("dealerships[0].routes.inventory", "missing-upstream"),
    ("dealerships[1].id", "acme"),
    ("upstreams.cdk.base_url", "is not an http(s) URL"),
    ("upstreams.cdk.profile", "reynolds-magic"),
    ("tokens[0].dealerships[1]", "ghost"),
    ("tokens[0].scopes[1]", "amcp:inventory:delete"),
];

#[test]
fn semantic_problems_are_all_listed_with_their_paths() {
    let outcome = check(&semantic_config());
    assert_problems(&outcome, &SEMANTIC_PROBLEMS);
}

#[test]
fn semantic_problems_without_the_phone_are_all_listed() {
    // The same config with a valid phone number: the other seven problems.
    let outcome = check(&semantic_config().replace("555-0100", "+12175550100"));
    let expected: Vec<(&str, &str)> = SEMANTIC_PROBLEMS
        .iter()
        .copied()
        .filter(|(p, _)| !p.contains("phones"))
        .collect();
    assert_problems(&outcome, &expected);
}

#[test]
fn an_unset_secret_variable_is_named_with_its_path() {
    let toml = valid_config().replace(
        r#"{ value = "acme-token" }"#,
        r#"{ env = "SOME_UNSET_VAR_XYZ" }"#,
    );
    assert!(toml.contains("SOME_UNSET_VAR_XYZ"));
    let outcome = check(&toml);
    assert_problems(&outcome, &[("tokens[0].secret", "SOME_UNSET_VAR_XYZ")]);
}

#[test]
fn every_unreadable_secret_is_listed_at_once() {
    let toml = format!(
        r#"{}
[[tokens]]
name = "other"
secret = {{ env = "OTHER_UNSET_VAR_XYZ" }}
dealerships = ["acme"]
scopes = ["amcp:inventory:read"]
"#,
        valid_config()
            .replace(r#"{ value = "acme-token" }"#, r#"{ env = "SOME_UNSET_VAR_XYZ" }"#)
            .replace(
                r#"mapping = "homenet-csv""#,
                "mapping = \"homenet-csv\"\nheaders = { X-Api-Key = \"{secrets.api_key}\" }\nsecrets = { api_key = { env = \"FEED_KEY_UNSET_XYZ\" } }"
            )
    );
    let outcome = check(&toml);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    for (path, variable) in [
        ("upstreams.feed", "FEED_KEY_UNSET_XYZ"),
        ("tokens[0].secret", "SOME_UNSET_VAR_XYZ"),
        ("tokens[1].secret", "OTHER_UNSET_VAR_XYZ"),
    ] {
        assert!(
            outcome
                .problems()
                .iter()
                .any(|l| l.starts_with(path) && l.contains(variable)),
            "{variable} at {path}: {outcome:?}"
        );
    }
    // The variable is set: the same file checks OK.
    let fixed = check_with_env(
        &toml,
        &[
            ("SOME_UNSET_VAR_XYZ", "t0"),
            ("OTHER_UNSET_VAR_XYZ", "t1"),
            ("FEED_KEY_UNSET_XYZ", "k"),
        ],
    );
    assert_eq!(fixed.code, 0, "{fixed:?}");
}

#[test]
fn a_toml_syntax_error_gives_line_and_column() {
    let toml = "[limits]\ndefault_limit = 20\nmax_limit = = 5\n";
    let outcome = check(toml);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert_eq!(outcome.problems().len(), 1, "{outcome:?}");
    // The second `=` on line 3.
    assert!(
        outcome.problems()[0].starts_with("line 3, column 13: "),
        "{outcome:?}"
    );
}

#[test]
fn a_missing_file_is_reported_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_check(&dir.path().join("nope.toml"), &[]);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(outcome.stderr.contains("nope.toml"), "{outcome:?}");
}

// ---------------------------------------------------------------------------
// from_toml_str directly
// ---------------------------------------------------------------------------

fn errors(toml: &str) -> Vec<ConfigError> {
    match from_toml_str(toml) {
        Ok(_) => panic!("expected problems"),
        Err(e) => e.0,
    }
}

fn paths(errors: &[ConfigError]) -> Vec<&str> {
    errors.iter().map(|e| e.path.as_str()).collect()
}

/// `dealerships[10].id` → `[Key("dealerships"), Index(10), Key("id")]`, for document order.
fn path_key(path: &str) -> Vec<(String, usize)> {
    path.split(['.', '['])
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_suffix(']') {
            Some(i) => (String::new(), i.parse().unwrap()),
            None => (s.to_owned(), 0),
        })
        .collect()
}

#[test]
fn structural_problems_are_sorted_by_path_and_unique() {
    let toml = format!(
        r#"
zzz = 1
aaa = 2

[server]
bogus = true
max_request_bytes = "big"

[[dealerships]]
id = "a"
name = "A"
timezone = "America/Chicago"
extra = 1
{ADDRESS}

[[dealerships]]
id = "b"
name = "B"
timezone = 5
{ADDRESS}

[[tokens]]
name = "t"
secret = {{ value = "s" }}
dealerships = ["a"]
scopes = "amcp:inventory:read"
"#
    );
    let errors = errors(&toml);
    assert_eq!(
        paths(&errors),
        [
            "",
            "dealerships[0]",
            "dealerships[1].timezone",
            "server",
            "server.max_request_bytes",
            "tokens[0].scopes"
        ],
        "{errors:#?}"
    );
    assert!(
        errors[0].message.contains("aaa") && errors[0].message.contains("zzz"),
        "{errors:#?}"
    );
    for pair in errors.windows(2) {
        assert_ne!(pair[0], pair[1], "no problem is reported twice");
    }
    // Stable: the same text gives the same list.
    assert_eq!(errors, self::errors(&toml));
}

#[test]
fn structural_problems_follow_document_order_past_ten_dealerships() {
    let toml: String = (0..12)
        .map(|i| {
            let extra = if i == 2 || i == 10 { "bogus = 1\n" } else { "" };
            format!("[[dealerships]]\nid = \"d{i}\"\nname = \"D\"\ntimezone = \"America/Chicago\"\n{extra}{ADDRESS}\n\n")
        })
        .collect();
    let errors = errors(&toml);
    assert_eq!(
        paths(&errors),
        ["dealerships[2]", "dealerships[10]"],
        "{errors:#?}"
    );
}

#[test]
fn semantic_problems_come_in_document_order() {
    let toml: String = (0..12)
        .map(|i| {
            let zone = if i == 2 || i == 10 {
                "Nowhere/City"
            } else {
                "America/Chicago"
            };
            format!(
                "[[dealerships]]\nid = \"d{i}\"\nname = \"D\"\ntimezone = \"{zone}\"\n{ADDRESS}\n\n"
            )
        })
        .collect();
    let errors = errors(&toml);
    assert_eq!(
        paths(&errors),
        ["dealerships[2].timezone", "dealerships[10].timezone"],
        "{errors:#?}"
    );
    let keys: Vec<_> = errors.iter().map(|e| path_key(&e.path)).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn semantic_problems_are_listed_once_each_in_section_order() {
    let errors = errors(&semantic_config().replace("555-0100", "+12175550100"));
    let expected: Vec<&str> = SEMANTIC_PROBLEMS
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| !p.contains("phones"))
        .collect();
    assert_eq!(paths(&errors), expected, "{errors:#?}");
    let display = dms_bridge::config::ConfigErrors(errors.clone()).to_string();
    assert!(
        display.starts_with("7 problem(s) in the configuration:\n"),
        "{display}"
    );
    assert_eq!(
        display.lines().filter(|l| l.starts_with("  - ")).count(),
        7,
        "{display}"
    );
}

#[test]
fn a_bad_phone_number_does_not_hide_other_problems() {
    let errors = errors(&semantic_config());
    let expected: Vec<&str> = SEMANTIC_PROBLEMS.iter().map(|(p, _)| *p).collect();
    assert_eq!(paths(&errors), expected, "{errors:#?}");
}

#[test]
fn lead_delivery_problems_are_all_listed_with_their_paths() {
    let toml = format!(
        r#"
[leads]
id_source = " "
delivery = {{ max_attempts = 0, base_delay = "10m", max_delay = "1m", lease = "5s", concurrency = 0 }}

[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
{ADDRESS}
routes = {{ leads = "mail", inventory = "crm" }}

[upstreams.crm]
kind = "adf_http"
url = "ftp://crm.example/adf"
timeout = "10s"

[upstreams.mail]
kind = "adf_email"
smtp_host = "smtp.example"
from = "not an address"
to = []
username = {{ value = "u" }}
timeout = "2s"
"#
    );
    let outcome = check(&toml);
    assert_problems(
        &outcome,
        &[
            (
                "dealerships[0].routes.inventory",
                "cannot serve the inventory domain",
            ),
            ("upstreams.crm.url", "is not an http(s) URL"),
            ("upstreams.mail.from", "must be an e-mail address"),
            ("upstreams.mail.to", "list the CRM's intake address"),
            ("upstreams.mail.password", "give both username and password"),
            ("leads.delivery.max_attempts", "must be at least 1"),
            ("leads.delivery.concurrency", "must be at least 1"),
            (
                "leads.delivery.base_delay",
                "must not exceed leads.delivery.max_delay",
            ),
            ("leads.id_source", "must not be empty"),
            (
                "upstreams.crm.timeout",
                "must be shorter than leads.delivery.lease",
            ),
        ],
    );
}

// ---------------------------------------------------------------------------
// SOAP upstreams
// ---------------------------------------------------------------------------

/// A dealership whose repair orders come from SOAP upstream `ot` with `settings`.
fn soap_config(settings: &str) -> String {
    format!(
        r#"
[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
{ADDRESS}
routes = {{ repair_orders = "ot" }}

[upstreams.ot]
kind = "soap"
base_url = "https://opentrack.example/ot"
vars = {{ enterprise_code = "EC", company_number = "CN" }}
{settings}

[[tokens]]
name = "acme"
secret = {{ value = "acme-token" }}
dealerships = ["acme"]
scopes = ["amcp:service:read"]
"#
    )
}

/// The built-in OpenTrack profile with `edit` applied, written to a file.
fn opentrack_variant(dir: &tempfile::TempDir, edit: impl Fn(&str) -> String) -> String {
    let original = dms_bridge::config::catalog::builtin_profile("opentrack").unwrap();
    let path = dir.path().join("my-opentrack.toml");
    std::fs::write(&path, edit(original)).unwrap();
    path.display().to_string()
}

#[test]
fn a_soap_upstream_with_the_opentrack_profile_is_ok() {
    let outcome = check(&soap_config(
        r#"profile = "opentrack"
username = { value = "u" }
password = { value = "p" }"#,
    ));
    assert_eq!(outcome.code, 0, "{outcome:?}");
}

#[test]
fn soap_upstream_problems_are_listed_with_their_paths() {
    let missing_username = soap_config(
        r#"profile = "opentrack"
password = { env = "SOME_UNSET_VAR_XYZ" }"#,
    );
    assert_problems(
        &check(&missing_username),
        &[
            ("upstreams.ot.username", "required by the profile"),
            ("upstreams.ot.password", "SOME_UNSET_VAR_XYZ"),
        ],
    );

    let dir = tempfile::tempdir().unwrap();
    let unknown_key = opentrack_variant(&dir, |p| p.replace("soap_action_header", "soap_action"));
    let outcome = check(&soap_config(&format!(
        r#"profile = "{unknown_key}"
username = {{ value = "u" }}
password = {{ value = "p" }}"#
    )));
    assert_problems(&outcome, &[("upstreams.ot.profile", "soap_action")]);

    let bad_templates = opentrack_variant(&dir, |p| {
        p.replace("{vars.company_number}", "{vars.company_no}")
    });
    let outcome = check(&soap_config(&format!(
        r#"profile = "{bad_templates}"
username = {{ value = "u" }}
password = {{ value = "p" }}"#
    )));
    assert_problems(
        &outcome,
        &[
            (
                "upstreams.ot",
                // The key, then its file, line and section, then the problem.
                "[inventory]): {vars.company_no} is not defined",
            ),
            (
                "upstreams.ot",
                "[repair_orders.closed]): {vars.company_no} is not defined",
            ),
            (
                "upstreams.ot",
                "[repair_orders.get]): {vars.company_no} is not defined",
            ),
        ],
    );
    let not_xml = opentrack_variant(&dir, |p| {
        p.replace("<request><CloseDate>", "<request><CloseDate")
    });
    let outcome = check(&soap_config(&format!(
        r#"profile = "{not_xml}"
username = {{ value = "u" }}
password = {{ value = "p" }}"#
    )));
    assert_problems(
        &outcome,
        &[(
            "upstreams.ot",
            "[repair_orders.closed]): not well-formed XML",
        )],
    );
}

#[test]
fn an_upstream_serving_two_domains_is_built_and_reported_once() {
    let toml = format!(
        r#"
[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
{ADDRESS}
routes = {{ inventory = "cdk", repair_orders = "cdk" }}

[upstreams.cdk]
kind = "rest"
profile = "cdk-fortellis"
base_url = "http://127.0.0.1:1/cdk"
token_url = "http://127.0.0.1:1/token"
client_id = {{ env = "SOME_UNSET_VAR_XYZ" }}
client_secret = {{ value = "secret" }}
vars = {{ subscription_id = "sub" }}
"#
    );
    assert_problems(
        &check(&toml),
        &[("upstreams.cdk.client_id", "SOME_UNSET_VAR_XYZ")],
    );
}

#[test]
fn http_server_settings_are_checked_with_their_paths() {
    // Semantic: zero timeouts, no connections, unreadable proxies.
    let toml = format!(
        r#"
[server]
header_read_timeout = "0s"
body_read_timeout = "0s"
idle_timeout = "0s"
overflow_grace = "0s"
max_connections = 0
trusted_proxies = ["10.0.0.0/8", "10.0.0.0/33", "proxy.example", "2001:db8::/32"]
{}"#,
        valid_config()
    );
    let semantic = errors(&toml);
    assert_eq!(
        paths(&semantic),
        [
            "server.header_read_timeout",
            "server.body_read_timeout",
            "server.idle_timeout",
            "server.overflow_grace",
            "server.max_connections",
            "server.trusted_proxies[1]",
            "server.trusted_proxies[2]",
        ],
        "{semantic:#?}"
    );
    // Structural: a duration that is not one, an unknown forwarded header.
    let toml = format!(
        "[server]\nidle_timeout = 5\nforwarded_header = \"x-real-ip\"\n{}",
        valid_config()
    );
    let structural = errors(&toml);
    assert_eq!(
        paths(&structural),
        ["server.forwarded_header", "server.idle_timeout"],
        "{structural:#?}"
    );
    // Every setting, as the README shows them, is accepted.
    let toml = format!(
        r#"
[server]
header_read_timeout = "10s"
body_read_timeout = "30s"
idle_timeout = "60s"
max_connections = 1024
overflow_connections = 32
overflow_grace = "1s"
trusted_proxies = ["10.0.0.0/8", "192.0.2.7", "2001:db8::/32"]
forwarded_header = "forwarded"
{}"#,
        valid_config()
    );
    from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn oauth_problems_are_all_listed_with_their_paths() {
    let toml = valid_config()
        + r#"
[oauth]
resource = "http://bridge.example.com/api#frag"
issuer = "not a url"
jwks_uri = "ftp://keys.example.com/jwks"
scopes_claim = " "
jwks_timeout = "0s"
grants = [
  { subject = "auth0|1", client_id = "c1", dealerships = ["acme"] },
  { subject = "auth0|2", dealerships = ["nowhere"] },
]
"#;
    assert_problems(
        &check(&toml),
        &[
            ("oauth.resource", "must use https"),
            ("oauth.resource", "no fragment"),
            ("oauth.resource", "is not server.path"),
            ("oauth.issuer", "is not a URL"),
            ("oauth.jwks_uri", "scheme \"ftp\""),
            ("oauth.scopes_claim", "must not be blank"),
            ("oauth.jwks_timeout", "longer than zero"),
            ("oauth.grants[0]", "exactly one of subject and client_id"),
            (
                "oauth.grants[1].dealerships[0]",
                "no dealership with id \"nowhere\"",
            ),
        ],
    );
}

#[test]
fn a_loopback_oauth_setup_is_ok_and_unknown_keys_are_refused() {
    let ok = valid_config()
        + "\n[oauth]\nresource = \"http://127.0.0.1:8787/mcp\"\nissuer = \"http://127.0.0.1:9400\"\n";
    assert_ok(&check(&ok), "1 dealership(s), 1 upstream(s), 1 token(s)");
    let typo = ok + "issuer_url = \"http://127.0.0.1:9400\"\n";
    let outcome = check(&typo);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(outcome.stderr.contains("issuer_url"), "{outcome:?}");
}

#[test]
fn tasks_problems_are_all_listed_with_their_paths() {
    let toml = valid_config()
        + "\n[tasks]\ninline_wait = \"5s\"\ntimeout = \"3s\"\nttl = \"2s\"\nheartbeat = \"0s\"\nmax_running = 0\n";
    assert_problems(
        &check(&toml),
        &[
            ("tasks.heartbeat", "must be longer than 0s"),
            ("tasks.timeout", "must be longer than tasks.inline_wait"),
            ("tasks.ttl", "must be at least tasks.timeout"),
            ("tasks.max_running", "must be at least 1"),
        ],
    );
    let typo = valid_config() + "\n[tasks]\ninline_wiat = \"1s\"\n";
    let outcome = check(&typo);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(
        outcome.problems().iter().any(|p| p.contains("inline_wiat")),
        "{outcome:?}"
    );
}

#[test]
fn webhook_problems_are_all_listed_with_their_paths() {
    let toml = valid_config()
        + r#"
[events]
retention = "0s"
repair_order_watch = "500ms"

[webhooks.Bad_Hook]
url = "ftp://hooks.example.com/in"
secret = { value = "not-a-whsec" }
dealerships = ["acme", "nope"]
types = ["lead.created", "vehicle.exploded"]
max_attempts = 0
base_delay = "5m"
max_delay = "1m"

[webhooks.short]
url = "https://hooks.example.com/in"
secret = { value = "whsec_c2hvcnQ=" }
dealerships = []
"#;
    assert_problems(
        &check(&toml),
        &[
            ("events.retention", "must be longer than 0s"),
            ("events.repair_order_watch", "must be at least 1s"),
            ("webhooks.Bad_Hook", "webhook ids use"),
            ("webhooks.Bad_Hook.url", "is not an http(s) URL"),
            ("webhooks.Bad_Hook.secret", "must start with whsec_"),
            (
                "webhooks.Bad_Hook.dealerships[1]",
                "no dealership with id \"nope\"",
            ),
            (
                "webhooks.Bad_Hook.types[1]",
                "unknown event type \"vehicle.exploded\"",
            ),
            ("webhooks.Bad_Hook.max_attempts", "must be at least 1"),
            ("webhooks.Bad_Hook.base_delay", "must not exceed"),
            ("webhooks.short.secret", "decodes to 5 bytes"),
            (
                "webhooks.short.dealerships",
                "list at least one dealership id",
            ),
        ],
    );
    let typo = valid_config()
        + "\n[webhooks.hook]\nurl = \"https://hooks.example.com/in\"\nsecret = { env = \"HOOK_SECRET_XYZ\" }\ndealerships = [\"*\"]\nmax_attempt = 3\n";
    let outcome = check(&typo);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(
        outcome.problems().iter().any(|p| p.contains("max_attempt")),
        "{outcome:?}"
    );
}

#[test]
fn a_webhook_secret_from_the_environment_is_read_and_checked() {
    let toml = valid_config()
        + "\n[webhooks.hook]\nurl = \"https://hooks.example.com/in\"\nsecret = { env = \"SOME_UNSET_VAR_XYZ\" }\ndealerships = [\"*\"]\n";
    assert_problems(
        &check(&toml),
        &[(
            "webhooks.hook.secret",
            "environment variable SOME_UNSET_VAR_XYZ is not set",
        )],
    );
    let with_env = |value: &str| {
        check_with_env(
            &toml.replace("SOME_UNSET_VAR_XYZ", "HOOK_SECRET_XYZ"),
            &[("HOOK_SECRET_XYZ", value)],
        )
    };
    assert_problems(
        &with_env("hunter2"),
        &[("webhooks.hook.secret", "must start with whsec_")],
    );
    assert_ok(
        &with_env("whsec_dGVzdC13ZWJob29rLXNpZ25pbmcta2V5LTMyYnl0ZXM="),
        "1 dealership(s), 1 upstream(s), 1 token(s)",
    );
}

/// [`valid_config`] with `acme`'s inventory on a CDK upstream, whose table gets `extra`.
fn inbound_config(extra: &str) -> String {
    valid_config().replace(
        "[upstreams.feed]",
        &format!(
            "[upstreams.cdk]\nkind = \"rest\"\nprofile = \"cdk-fortellis\"\n\
             base_url = \"http://127.0.0.1:1/cdk\"\ntoken_url = \"http://127.0.0.1:1/oauth2/token\"\n\
             client_id = {{ value = \"id\" }}\nclient_secret = {{ value = \"secret\" }}\n\
             vars = {{ subscription_id = \"sub-1\" }}\n{extra}\n\n[upstreams.feed]"
        ),
    )
}

#[test]
fn inbound_event_problems_are_all_listed_with_their_paths() {
    let routed = |extra: &str| {
        inbound_config(extra).replace(
            "routes = { inventory = \"feed\" }",
            "routes = { inventory = \"cdk\" }",
        )
    };
    assert_ok(
        &check(&routed(
            "inbound_events = { secret = { value = \"s3cret\" }, max_body = \"64KiB\" }",
        )),
        "1 dealership(s), 2 upstream(s), 1 token(s)",
    );
    assert_problems(
        &check(&routed(
            "inbound_events = { secret = { value = \" \" }, max_body = \"8MiB\" }",
        )),
        &[
            ("upstreams.cdk.inbound_events.secret", "must not be empty"),
            (
                "upstreams.cdk.inbound_events.max_body",
                "is not a size between 1KiB and 4MiB",
            ),
        ],
    );
    assert_problems(
        &check(&routed(
            "inventory_sync = \"off\"\ninbound_events = { secret = { env = \"INBOUND_UNSET_XYZ\" }, max_body = \"512B\" }",
        )),
        &[
            ("upstreams.cdk.inbound_events", "needs a mirrored inventory"),
            (
                "upstreams.cdk.inbound_events.max_body",
                "is not a size between 1KiB and 4MiB",
            ),
        ],
    );
    // Not routed: no dealership's inventory to refresh.
    assert_problems(
        &check(&inbound_config(
            "inbound_events = { secret = { value = \"s3cret\" } }",
        )),
        &[(
            "upstreams.cdk.inbound_events",
            "no dealership routes its inventory",
        )],
    );
    let typo = routed("inbound_events = { secret = { value = \"s3cret\" }, max_bdy = \"1KiB\" }");
    let outcome = check(&typo);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(
        outcome.problems().iter().any(|p| p.contains("max_bdy")),
        "{outcome:?}"
    );
}

#[test]
fn an_inbound_secret_from_the_environment_is_read() {
    let toml = inbound_config("inbound_events = { secret = { env = \"INBOUND_SECRET_XYZ\" } }")
        .replace(
            "routes = { inventory = \"feed\" }",
            "routes = { inventory = \"cdk\" }",
        );
    assert_problems(
        &check(&toml),
        &[(
            "upstreams.cdk.inbound_events.secret",
            "environment variable INBOUND_SECRET_XYZ is not set",
        )],
    );
    assert_ok(
        &check_with_env(&toml, &[("INBOUND_SECRET_XYZ", "s3cret")]),
        "1 dealership(s), 2 upstream(s), 1 token(s)",
    );
}

// ---------------------------------------------------------------------------
// [quotas]: shared by replicas through Redis
// ---------------------------------------------------------------------------

#[test]
fn shared_quotas_are_checked_offline_with_their_paths() {
    let toml = format!(
        "{}\n[quotas]\nurl = \"http://cache.internal:6379\"\nprefix = \"\"\ntimeout = \"0s\"\nreplicas = 0\n",
        valid_config()
    );
    assert_problems(
        &check(&toml),
        &[
            ("quotas.url", "redis://"),
            ("quotas.prefix", "must not be empty"),
            ("quotas.timeout", "longer than 0s"),
            ("quotas.replicas", "at least 1"),
        ],
    );
}

#[test]
fn a_redis_url_problem_never_repeats_the_password() {
    for url in [
        "redis://:s3cret-pw@/0",
        "rediss://:s3cret-pw@cache.internal:6380/0",
    ] {
        let toml = format!(
            "{}\n[quotas]\nurl = \"{url}\"\nreplicas = 2\n",
            valid_config()
        );
        let outcome = check(&toml);
        assert_eq!(outcome.code, 2, "{url}: {outcome:?}");
        assert!(outcome.stderr.contains("quotas.url"), "{outcome:?}");
        assert!(
            !format!("{}{}", outcome.stdout, outcome.stderr).contains("s3cret-pw"),
            "{outcome:?}"
        );
    }
}

#[test]
fn shared_quotas_on_an_unreachable_redis_still_check_ok() {
    // Nothing listens there: `check` looks at the URL's shape only.
    let toml = format!(
        "{}\n[quotas]\nurl = \"redis://127.0.0.1:1/0\"\nreplicas = 3\n",
        valid_config()
    );
    assert_eq!(check(&toml).code, 0);
}

#[test]
fn unknown_keys_in_quotas_are_refused() {
    let toml = format!(
        "{}\n[quotas]\nurl = \"redis://127.0.0.1:6379\"\nreplicas = 2\nttl = \"1m\"\n",
        valid_config()
    );
    let outcome = check(&toml);
    assert_eq!(outcome.code, 2, "{outcome:?}");
    assert!(outcome.stderr.contains("ttl"), "{outcome:?}");
}

#[test]
fn the_aap_door_and_dealer_fees_are_checked_with_their_paths() {
    let with = |dealership_lines: &str, aap: &str| {
        valid_config().replacen(
            "routes = { inventory = \"feed\" }",
            &format!("routes = {{ inventory = \"feed\" }}\n{dealership_lines}"),
            1,
        ) + aap
    };
    let fees = r#"fees = [
  { name = "Documentation fee", amount = { amount = 49900, currency = "USD" } },
  { name = "documentation fee", amount = { amount = -1, currency = "CAD" } },
  { name = " ", amount = { amount = 100, currency = "USD" } },
]"#;
    let outcome = check(&with(
        fees,
        "\n[aap]\nwell_known = \"acme\"\npublic_url = \"agents.example.com\"\n",
    ));
    assert_problems(
        &outcome,
        &[
            ("dealerships[0].fees[1].name", "listed twice"),
            ("dealerships[0].fees[1].amount.amount", "not be negative"),
            (
                "dealerships[0].fees[1].amount.currency",
                "the dealership's currency, USD",
            ),
            ("dealerships[0].fees[2].name", "1-120 characters"),
            ("aap.public_url", "absolute http or https URL"),
            ("aap.well_known", "does not have aap = true"),
        ],
    );
    let unknown = check(&with("aap = true", "\n[aap]\nwell_known = \"nobody\"\n"));
    assert_problems(
        &unknown,
        &[("aap.well_known", "no dealership has the id \"nobody\"")],
    );
    let fine = check(&with(
        "aap = true\nfees = []",
        "\n[aap]\nwell_known = \"acme\"\npublic_url = \"https://agents.example.com\"\n",
    ));
    assert_ok(&fine, "1 dealership(s), 1 upstream(s), 1 token(s)");
}
