//! The config fields version 2 added (SPEC §3 "Groups, pacing and the cooling cap", "Config
//! ranges"; §9): `minGapMs`, `minGapMsByContext`, `maxCoolingPercent` — defaults, every range
//! boundary, the map's entry limit and key rule, canonical key order in the written config,
//! `Config::min_gap_for`, and a patch replacing the map whole (never merged key by key).

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{Config, ConfigPatch, Error};

const TWO_31: u64 = 1 << 31;

fn config(json: &str) -> Result<Config, Error> {
    Config::from_patch(&ConfigPatch::from_json(json)?)
}

/// The `INVALID_CONFIG` message of `json`, which must be refused.
fn refused(json: &str) -> String {
    match config(json) {
        Err(Error::InvalidConfig(msg)) => msg,
        other => panic!("{json} must be INVALID_CONFIG, got {other:?}"),
    }
}

/// `minGapMsByContext` with `n` entries `c0000`, `c0001`, … each `ms`.
fn gaps(n: usize, ms: u64) -> String {
    let entries: Vec<String> = (0..n).map(|i| format!(r#""c{i:04}":{ms}"#)).collect();
    format!(r#"{{"minGapMsByContext":{{{}}}}}"#, entries.join(","))
}

#[test]
fn defaults_are_off_empty_and_no_cap() {
    let c = Config::default();
    assert_eq!((c.min_gap_ms, c.min_gap_ms_by_context.len(), c.max_cooling_percent), (0, 0, 100));
    assert!(
        c.to_json().ends_with(
            r#""eventBufferSize":65536,"minGapMs":0,"minGapMsByContext":{},"maxCoolingPercent":100}"#
        ),
        "{}",
        c.to_json()
    );
}

#[test]
fn min_gap_ms_is_an_integer_from_0_to_2_to_the_31() {
    for ok in [0, 1, TWO_31] {
        assert_eq!(config(&format!(r#"{{"minGapMs":{ok}}}"#)).unwrap().min_gap_ms, ok);
    }
    for bad in ["2147483649", "-1", "1.5", "1e300", "\"5\"", "true", "null", "[]", "{}"] {
        let msg = refused(&format!(r#"{{"minGapMs":{bad}}}"#));
        assert!(msg.contains("minGapMs"), "{bad}: {msg}");
        if !bad.starts_with(['"', 't', 'n', '[', '{']) {
            assert!(msg.contains("0..=2147483648"), "{bad}: {msg}");
        }
    }
}

#[test]
fn max_cooling_percent_is_an_integer_from_1_to_100() {
    for ok in [1, 50, 100] {
        assert_eq!(config(&format!(r#"{{"maxCoolingPercent":{ok}}}"#)).unwrap().max_cooling_percent, ok);
    }
    for bad in ["0", "101", "-1", "99.5", "\"100\"", "null"] {
        let msg = refused(&format!(r#"{{"maxCoolingPercent":{bad}}}"#));
        assert!(msg.contains("maxCoolingPercent"), "{bad}: {msg}");
        if !bad.starts_with(['"', 'n']) {
            assert!(msg.contains("1..=100"), "{bad}: {msg}");
        }
    }
}

#[test]
fn each_gap_in_the_map_is_an_integer_from_0_to_2_to_the_31_and_named_by_its_key() {
    let c = config(r#"{"minGapMsByContext":{"a":0,"b":2147483648}}"#).unwrap();
    assert_eq!((c.min_gap_for("a"), c.min_gap_for("b")), (0, TWO_31));
    for bad in ["2147483649", "-1", "1.5", "\"7\"", "null", "true"] {
        let msg = refused(&format!(r#"{{"minGapMsByContext":{{"ok":1,"checkout-us":{bad}}}}}"#));
        assert!(msg.contains("minGapMsByContext"), "{bad}: {msg}");
        if !bad.starts_with(['"', 'n', 't']) {
            assert!(msg.contains("minGapMsByContext.checkout-us"), "{bad}: the key is named: {msg}");
            assert!(msg.contains("0..=2147483648"), "{bad}: {msg}");
        }
    }
    for bad in ["[]", "5", "null", "\"x\""] {
        let msg = refused(&format!(r#"{{"minGapMsByContext":{bad}}}"#));
        assert!(msg.contains("minGapMsByContext"), "{bad}: {msg}");
    }
}

#[test]
fn the_map_holds_at_most_4096_entries() {
    let c = config(&gaps(4096, 7)).unwrap();
    assert_eq!(c.min_gap_ms_by_context.len(), 4096);
    assert_eq!(c.min_gap_for("c4095"), 7);
    let msg = refused(&gaps(4097, 7));
    assert!(msg.contains("minGapMsByContext") && msg.contains("4096"), "{msg}");
}

#[test]
fn each_key_is_a_valid_context() {
    let long = "x".repeat(257);
    for (key, why) in [
        (String::new(), "blank"),
        (" \\t".to_owned(), "blank"),
        ("\\u3000".to_owned(), "blank"),
        (long.clone(), "256"),
        ("a\\u0000b".to_owned(), "control"),
        ("a\\u200bb".to_owned(), "format"),
    ] {
        let msg = refused(&format!(r#"{{"minGapMsByContext":{{"{key}":1}}}}"#));
        assert!(msg.contains("minGapMsByContext") && msg.contains(why), "{why}: {msg}");
        assert!(!msg.contains(&long), "an invalid key is not quoted: {msg}");
    }
    // 256 bytes, multi-byte characters included, is a valid context.
    let max = "é".repeat(128);
    assert_eq!(config(&format!(r#"{{"minGapMsByContext":{{"{max}":3}}}}"#)).unwrap().min_gap_for(&max), 3);
    let over = format!("{max}x");
    assert!(refused(&format!(r#"{{"minGapMsByContext":{{"{over}":3}}}}"#)).contains("256"));
}

#[test]
fn a_key_given_twice_is_refused() {
    let msg = refused(r#"{"minGapMsByContext":{"a":1,"b":2,"a":1}}"#);
    assert!(msg.contains("minGapMsByContext") && msg.contains("repeats"), "{msg}");
    // Two spellings of one key (an escape) are the same key.
    let msg = refused(r#"{"minGapMsByContext":{"ab":1,"a\u0062":2}}"#);
    assert!(msg.contains("repeats"), "{msg}");
}

#[test]
fn min_gap_for_takes_the_context_entry_else_min_gap_ms() {
    let c = config(r#"{"minGapMs":100,"minGapMsByContext":{"slow-site":5000,"fast-site":0}}"#).unwrap();
    assert_eq!(c.min_gap_for("slow-site"), 5000);
    assert_eq!(c.min_gap_for("fast-site"), 0, "an entry of 0 turns pacing off for its context");
    assert_eq!(c.min_gap_for("other"), 100);
    assert_eq!(c.min_gap_for("slow-sit"), 100, "keys match exactly");
    assert_eq!(Config::default().min_gap_for("any"), 0);
}

#[test]
fn the_map_is_written_in_utf8_byte_order_whatever_the_input_order() {
    let a = config(r#"{"minGapMsByContext":{"é":1,"b":2,"B":3,"a b":4,"ab":5,"~":6}}"#).unwrap();
    let b = config(r#"{"minGapMsByContext":{"~":6,"ab":5,"a b":4,"B":3,"b":2,"é":1}}"#).unwrap();
    assert_eq!(a, b);
    let json = a.to_json();
    assert!(json.contains(r#""minGapMsByContext":{"B":3,"a b":4,"ab":5,"b":2,"~":6,"é":1}"#), "{json}");
    // Keys that need JSON escapes are written escaped and read back equal.
    let c = config(r#"{"minGapMsByContext":{"say \"hi\"\\":9}}"#).unwrap();
    assert!(c.to_json().contains(r#""minGapMsByContext":{"say \"hi\"\\":9}"#), "{}", c.to_json());
    assert_eq!(config(&c.to_json()).unwrap(), c, "the written config reads back as itself");
}

#[test]
fn a_patch_replaces_the_map_whole_and_merges_nested_tables_key_by_key() {
    let mut h = Harness::with_patch(r#"{"minGapMsByContext":{"a":1,"b":2},"penalties":{"SLOW":9}}"#);
    let patch = ConfigPatch::from_json(r#"{"minGapMsByContext":{"c":3},"penalties":{"TIMEOUT":4}}"#).unwrap();
    assert!(h.pool.set_config(&patch).unwrap());
    let cfg = h.pool.config().clone();
    let map: Vec<(&str, u64)> = cfg.min_gap_ms_by_context.iter().collect();
    assert_eq!(map, [("c", 3)], "a and b are gone: the map was replaced, not merged");
    assert_eq!(cfg.min_gap_for("a"), 0);
    assert_eq!(
        (cfg.penalties[repute::FailureType::Slow], cfg.penalties[repute::FailureType::Timeout]),
        (9.0, 4.0)
    );
    // An empty map clears it; a patch without the key keeps it.
    let patch = ConfigPatch::from_json(r#"{"minGapMs":5}"#).unwrap();
    h.pool.set_config(&patch).unwrap();
    assert_eq!(h.pool.config().min_gap_for("c"), 3, "left out: kept");
    assert_eq!(h.pool.config().min_gap_for("d"), 5);
    h.pool.set_config(&ConfigPatch::from_json(r#"{"minGapMsByContext":{}}"#).unwrap()).unwrap();
    assert!(h.pool.config().min_gap_ms_by_context.is_empty());
}

#[test]
fn a_restore_override_replaces_the_map_whole() {
    let mut h = Harness::with_patch(r#"{"minGapMsByContext":{"a":1,"b":2},"maxCoolingPercent":40}"#);
    let json = h.snapshot();
    assert!(
        json.contains(r#""minGapMs":0,"minGapMsByContext":{"a":1,"b":2},"maxCoolingPercent":40}"#),
        "{json}"
    );
    let patch = ConfigPatch::from_json(r#"{"minGapMsByContext":{"b":7}}"#).unwrap();
    let pool =
        ClockedPool::restore(&json, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0))
            .unwrap();
    let map: Vec<(&str, u64)> = pool.config().min_gap_ms_by_context.iter().collect();
    assert_eq!(map, [("b", 7)]);
    assert_eq!(pool.config().max_cooling_percent, 40, "fields left out of the override are the snapshot's");
    // A bad override is INVALID_CONFIG, naming the field without the snapshot's `config.` prefix.
    let patch = ConfigPatch::from_json(r#"{"maxCoolingPercent":0}"#).unwrap();
    match ClockedPool::restore(&json, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0)) {
        Err(Error::InvalidConfig(msg)) => assert!(msg.starts_with("maxCoolingPercent"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn validate_checks_a_config_built_by_hand() {
    let bad = Config { max_cooling_percent: 0, ..Config::default() };
    assert!(matches!(bad.validate(), Err(Error::InvalidConfig(m)) if m.contains("maxCoolingPercent")));
    let bad = Config { min_gap_ms: TWO_31 + 1, ..Config::default() };
    assert!(matches!(bad.validate(), Err(Error::InvalidConfig(m)) if m.contains("minGapMs")));
    let good = config(&gaps(3, TWO_31)).unwrap();
    good.validate().unwrap();
}
