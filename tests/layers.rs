//! The crate's layers point one way. Every `crate::` path in `src/` (imports,
//! grouped imports, inline paths and doc links alike) is an edge between
//! top-level modules, and each edge must go down the declared order below.
//! Any other crate of the workspace must at least have no cycle between its
//! top-level modules. Test code (`#[cfg(test)]` sections) is exempt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The product's layers, top first. A module may use modules of later rows only.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["kit"],
    &["runtime"],
    &["http"],
    &["mcp", "aap"],
    &["gateway"],
    &["tools"],
    &["lifecycle"],
    &["leads", "mirror", "webhooks"],
    &["adapters", "store"],
    &["quotas"],
    &["config"],
    &["model", "adf"],
    &["contract", "telemetry", "net"],
];

type Edges = BTreeMap<(String, String), BTreeSet<PathBuf>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module names a `crate::` path starts with (several for `crate::{a, b::c}`).
fn targets(rest: &str) -> Vec<String> {
    if let Some(group) = rest.strip_prefix('{') {
        let (mut depth, mut current, mut names) = (0, String::new(), Vec::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => names.push(std::mem::take(&mut current)),
                _ if depth == 0 => current.push(c),
                _ => {}
            }
        }
        names.push(current);
        return names
            .iter()
            .filter_map(|n| n.trim().split("::").next())
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    vec![name]
}

fn edges(src: &Path) -> Edges {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Edges::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (at, _) in code.match_indices("crate::") {
            // `dms_bridge::` or `some_crate::` are other crates' paths, not ours.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            for target in targets(&code[at + "crate::".len()..]) {
                if target != module && target != "self" && target != "super" {
                    edges
                        .entry((module.clone(), target))
                        .or_default()
                        .insert(relative.to_path_buf());
                }
            }
        }
    }
    edges
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

#[test]
fn the_product_layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for ((from, to), files) in edges(&src) {
        match (rank(&from), rank(&to)) {
            (Some(a), Some(b)) if b > a => {}
            (None, _) | (_, None) => wrong.push(format!(
                "{from} -> {to}: a top-level module missing from LAYERS ({files:?})"
            )),
            _ => wrong.push(format!("{from} -> {to} goes up or sideways ({files:?})")),
        }
    }
    assert!(wrong.is_empty(), "layer violations:\n{}", wrong.join("\n"));
}

/// Modules that reach themselves through others, by repeated reachability.
fn cyclic(edges: &Edges) -> BTreeSet<String> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().insert(to);
    }
    let mut found = BTreeSet::new();
    for &start in next.keys() {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![start]);
        while let Some(m) = todo.pop() {
            for &n in next.get(m).into_iter().flatten() {
                if n == start {
                    found.insert(start.to_owned());
                }
                if seen.insert(n) {
                    todo.push(n);
                }
            }
        }
    }
    found
}

#[test]
fn no_crate_of_the_workspace_has_a_module_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        sources.extend(crates.map(|c| c.unwrap().path().join("src")));
    }
    for src in sources.iter().filter(|s| s.join("lib.rs").exists()) {
        let cycle = cyclic(&edges(src));
        assert!(
            cycle.is_empty(),
            "{}: modules in a cycle: {cycle:?}",
            src.display()
        );
    }
}

#[test]
fn the_scanner_sees_grouped_imports_and_ignores_other_crates() {
    assert_eq!(targets("{a, b::{c, d}, e::f};"), ["a", "b", "e"]);
    assert_eq!(targets("gateway::Gateway;"), ["gateway"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("x")).unwrap();
    std::fs::write(
        dir.path().join("x/mod.rs"),
        "use crate::{y, z::W};\nuse other_crate::q;\n#[cfg(test)]\nuse crate::t;",
    )
    .unwrap();
    let found: Vec<_> = edges(dir.path()).into_keys().collect();
    assert_eq!(
        found,
        [
            ("x".to_owned(), "y".to_owned()),
            ("x".to_owned(), "z".to_owned())
        ]
    );
    let mut looped = Edges::new();
    looped.insert(("a".into(), "b".into()), BTreeSet::new());
    looped.insert(("b".into(), "a".into()), BTreeSet::new());
    assert_eq!(cyclic(&looped).len(), 2);
}

/// A file's module path from the crate root: `tools/leads/create.rs` is
/// `[tools, leads, create]`; a `mod.rs` is its folder's module.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The paths a `crate::`, `super::` or `self::` reference names, as segment
/// lists (`super::{a::X, b}` names two), with the keyword kept first.
fn referenced_paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for keyword in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(keyword) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &code[at..];
            let mut segments = Vec::new();
            loop {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.is_empty() {
                    break;
                }
                rest = &rest[name.len()..];
                segments.push(name);
                match rest.strip_prefix("::") {
                    Some(more) => rest = more,
                    None => break,
                }
            }
            if rest.starts_with('{') {
                for head in targets(rest) {
                    let mut path = segments.clone();
                    path.push(head);
                    found.push(path);
                }
            } else {
                found.push(segments);
            }
        }
    }
    found
}

