//! The engine core must stay pure: no wasm bindings, no JS, no OS clock, no OS entropy.
//! Only the wasm facade (`src/wasm/facade.rs`, `host.rs`) may touch host APIs. This test reads every engine source
//! file and fails naming the file and the forbidden identifier.

use std::fs;
use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 7] =
    ["wasm_bindgen", "js_sys", "web_sys", "getrandom", "SystemTime", "Instant", "thread_rng"];

/// The facade and its host bindings (`src/wasm/facade.rs`, `src/wasm/host.rs`) may bind to the
/// host; the conversions beside them (`views_json.rs`, `packed.rs`) are pure like the rest.
fn is_facade(path: &Path) -> bool {
    let in_wasm = path.parent().and_then(|p| p.file_name()).is_some_and(|n| n == "wasm");
    in_wasm && path.file_name().is_some_and(|n| n == "facade.rs" || n == "host.rs")
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
    let mut found = violations(&dir);
    fs::remove_dir_all(&dir).unwrap();
    found.sort();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with("bad.rs uses SystemTime"), "{found:?}");
    assert!(
        found[1].ends_with("packed.rs uses js_sys"),
        "a conversion beside the facade is checked: {found:?}"
    );
}
