//! The docs cannot drift from the product. Every fenced block in README.md
//! and docs/ carries a mark saying how it is checked (`sh run`, `toml config`,
//! …); the blocks that need no server are checked here, those that run
//! commands against a built binary or the demo are run by CI
//! (`scripts/doc_blocks.py`). The configuration reference and the JSON Schema
//! in docs/reference/ are regenerated from the config types and must match.
//! `DMS_BRIDGE_UPDATE_DOCS=1 cargo test --test integration docs::` rewrites them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every mark a block may carry, by language.
const MARKS: &[(&str, &[&str])] = &[
    ("sh", &["run", "demo", "serve", "ci", "manual"]),
    ("toml", &["config", "fragment"]),
    ("json", &["host", "output"]),
    ("text", &["output", "diagram"]),
    ("python", &["demo"]),
    ("js", &["demo"]),
];

struct Block {
    file: PathBuf,
    line: usize,
    lang: String,
    mark: String,
    body: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut files);
    files.sort();
    files
}

/// The fenced blocks of a Markdown text (fences may be indented, as in lists).
fn blocks_of(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize, String, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        match open.take() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((i + 1, indent, info.trim().to_owned(), Vec::new()));
                }
            }
            Some((start, fence_indent, info, mut body)) => {
                if trimmed == "```" {
                    let mut words = info.split_whitespace();
                    blocks.push(Block {
                        file: file.to_path_buf(),
                        line: start,
                        lang: words.next().unwrap_or_default().to_owned(),
                        mark: words.next().unwrap_or_default().to_owned(),
                        body: body.join("\n") + "\n",
                    });
                } else {
                    // The fence's indentation, where the line has it.
                    let cut = line.len().min(fence_indent);
                    let cut = if line.get(..cut).is_some_and(|p| p.trim().is_empty()) {
                        cut
                    } else {
                        0
                    };
                    body.push(line[cut..].to_owned());
                    open = Some((start, fence_indent, info, body));
                }
            }
        }
    }
    assert!(open.is_none(), "{}: a fence is not closed", file.display());
    blocks
}

fn all_blocks() -> Vec<Block> {
    markdown_files().iter().flat_map(|f| blocks_of(f)).collect()
}

fn place(block: &Block) -> String {
    let file = block.file.strip_prefix(root()).unwrap_or(&block.file);
    format!("{}:{}", file.display(), block.line)
}

#[test]
fn every_block_says_how_it_is_checked() {
    let blocks = all_blocks();
    assert!(blocks.len() > 50, "only {} blocks found", blocks.len());
    let unmarked: Vec<String> = blocks
        .iter()
        .filter(|b| {
            !MARKS
                .iter()
                .any(|(lang, marks)| *lang == b.lang && marks.contains(&b.mark.as_str()))
        })
        .map(|b| format!("{} ```{} {}", place(b), b.lang, b.mark))
        .collect();
    assert!(
        unmarked.is_empty(),
        "blocks without a known mark (see MARKS in tests/docs.rs):\n{}",
        unmarked.join("\n")
    );
}

#[test]
fn host_snippets_are_strict_json() {
    for block in all_blocks()
        .iter()
        .filter(|b| b.lang == "json" && b.mark == "host")
    {
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&block.body) {
            panic!("{}: not JSON a host reads: {e}", place(block));
        }
    }
}

#[test]
fn commands_marked_ci_are_run_by_ci() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    // Commands, not comments: a command only mentioned in a comment is not run.
    let commands: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    for block in all_blocks().iter().filter(|b| b.mark == "ci") {
        for command in block.body.lines().map(str::trim).filter(|l| !l.is_empty()) {
            // CI itself.
            if command == "bash .ci/run" {
                continue;
            }
            assert!(
                commands.iter().any(|l| l.contains(command)),
                "{}: `{command}` is marked ci but no command of .ci/run runs it",
                place(block)
            );
        }
    }
}

