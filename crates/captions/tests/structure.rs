//! The sources stay in rooms of a readable size: no file over 800 lines in `crates/*/src`, and
//! no import cycle between the files of one crate (file a names `crate::b`, and b names
//! `crate::a`, directly or around a longer loop).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`, `lib.rs`
/// and `main.rs` the crate root.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without its comments (doc examples name paths that are not imports).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b...` path in `code`, resolved to the longest known module it names.
fn referenced(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut best = None;
        let mut prefix = String::new();
        for part in path.split("::").filter(|p| !p.is_empty()) {
            if !prefix.is_empty() {
                prefix.push_str("::");
            }
            prefix.push_str(part);
            if modules.contains(&prefix) {
                best = Some(prefix.clone());
            }
        }
        // `use crate::{a::X, b::Y}`: each name in the braces.
        if let Some(braced) = rest.strip_prefix('{') {
            let inner: String = braced.chars().take_while(|c| *c != '}').collect();
            for item in inner.split(',') {
                let first = item.trim().split("::").next().unwrap_or_default();
                if modules.contains(first) {
                    out.insert(first.to_owned());
                }
            }
        }
        if let Some(module) = best {
            out.insert(module);
        }
    }
    out
}

fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, edges, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node.as_str())
            && let Some(cycle) = visit(node, edges, &mut state, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn no_file_over_800_lines_and_no_import_cycle_in_any_crate() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    let mut cycles = Vec::new();
    let mut files_seen = 0;
    for entry in std::fs::read_dir(&crates).expect("crates folder").flatten() {
        let src = entry.path().join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files_seen += files.len();
        let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("source file");
            if text.lines().count() > MAX_LINES {
                long.push(format!(
                    "{} ({} lines)",
                    file.display(),
                    text.lines().count()
                ));
            }
            let module = module_of(&src, file);
            let mut targets = referenced(&code(&text), &modules);
            targets.remove(&module);
            // A module naming its own parent's items is how Rust nests; only siblings and
            // strangers count.
            edges.insert(module, targets);
        }
        if let Some(cycle) = find_cycle(&edges) {
            cycles.push(format!(
                "{}: {}",
                entry.file_name().to_string_lossy(),
                cycle.join(" -> ")
            ));
        }
    }
    assert!(files_seen > 100, "only {files_seen} source files found");
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
    assert!(cycles.is_empty(), "import cycles: {cycles:?}");
}

#[test]
fn the_checks_see_a_cycle_and_a_module_path() {
    let modules: BTreeSet<String> = ["a", "b", "b::c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        referenced("use crate::b::c::Thing; use crate::{a::X, b};", &modules),
        ["a", "b", "b::c"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        module_of(Path::new("src"), Path::new("src/b/c/mod.rs")),
        "b::c"
    );
    let mut edges = BTreeMap::new();
    edges.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    edges.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(find_cycle(&edges).is_some());
    edges.insert("b".to_owned(), BTreeSet::new());
    assert!(find_cycle(&edges).is_none());
}
