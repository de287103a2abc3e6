//! The engine core must stay pure: no wasm bindings, no JS, no OS clock, no OS entropy.
//! Only the wasm facade (`src/wasm/facade.rs`, `host.rs`) may touch host APIs. This test reads every engine source
//! file and fails naming the file and the forbidden identifier; and it reads `Cargo.toml`, so
//! that entropy cannot enter the engine by a dependency either: `getrandom` only under the
//! wasm32 target (the facade seeds an unseeded pool with it), `rand` without its default
//! features (which bring `getrandom`, `thread_rng` and the OS generator).

use std::fs;
use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 12] = [
    "wasm_bindgen",
    "js_sys",
    "web_sys",
    "getrandom",
    "SystemTime",
    "Instant",
    "thread_rng",
    // rand's entropy: the thread generator, the OS generator, seeding from either.
    "ThreadRng",
    "SysRng",
    "OsRng",
    "make_rng",
    "from_os_rng",
];

/// The facade and its host bindings (`src/wasm/facade.rs` and its modules in `src/wasm/facade/`,
/// `src/wasm/host.rs`) may bind to the host; the conversions beside them (`views_json.rs`,
/// `packed.rs`) are pure like the rest.
fn is_facade(path: &Path) -> bool {
    let dir = |p: Option<&Path>| p.and_then(|p| p.file_name()).map(|n| n.to_owned());
    let parent = path.parent();
    let in_wasm = dir(parent).is_some_and(|n| n == "wasm");
    let in_facade = dir(parent).is_some_and(|n| n == "facade")
        && dir(parent.and_then(Path::parent)).is_some_and(|n| n == "wasm");
    in_facade || in_wasm && path.file_name().is_some_and(|n| n == "facade.rs" || n == "host.rs")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_facade(&path) {
            out.push(path);
        }
    }
}

/// Every use of a forbidden identifier under `dir` (the facade excepted).
fn violations(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).expect("readable source");
        for word in FORBIDDEN {
            let hit = text.match_indices(word).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + word.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            });
            if hit {
                found.push(format!("{} uses {word}", f.display()));
            }
        }
    }
    found
}

#[test]
fn engine_modules_use_no_host_clock_entropy_or_bindings() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 10, "expected the engine sources, found {files:?}");
    let found = violations(&src);
    assert!(found.is_empty(), "impure engine modules:\n{}", found.join("\n"));
}

#[test]
fn the_check_catches_a_violation_and_spares_only_the_facade() {
    let dir = std::env::temp_dir().join(format!("repute-purity-{}", std::process::id()));
    fs::create_dir_all(dir.join("wasm")).unwrap();
    fs::write(dir.join("bad.rs"), "fn f() { let _ = std::time::SystemTime::now(); }").unwrap();
    fs::write(dir.join("fine.rs"), "fn g() { let _instants = 1; }").unwrap();
    fs::write(dir.join("wasm/facade.rs"), "use wasm_bindgen::prelude::*;").unwrap();
    fs::write(dir.join("wasm/packed.rs"), "use js_sys::Array;").unwrap();
    fs::create_dir_all(dir.join("wasm/facade")).unwrap();
    fs::write(dir.join("wasm/facade/part.rs"), "use wasm_bindgen::prelude::*;").unwrap();
    fs::create_dir_all(dir.join("facade")).unwrap();
    fs::write(dir.join("facade/z.rs"), "use wasm_bindgen::prelude::*;").unwrap();
    let mut found = violations(&dir);
    fs::remove_dir_all(&dir).unwrap();
    found.sort();
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].ends_with("bad.rs uses SystemTime"), "{found:?}");
    assert!(
        found[1].ends_with("z.rs uses wasm_bindgen"),
        "a folder named facade outside wasm/ is checked: {found:?}"
    );
    assert!(
        found[2].ends_with("packed.rs uses js_sys"),
        "a conversion beside the facade is checked: {found:?}"
    );
}

/// The `[section]` of `Cargo.toml` each line of `manifest` is in, with the line.
fn sections(manifest: &str) -> Vec<(&str, &str)> {
    let mut section = "";
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if !line.starts_with('#') && !line.is_empty() {
            out.push((section, line));
        }
    }
    out
}

/// Why the manifest would let entropy into the engine, if it would.
fn entropy_by_dependency(manifest: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (section, line) in sections(manifest) {
        let name = line.split(['=', ' ']).next().unwrap_or("");
        let wasm_only = section == "[target.'cfg(target_arch = \"wasm32\")'.dependencies]";
        if name == "getrandom" && !wasm_only {
            found.push(format!("getrandom in {section}"));
        }
        if name == "rand" && section == "[dependencies]" && !line.contains("default-features = false") {
            found.push("rand with its default features".to_owned());
        }
    }
    found
}

#[test]
fn entropy_enters_only_the_wasm_facade_by_dependency() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(sections(&manifest).iter().any(|(_, l)| l.starts_with("getrandom")), "getrandom is listed");
    let found = entropy_by_dependency(&manifest);
    assert!(found.is_empty(), "{found:?}");
    let bad = "[dependencies]\nrand = \"0.10\"\ngetrandom = \"0.4\"\n";
    assert_eq!(entropy_by_dependency(bad), ["rand with its default features", "getrandom in [dependencies]"]);
}
