//! The engine's modules import each other without loops (issue 13: "no import loops inside
//! `src/`"). Reads every source file and draws two graphs: the top-level modules (`config`,
//! `pool`, `registry`, …; an edge for each `crate::name` a file of one names in another), and,
//! inside each folder, its files (an edge for each `super::name` or `crate::folder::name` that
//! names a sibling file, and for `super::item` from a child to its folder's `mod.rs`; `mod`
//! declarations are containment, not imports). A file in a subfolder is also a node of each
//! enclosing folder's graph, as that subfolder; a `name.rs` beside a `name/` folder is the
//! folder's `mod.rs`. Fails naming a cycle of either, printed as a path `a → b → a`.
//! Comments are ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's text without `//` comments (doc comments name other files freely) and without
/// its unit tests (`#[cfg(test)] mod tests`, last in a file, where `super::` is the file).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("readable source");
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every path that starts with `prefix` (e.g. `crate::`), including each branch of a grouped
/// `use prefix{a, b::{c, d}}`, as its segments.
fn paths(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // `xcrate::` is not `crate::`, nor `super::restore::` a bare `restore::`
        }
        expand(rest, Vec::new(), &mut out);
    }
    out
}

/// Reads one path (or group) at the start of `s` onto `base`.
fn expand(s: &str, base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix('{') {
        for branch in split_group(inner) {
            expand(branch, base.clone(), out);
        }
        return;
    }
    let name: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if name.is_empty() {
        if !base.is_empty() {
            out.push(base);
        }
        return;
    }
    let mut path = base;
    path.push(name.clone());
    match s[name.len()..].strip_prefix("::") {
        Some(more) => expand(more, path, out),
        None => out.push(path),
    }
}

/// The top-level branches of a group's text (up to its closing brace).
fn split_group(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut branches) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                branches.push(&s[start..i]);
                return branches;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                branches.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    branches
}

/// The module a file is (`pool/core.rs` → ["pool", "core"], `pool/mod.rs` → ["pool"]).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

fn graphs(src: &Path) -> (Graph, BTreeMap<String, Graph>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut top = Graph::new();
    let mut folders: BTreeMap<String, Graph> = BTreeMap::new();
    for f in &files {
        let me = module_of(src, f);
        let text = code(f);
        if let Some(first) = me.first() {
            let node = top.entry(first.clone()).or_default();
            for p in paths(&text, "crate::") {
                if p[0] != *first && modules.contains(&p[..1]) {
                    node.insert(p[0].clone());
                }
            }
        }
        // Within the folder: siblings by `super::`, or by the full path from the crate root. A
        // `name.rs` beside a `name/` folder is that folder's `mod.rs` (`wasm/facade.rs`).
        let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs") || f.with_extension("").is_dir();
        let folder: Vec<String> =
            if is_mod_rs { me.clone() } else { me[..me.len().saturating_sub(1)].to_vec() };
        if me.is_empty() || (is_mod_rs && folder.is_empty()) {
            continue;
        }
        let name = if is_mod_rs { "mod".to_string() } else { me.last().unwrap().clone() };
        let mut targets = BTreeSet::new();
        let parent_of_file = if is_mod_rs { me[..me.len() - 1].to_vec() } else { folder.clone() };
        for p in paths(&text, "super::") {
            let mut full = parent_of_file.clone();
            full.extend(p);
            targets.insert(full);
        }
        for p in paths(&text, "crate::") {
            targets.insert(p);
        }
        for p in paths(&text, "self::") {
            let mut full = me.clone();
            full.extend(p);
            targets.insert(full);
        }
        if is_mod_rs {
            // A folder's `mod.rs` names its children without a prefix (`leases::Lease`).
            for child in modules.iter().filter(|m| m.len() == me.len() + 1 && m[..me.len()] == me[..]) {
                if !paths(&text, &format!("{}::", child[me.len()])).is_empty() {
                    targets.insert(child.clone());
                }
            }
        }
        // The file is a node of its folder's graph and, through the subfolder holding it, of
        // every enclosing folder's (`pool/api/leases.rs` is `api` in `pool/`), so that a loop
        // through a subfolder is a loop too.
        for depth in 0..=folder.len() {
            let level = &folder[..depth];
            let node = if depth == folder.len() { name.clone() } else { folder[depth].clone() };
            let node_set = folders.entry(level.join("/")).or_default().entry(node.clone()).or_default();
            for t in &targets {
                if t.len() <= depth || t[..depth] != level[..] {
                    continue;
                }
                let sibling = &t[depth];
                let target = if modules.contains(&t[..=depth]) { sibling.clone() } else { "mod".to_string() };
                if target != node {
                    node_set.insert(target);
                }
            }
        }
    }
    (top, folders)
}

/// A cycle of `g` as a path that ends where it starts, if there is one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        g: &Graph,
        n: &str,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(n.to_string(), Mark::Open);
        stack.push(n.to_string());
        for next in g.get(n).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|s| s == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(g, next, marks, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(n.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for n in g.keys() {
        if marks.get(n).copied().unwrap_or(Mark::New) == Mark::New
            && let Some(c) = visit(g, n, &mut marks, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let (top, _) = graphs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(top.len() > 15, "read the modules: {:?}", top.keys());
    assert!(top["pool"].contains("registry"), "reads `use crate::…` imports: {:?}", top["pool"]);
    if let Some(c) = find_cycle(&top) {
        panic!("import cycle between modules of src/: {}", c.join(" → "));
    }
}

#[test]
fn no_import_cycle_between_the_files_of_a_folder() {
    let (_, folders) = graphs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(folders["pool"]["leases"].contains("core"), "reads `super::…` imports: {:?}", folders["pool"]);
    for (folder, g) in &folders {
        if let Some(c) = find_cycle(g) {
            panic!("import cycle between the files of src/{folder}/: {}", c.join(" → "));
        }
    }
}

#[test]
fn the_check_finds_cycles_and_reads_grouped_imports() {
    let g: Graph = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    let c = find_cycle(&g).expect("a → b → c → a");
    assert_eq!(c.first(), c.last());
    assert_eq!(c.len(), 4);
    let acyclic: Graph = [("a", vec!["b"]), ("b", vec![])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(find_cycle(&acyclic), None);
    let found = paths("use crate::{a::{b, c::D}, e};\nlet x = crate::f::g(); notcrate::h", "crate::");
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(found, ["a::b", "a::c::D", "e", "f::g"]);
}

#[test]
fn a_loop_through_a_subfolder_or_a_file_with_its_folder_is_found() {
    let dir = std::env::temp_dir().join(format!("repute-module-graph-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    // a/x.rs → a/sub/ (its y.rs) → a/x.rs: a loop in `a/` through the subfolder.
    write("a/mod.rs", "mod sub;\nmod x;");
    write("a/x.rs", "use crate::a::sub::y::Y;");
    write("a/sub/mod.rs", "pub mod y;");
    write("a/sub/y.rs", "use crate::a::x::X;");
    // b.rs names its child c, which names an item of b.rs: a loop in `b/`.
    write("b.rs", "mod c;\nuse c::C;");
    write("b/c.rs", "use super::B;");
    let (_, folders) = graphs(&dir);
    fs::remove_dir_all(&dir).unwrap();
    let a = find_cycle(&folders["a"]).expect("x → sub → x");
    assert!(a.contains(&"sub".to_string()) && a.contains(&"x".to_string()), "{a:?}");
    let b = find_cycle(&folders["b"]).expect("mod → c → mod");
    assert!(b.contains(&"c".to_string()) && b.contains(&"mod".to_string()), "{b:?}");
}