/// The config `dms-bridge demo --print-config` prints, as the binary prints it.
fn printed_config() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["demo", "--print-config"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `dms-bridge check` on `text` written at the repo root (so relative
/// profile and mapping paths resolve as the docs say), with every variable a
/// `{ env = "…" }` secret names set to a stand-in value.
fn check(text: &str, name: &str) -> Result<(), String> {
    let path = root().join(format!(".doc-check-{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_dms-bridge"));
    command.args(["check", "--config"]).arg(&path);
    // 64 hex digits: long enough for every secret, and a valid store key.
    for var in env_vars(text) {
        command.env(var, "d0c5".repeat(16));
    }
    let out = command.output().unwrap();
    std::fs::remove_file(&path).unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The variables `env = "NAME"` entries name.
fn env_vars(text: &str) -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    for (at, _) in text.match_indices("env = \"") {
        let rest = &text[at + "env = \"".len()..];
        if let Some(end) = rest.find('"') {
            vars.insert(rest[..end].to_owned());
        }
    }
    vars
}

#[test]
fn the_printed_config_passes_check() {
    check(&printed_config(), "printed").unwrap();
}

#[test]
fn complete_configs_in_the_docs_pass_check() {
    let blocks = all_blocks();
    let configs: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.lang == "toml" && b.mark == "config")
        .collect();
    assert!(!configs.is_empty());
    let failures: Vec<String> = configs
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            check(&b.body, &format!("config-{i}"))
                .err()
                .map(|e| format!("{}: {e}", place(b)))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `fragment` onto `base`: tables merged key by key, arrays of tables appended,
/// any other value replaced (a secret's source too: `{ env = … }` over
/// `{ value = … }` is another source, not both).
fn merge(base: &mut toml::Table, fragment: toml::Table) {
    let secret_source = |t: &toml::Table| {
        t.len() == 1 && ["value", "env", "file"].iter().any(|k| t.contains_key(*k))
    };
    for (key, value) in fragment {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(f)) if !secret_source(&f) => {
                merge(b, f)
            }
            (Some(toml::Value::Array(b)), toml::Value::Array(f))
                if f.iter().all(toml::Value::is_table) =>
            {
                b.extend(f)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[test]
fn config_fragments_pass_check_on_the_printed_config() {
    let printed: toml::Table = toml::from_str(&printed_config()).unwrap();
    let blocks = all_blocks();
    let fragments: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.lang == "toml" && b.mark == "fragment")
        .collect();
    assert!(!fragments.is_empty());
    let failures: Vec<String> = fragments
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            let fragment: toml::Table = match toml::from_str(&b.body) {
                Ok(f) => f,
                Err(e) => return Some(format!("{}: not TOML: {e}", place(b))),
            };
            let mut merged = printed.clone();
            merge(&mut merged, fragment);
            let text = toml::to_string(&merged).unwrap();
            check(&text, &format!("fragment-{i}"))
                .err()
                .map(|e| format!("{}: {e}", place(b)))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A generated file: equal to `fresh`, or rewritten with `DMS_BRIDGE_UPDATE_DOCS=1`.
fn generated(relative: &str, fresh: &str) {
    let path = root().join(relative);
    if std::env::var_os("DMS_BRIDGE_UPDATE_DOCS").is_some() {
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == fresh,
        "{relative} is stale: the config types changed. Regenerate it with \
         `DMS_BRIDGE_UPDATE_DOCS=1 cargo test --test integration docs::` and commit it."
    );
}

#[test]
fn the_configuration_reference_is_current() {
    let example: toml::Table = toml::from_str(&printed_config()).unwrap();
    generated(
        "docs/reference/configuration.md",
        &dms_bridge::config::reference::markdown(&example),
    );
}

#[test]
fn the_published_schema_is_current() {
    let schema = dms_bridge::config::reference::json_schema();
    generated(
        "docs/reference/dms-bridge.schema.json",
        &(serde_json::to_string_pretty(&schema).unwrap() + "\n"),
    );
}

#[test]
fn the_schema_command_prints_the_published_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .arg("schema")
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, dms_bridge::config::reference::json_schema());
    assert!(printed["properties"]["dealerships"].is_object());
}

#[test]
fn the_block_reader_keeps_marks_lines_and_list_indentation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.md");
    std::fs::write(
        &file,
        "# T\n\n```sh run\necho hi\n```\n\n1. Step:\n\n   ```toml fragment\n   [limits]\n   max_limit = 50\n   ```\n",
    )
    .unwrap();
    let blocks = blocks_of(&file);
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        (blocks[0].lang.as_str(), blocks[0].mark.as_str()),
        ("sh", "run")
    );
    assert_eq!(blocks[0].line, 3);
    assert_eq!(blocks[1].body, "[limits]\nmax_limit = 50\n");
    let mut base: toml::Table =
        toml::from_str("[limits]\ndefault_limit = 20\n[[tokens]]\nid = 'a'").unwrap();
    merge(
        &mut base,
        toml::from_str("[limits]\nmax_limit = 50\n[[tokens]]\nid = 'b'").unwrap(),
    );
    assert_eq!(base["limits"]["default_limit"].as_integer(), Some(20));
    assert_eq!(base["limits"]["max_limit"].as_integer(), Some(50));
    assert_eq!(base["tokens"].as_array().unwrap().len(), 2);
}