/// Items a folder's `mod.rs` re-exports from a child (`pub use child::{A, B}`), by name.
fn reexports(text: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    // Whole statements, so a `pub use child::{` spread over lines is read too.
    for statement in text.split(';').map(str::trim) {
        let Some(start) = ["pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| statement.find(p).map(|at| at + p.len()))
        else {
            continue;
        };
        let rest = &statement[start..];
        let rest = rest.strip_prefix("self::").unwrap_or(rest);
        let Some((child, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim().trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() && !name.contains("::") {
                names.insert(name.to_owned(), child.to_owned());
            }
        }
    }
    names
}

/// For each folder, the edges between its children (files and subfolders;
/// the folder's own `mod.rs` is not one of them).
fn sibling_edges(src: &Path) -> BTreeMap<Vec<String>, Edges> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // The binary's root is another crate, whose `crate::` is not the library's.
    files.retain(|f| f.strip_prefix(src).unwrap() != Path::new("main.rs"));
    let texts: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap().to_owned();
            (module_path(f.strip_prefix(src).unwrap()), code)
        })
        .collect();
    let mut by_folder: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    for relative in files.iter().map(|f| f.strip_prefix(src).unwrap()) {
        let from = module_path(relative);
        for path in referenced_paths(&texts[&from]) {
            let (keyword, rest) = path.split_first().unwrap();
            let mut full = match keyword.as_str() {
                "crate" => Vec::new(),
                "self" => from.clone(),
                _ => from[..from.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = rest.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                rest.remove(0);
                full.pop();
            }
            full.extend(rest);
            let depth = (0..=full.len())
                .rev()
                .find(|&n| texts.contains_key(&full[..n]))
                .unwrap_or(0);
            let mut to = full[..depth].to_vec();
            if let (Some(text), Some(name)) = (texts.get(&to), full.get(depth))
                && let Some(child) = reexports(text).get(name)
            {
                to.push(child.clone());
            }
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if let (Some(a), Some(b)) = (from.get(common), to.get(common)) {
                by_folder
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((a.clone(), b.clone()))
                    .or_default()
                    .insert(relative.to_path_buf());
            }
        }
    }
    by_folder
}

#[test]
fn no_folder_has_a_circle_between_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        sources.extend(crates.map(|c| c.unwrap().path().join("src")));
    }
    let mut circles = Vec::new();
    for (src, (folder, edges)) in sources
        .iter()
        .filter(|s| s.join("lib.rs").exists())
        .flat_map(|src| sibling_edges(src).into_iter().map(move |e| (src, e)))
    {
        let cycle = cyclic(&edges);
        if !cycle.is_empty() {
            let within: Vec<_> = edges
                .iter()
                .filter(|((a, b), _)| cycle.contains(a) && cycle.contains(b))
                .map(|((a, b), files)| format!("{a} -> {b} {files:?}"))
                .collect();
            let folder = src.join(folder.join("/"));
            circles.push(format!("{}: {}", folder.display(), within.join("; ")));
        }
    }
    assert!(
        circles.is_empty(),
        "files that reach each other inside a folder (move the shared helper to a file both use):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_folder_scanner_resolves_super_paths_and_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("f")).unwrap();
    std::fs::write(root.join("lib.rs"), "mod f;").unwrap();
    std::fs::write(
        root.join("f/mod.rs"),
        "mod a;\nmod b;\nmod c;\npub use b::Thing;\npub use c::{\n    Other,\n    Third,\n};",
    )
    .unwrap();
    std::fs::write(
        root.join("f/a.rs"),
        "use super::Thing;\nuse crate::f::b::{x, y};",
    )
    .unwrap();
    std::fs::write(root.join("f/b.rs"), "/// [`super::a`]\nfn z() {}").unwrap();
    std::fs::write(root.join("f/c.rs"), "pub struct Other;\npub struct Third;").unwrap();
    // `Third` is re-exported by a `pub use` spread over lines: still c's.
    std::fs::write(root.join("f/d.rs"), "use super::Third;").unwrap();
    let edges = &sibling_edges(root)[&vec!["f".to_owned()]];
    let found: Vec<_> = edges.keys().cloned().collect();
    assert_eq!(
        found,
        [
            ("a".to_owned(), "b".to_owned()),
            ("b".to_owned(), "a".to_owned()),
            ("d".to_owned(), "c".to_owned())
        ]
    );
    assert_eq!(cyclic(edges).len(), 2);
}
