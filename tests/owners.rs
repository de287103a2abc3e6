//! State has owners (issues 13 and 24): `Core`'s fields are visible to `pool/` only, and only
//! the three parts that keep their own state behind their own methods are that visible (the
//! registry, the cell store, the context table), each with no public field of its own: the
//! clock, the counters, the config, the events, the availability log, the expiry queues and
//! the rest are private to `Core` (`pool/core.rs` and its parts in `pool/core/`). A context's
//! cooling count and pacing gap are private to `index/context.rs`, and the count changes only
//! from `Core`; a lease record changes only together with its queued end (`core/queues.rs`),
//! a resource's availability only together with the log (`core/availability.rs`). Snapshot
//! code (`src/pool/snapshot/`) reads and builds state through `pool/durable.rs`, never by
//! naming a field of `Core`. Reads the sources; comments are ignored.

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
const CORE_PARTS: [&str; 3] = ["reg", "cells", "ctxs"];

#[test]
fn cores_own_state_is_private_to_core_rs() {
    let fields = core_fields();
    for (vis, name) in &fields {
        if !CORE_PARTS.contains(&name.as_str()) {
            assert!(vis.is_empty(), "Core.{name} is `{vis}`: change it through a method of core.rs");
        }
    }
    for own in ["now", "revision", "fencing", "dirty", "cfg", "events", "log", "expiries"] {
        assert!(fields.iter().any(|(_, n)| n == own), "Core.{own} read from its struct: {fields:?}");
    }
}

#[test]
fn cores_parts_are_visible_to_pool_and_no_further() {
    let fields = core_fields();
    for part in CORE_PARTS {
        let vis = fields.iter().find(|(_, n)| n == part).map(|(v, _)| v.as_str());
        assert_eq!(vis, Some("pub(super)"), "Core.{part}: {fields:?}");
    }
}

/// The types of `Core`'s parts (and what they hold) keep their fields to themselves; the few
/// public ones name an identity, read through `&` only (`get`), never changed from outside.
#[test]
fn cores_parts_keep_their_own_fields_private() {
    let owners: [(&str, &str, &[&str]); 8] = [
        ("registry/mod.rs", "Registry", &[]),
        ("registry/resource.rs", "Resource", &["kind", "value", "display"]),
        ("index/cells.rs", "CellStore", &[]),
        ("index/cells.rs", "CellSlot", &["res", "ctx"]),
        ("index/contexts.rs", "Contexts", &[]),
        ("index/avail_log.rs", "AvailLog", &[]),
        ("pool/expiries.rs", "Expiries", &[]),
        ("index/context.rs", "Context", &["name"]),
    ];
    for (file, name, identity) in owners {
        let fields = struct_fields(file, name);
        assert!(!fields.is_empty(), "read {name}'s fields in {file}");
        for (vis, field) in &fields {
            let private = vis.is_empty() || vis == "pub(super)";
            assert!(private || identity.contains(&field.as_str()), "{name}.{field} is `{vis}` ({file})");
        }
    }
    // A resource is changed only through `Registry`: no `&mut Resource` leaves registry/.
    let reg = code(&src().join("registry/mod.rs"));
    assert!(
        reg.contains("    fn get_mut(&mut self, slot: u32) -> &mut Resource"),
        "Registry::get_mut is private"
    );
}

/// Every `.rs` file under `dir`, with its path relative to `src/`.
fn files_under(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![src().join(dir)];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).expect("a source folder") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src()).unwrap().to_string_lossy().into_owned();
                out.push((rel, code(&path)));
            }
        }
    }
    out
}

#[test]
fn a_lease_record_changes_with_its_queued_end_and_availability_with_the_log() {
    let rules = [
        (
            "pool/core/queues.rs",
            ["reg.add_lease(", "reg.extend_lease(", "reg.take_lease_if(", "reg.take_leases("],
        ),
        (
            "pool/core/availability.rs",
            ["reg.set_avail(", "log.record(", "log.clear(", "reg.set_order_cursor("],
        ),
    ];
    let files = files_under("pool");
    assert!(files.len() > 20, "read pool/ and its folders: {}", files.len());
    for (owner, calls) in rules {
        let mut seen = 0;
        for (file, text) in &files {
            for call in calls {
                if text.contains(call) {
                    assert_eq!(file, owner, "{file} calls `{call}`: that change belongs to {owner}");
                    seen += 1;
                }
            }
        }
        assert!(seen > 0, "found {owner}'s calls");
    }
}

#[test]
fn a_contexts_cooling_count_has_one_owner() {
    let fields = struct_fields("index/context.rs", "Context");
    for (vis, name) in &fields {
        assert!(vis.is_empty() || name == "name", "Context.{name} is `{vis}`: keep it behind a method");
    }
    assert!(fields.iter().any(|(_, n)| n == "cooling"), "Context.cooling read from its struct: {fields:?}");
    // The count and the queue of running cooldowns change together, in `Core` only (its
    // methods in `core/queues.rs`; `core/` is not read here).
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
            assert!(!text.contains(e), "{file} calls `{e}`: a cooldown starts and ends through Core");
        }
    }
    assert!(read >= 10, "read the pool files");
}
