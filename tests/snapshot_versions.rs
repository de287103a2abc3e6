//! Snapshot versions (SPEC §6): the engine writes version 3 and restores versions 1 to 3. A
//! version 1 document restores with `minGapMs`, `minGapMsByContext` and `maxCoolingPercent` at
//! their defaults and may not hold any of them; a version 2 or 3 document must hold all three;
//! a `registered` entry's `maxLeases` is version 3's (left out when 1; a version 1 or 2
//! document restores every resource with `maxLeases` 1); any other version is
//! `UNSUPPORTED_SNAPSHOT_VERSION`. Errors name the JSON path.

mod common;

use common::{ClockedPool, Draws, Harness, ManualClock, T0};
use repute::{ConfigPatch, Error};

const V2_DEFAULTS: &str = r#","minGapMs":0,"minGapMsByContext":{},"maxCoolingPercent":100}"#;

/// A version 2 snapshot with two resources (one blocked), a cooling cell and a healthy one, the
/// three version 2 fields at their defaults: what a version 2 engine wrote of this state (the
/// version 3 document of a pool with no `maxLeases` but 1 differs by its version alone).
fn v2_snapshot() -> String {
    as_version_2(&v3_snapshot())
}

/// The same state as the engine writes it today.
fn v3_snapshot() -> String {
    let mut h = Harness::with_patch(r#"{"recoverAfter":3,"halfOpenCauses":["BLOCKED"]}"#);
    h.reg("p");
    h.reg("q");
    h.fail("p", "c", repute::FailureType::Timeout);
    h.fail("p", "c", repute::FailureType::Timeout);
    h.ok("q", "c");
    h.block_secs("q", 60.0);
    h.snapshot()
}

/// The same document as a version 2 engine wrote it (nothing of version 3 in it).
fn as_version_2(v3: &str) -> String {
    assert!(v3.contains(r#""version":3,"#) && !v3.contains("maxLeases"), "{v3}");
    v3.replacen(r#""version":3,"#, r#""version":2,"#, 1)
}

/// The same state as written by a version 1 engine: no version 2 config fields.
fn as_version_1(v2: &str) -> String {
    assert!(v2.contains(r#""version":2,"#) && v2.contains(V2_DEFAULTS), "{v2}");
    v2.replacen(r#""version":2,"#, r#""version":1,"#, 1).replacen(V2_DEFAULTS, "}", 1)
}

fn restore(json: &str) -> Result<ClockedPool, Error> {
    ClockedPool::restore(json, None, ManualClock::new(T0), Draws::default().source())
}

fn invalid_snapshot(json: &str) -> String {
    match restore(json) {
        Err(Error::InvalidSnapshot(msg)) => msg,
        other => panic!("expected INVALID_SNAPSHOT, got {:?}", other.map(|_| "a pool")),
    }
}

#[test]
fn the_engine_writes_version_3() {
    let json = Harness::new().snapshot();
    assert!(json.starts_with(r#"{"format":"repute-snapshot","version":3,"revision":"#), "{json}");
}

#[test]
fn a_version_2_snapshot_restores_and_is_written_back_as_version_3() {
    let v2 = v2_snapshot();
    let mut pool = restore(&v2).unwrap();
    assert_eq!(pool.snapshot().unwrap(), v3_snapshot(), "the version 3 document of the same state");
    let views = pool.resources(&repute::Filter::default()).unwrap();
    assert!(views.iter().all(|v| v.max_leases == 1), "every resource holds one lease at a time");
}

#[test]
fn max_leases_in_a_snapshot_follows_the_version_rules() {
    let mut h = Harness::new();
    h.reg("p");
    let wide = repute::Registration { max_leases: Some(7), ..Default::default() };
    h.pool.register_with(repute::Kind::Proxy, "q", wide).unwrap();
    let v3 = h.snapshot();
    assert!(
        v3.contains(r#"{"kind":"PROXY","value":"p"},{"kind":"PROXY","value":"q","maxLeases":7}"#),
        "{v3}"
    );
    let mut back = restore(&v3).unwrap();
    assert_eq!(back.snapshot().unwrap(), v3, "restored byte for byte");
    let views = back.resources(&repute::Filter::default()).unwrap();
    assert_eq!(views.iter().map(|v| v.max_leases).collect::<Vec<_>>(), [1, 7]);
    // Version 3: 1 is left out, never written; a value outside 2..=1024 is refused, naming it.
    for bad in ["1", "0", "1025", "2.5", "-3", "null", "\"7\""] {
        let doc = v3.replacen(r#""maxLeases":7"#, &format!(r#""maxLeases":{bad}"#), 1);
        let msg = invalid_snapshot(&doc);
        assert!(msg.starts_with("registered[1].maxLeases"), "{bad}: {msg}");
    }
    let doc = v3.replacen(r#""maxLeases":7"#, r#""maxLeases":1024"#, 1);
    assert!(restore(&doc).is_ok(), "1024 is the largest");
    // Versions 1 and 2 hold no maxLeases.
    let v2 = v3.replacen(r#""version":3,"#, r#""version":2,"#, 1);
    let msg = invalid_snapshot(&v2);
    assert!(msg.starts_with("registered[1].maxLeases") && msg.contains("version 2"), "{msg}");
    let v1 = as_version_1(&v2);
    let msg = invalid_snapshot(&v1);
    assert!(msg.starts_with("registered[1].maxLeases") && msg.contains("version 1"), "{msg}");
}

#[test]
fn a_version_1_snapshot_restores_with_the_defaults_and_is_written_back_as_version_3() {
    let v2 = v2_snapshot();
    let v1 = as_version_1(&v2);
    let mut pool = restore(&v1).unwrap();
    let cfg = pool.config().clone();
    assert_eq!((cfg.min_gap_ms, cfg.min_gap_ms_by_context.len(), cfg.max_cooling_percent), (0, 0, 100));
    assert_eq!(
        (cfg.recover_after, cfg.half_open_causes.iter().count()),
        (3, 1),
        "the rest of the config is the file's"
    );
    assert_eq!(
        pool.snapshot().unwrap(),
        v3_snapshot(),
        "byte for byte the version 3 document of the same state"
    );
}

#[test]
fn a_version_1_snapshot_takes_a_restore_override_of_the_new_fields() {
    let v1 = as_version_1(&v2_snapshot());
    let patch =
        ConfigPatch::from_json(r#"{"minGapMs":250,"minGapMsByContext":{"c":9},"maxCoolingPercent":30}"#)
            .unwrap();
    let pool =
        ClockedPool::restore(&v1, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0))
            .unwrap();
    let cfg = pool.config();
    assert_eq!((cfg.min_gap_for("c"), cfg.min_gap_for("d"), cfg.max_cooling_percent), (9, 250, 30));
}

#[test]
fn a_version_1_snapshot_holding_a_version_2_config_field_is_invalid_snapshot() {
    let v1 = as_version_1(&v2_snapshot());
    for (field, value) in [("minGapMs", "0"), ("minGapMsByContext", "{}"), ("maxCoolingPercent", "100")] {
        let doc = v1.replacen(
            r#""eventBufferSize":65536}"#,
            &format!(r#""eventBufferSize":65536,"{field}":{value}}}"#),
            1,
        );
        assert_ne!(doc, v1);
        let msg = invalid_snapshot(&doc);
        assert!(msg.starts_with(&format!("config.{field}")), "{field}: the path is named: {msg}");
        assert!(msg.contains("version 1"), "{msg}");
    }
}

#[test]
fn a_version_1_config_must_otherwise_be_complete() {
    let v1 = as_version_1(&v2_snapshot());
    let doc = v1.replacen(r#""windowSize":10,"#, "", 1);
    assert_ne!(doc, v1);
    let msg = invalid_snapshot(&doc);
    assert!(msg.contains("config.windowSize") && msg.contains("missing"), "{msg}");
}

#[test]
fn a_version_2_snapshot_missing_a_version_2_config_field_is_invalid_snapshot() {
    let v2 = v2_snapshot();
    for (field, text) in [
        ("minGapMs", r#","minGapMs":0"#),
        ("minGapMsByContext", r#","minGapMsByContext":{}"#),
        ("maxCoolingPercent", r#","maxCoolingPercent":100"#),
    ] {
        let doc = v2.replacen(text, "", 1);
        assert_ne!(doc, v2, "{field}");
        let msg = invalid_snapshot(&doc);
        assert!(msg.starts_with(&format!("config.{field}")) && msg.contains("missing"), "{field}: {msg}");
    }
    // All three missing: the first is named.
    let msg = invalid_snapshot(&v2.replacen(V2_DEFAULTS, "}", 1));
    assert!(msg.starts_with("config.minGapMs:"), "{msg}");
}

#[test]
fn a_version_2_snapshot_config_field_out_of_range_is_invalid_snapshot_naming_it() {
    let v2 = v2_snapshot();
    for (from, to, path) in [
        (r#""minGapMs":0"#, r#""minGapMs":2147483649"#, "config.minGapMs"),
        (r#""minGapMs":0"#, r#""minGapMs":-1"#, "config.minGapMs"),
        (r#""maxCoolingPercent":100"#, r#""maxCoolingPercent":0"#, "config.maxCoolingPercent"),
        (r#""maxCoolingPercent":100"#, r#""maxCoolingPercent":101"#, "config.maxCoolingPercent"),
        (r#""minGapMsByContext":{}"#, r#""minGapMsByContext":{"c":1.5}"#, "config.minGapMsByContext.c"),
        (r#""minGapMsByContext":{}"#, r#""minGapMsByContext":{" ":1}"#, "config.minGapMsByContext"),
        (r#""minGapMsByContext":{}"#, r#""minGapMsByContext":{"c":1,"c":2}"#, "config.minGapMsByContext"),
        (r#""minGapMsByContext":{}"#, r#""minGapMsByContext":[]"#, "config.minGapMsByContext"),
    ] {
        let doc = v2.replacen(from, to, 1);
        assert_ne!(doc, v2, "{to}");
        let msg = invalid_snapshot(&doc);
        assert!(msg.starts_with(path), "{to}: {msg}");
    }
    // In range, the map restores in canonical order and is written back the same.
    let doc = v2.replacen(r#""minGapMsByContext":{}"#, r#""minGapMsByContext":{"a":1,"b":2147483648}"#, 1);
    let back = restore(&doc).unwrap().snapshot().unwrap();
    assert_eq!(back, doc.replacen(r#""version":2,"#, r#""version":3,"#, 1));
}

#[test]
fn other_versions_are_unsupported_snapshot_version() {
    let v2 = v2_snapshot();
    for version in ["0", "4", "99", "1.5", "2.5", "-1"] {
        let doc = v2.replacen(r#""version":2,"#, &format!(r#""version":{version},"#), 1);
        match restore(&doc) {
            Err(Error::UnsupportedSnapshotVersion(msg)) => {
                assert!(msg.contains("versions 1 to 3"), "{version}: says what it reads: {msg}")
            }
            other => panic!("version {version}: {:?}", other.map(|_| "a pool")),
        }
    }
    // Version 4 is refused before its fields are judged, even a version 1 or 2 shape.
    let doc = as_version_1(&v2).replacen(r#""version":1,"#, r#""version":4,"#, 1);
    assert!(matches!(restore(&doc), Err(Error::UnsupportedSnapshotVersion(_))));
    // A version that is not a number is a malformed document.
    let doc = v2.replacen(r#""version":2,"#, r#""version":"2","#, 1);
    assert!(invalid_snapshot(&doc).contains("version"));
    // 2.0 is the number 2.
    let doc = v2.replacen(r#""version":2,"#, r#""version":2.0,"#, 1);
    assert_eq!(restore(&doc).unwrap().snapshot().unwrap(), v3_snapshot());
}
