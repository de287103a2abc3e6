//! State has owners (issue 13): `Core`'s fields are visible to `pool/` only, and snapshot code
//! (`src/pool/snapshot/`) reads and builds state through `pool/durable.rs`, never by naming a
//! field of `Core`. Reads the sources; comments are ignored.

use std::fs;
use std::path::Path;

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("readable source");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// `Core`'s fields as (visibility, name), from its struct definition.
fn core_fields() -> Vec<(String, String)> {
    let text = code(&src().join("pool/core.rs"));
    let body = text.split("pub struct Core {").nth(1).expect("struct Core in pool/core.rs");
    let body = body.split("\n}").next().unwrap();
    body.lines()
        .filter_map(|l| {
            let (head, _) = l.trim().split_once(':')?;
            let mut words: Vec<&str> = head.split_whitespace().collect();
            let name = words.pop()?.to_string();
            Some((words.join(" "), name))
        })
        .collect()
}

#[test]
fn cores_fields_are_visible_to_pool_only() {
    let fields = core_fields();
    assert!(fields.len() > 10, "read Core's fields: {fields:?}");
    for (vis, name) in &fields {
        assert!(vis.is_empty() || vis == "pub(super)", "Core.{name} is `{vis}`: visible beyond pool/");
    }
}

#[test]
fn snapshot_code_names_no_field_of_core() {
    let fields = core_fields();
    let dir = src().join("pool/snapshot");
    let mut read = 0;
    for entry in fs::read_dir(&dir).expect("pool/snapshot") {
        let path = entry.unwrap().path();
        let text = code(&path);
        read += 1;
        for (_, name) in &fields {
            for pattern in [format!("core.{name}"), format!("self.{name}")] {
                let hit = text.match_indices(&pattern).any(|(at, _)| {
                    let next = text[at + pattern.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '(')
                });
                assert!(!hit, "{} reads Core's field `{name}`; use pool/durable.rs", path.display());
            }
        }
    }
    assert!(read >= 3, "read the snapshot files");
}
