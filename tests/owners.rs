//! State has owners (issues 13 and 24): `Core`'s fields are visible to `pool/` only, and only
//! the parts that keep their own state behind their own methods are that visible: the clock,
//! the counters, the config, the events and the rest are private to `pool/core.rs`. A context's
//! cooling count and pacing gap are private to `index/context.rs`, and the count changes only
//! from `pool/core.rs`. Snapshot code (`src/pool/snapshot/`) reads and builds state through
//! `pool/durable.rs`, never by naming a field of `Core`. Reads the sources; comments are
//! ignored.

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
    struct_fields("pool/core.rs", "Core")
}

/// The fields of struct `name` in `file` as (visibility, name).
fn struct_fields(file: &str, name: &str) -> Vec<(String, String)> {
    let text = code(&src().join(file));
    let body = text.split(&format!("pub struct {name} {{")).nth(1).expect("the struct in its file");
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

/// The parts of `Core` that `pool/` may reach: each keeps its own fields behind its own methods.
const CORE_PARTS: [&str; 5] = ["reg", "cells", "ctxs", "log", "expiries"];

#[test]
fn cores_own_state_is_private_to_core_rs() {
    let fields = core_fields();
    for (vis, name) in &fields {
        if !CORE_PARTS.contains(&name.as_str()) {
            assert!(vis.is_empty(), "Core.{name} is `{vis}`: change it through a method of core.rs");
        }
    }
    for own in ["now", "revision", "fencing", "dirty", "cfg", "events"] {
        assert!(fields.iter().any(|(_, n)| n == own), "Core.{own} read from its struct: {fields:?}");
    }
}

#[test]
fn a_contexts_cooling_count_has_one_owner() {
    let fields = struct_fields("index/context.rs", "Context");
    for (vis, name) in &fields {
        assert!(vis.is_empty() || name == "name", "Context.{name} is `{vis}`: keep it behind a method");
    }
    assert!(fields.iter().any(|(_, n)| n == "cooling"), "Context.cooling read from its struct: {fields:?}");
    // The count and the queue of running cooldowns change together, in core.rs only.
    let events =
        [".cooled()", ".cooldown_ended()", "cooling_started(", "cooling_removed(", "pop_cooling_ended("];
    let dir = src().join("pool");
    let mut read = 0;
    for entry in fs::read_dir(&dir).expect("pool/") {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !file.ends_with(".rs") || file == "core.rs" || file == "expiries.rs" {
            continue;
        }
        read += 1;
        let text = code(&path);
        for e in events {
            assert!(!text.contains(e), "{file} calls `{e}`: a cooldown starts and ends through core.rs");
        }
    }
    assert!(read >= 10, "read the pool files");
}
