//! Validation (SPEC §3 "Config ranges", "Input limits", "Cell budget", "Restore"; §6; §9 errors):
//! every config field below / at / above its bounds, non-integers for integer fields, unknown
//! keys, wrong types, duplicate and unknown `halfOpenCauses`, nested partial maps; call arguments
//! (blank incl. Unicode white space, oversized value/context, bad latency, bad clock readings,
//! bad random draws) rejected with `INVALID_ARGUMENT` and nothing changed; `CAPACITY_EXCEEDED`
//! for resources and cells; `UNKNOWN_RESOURCE`; secrets never in error messages or events;
//! snapshot restore errors naming the JSON path, unsupported versions, config overrides, window
//! truncation, capacity on restore, byte-identical round trips and time starting at `takenAt`.

mod common;

use common::{ClockedPool, Draws, Harness, ManualClock, T0};
use repute::types::{CauseSet, PerFailure};
use repute::{BlockSpec, Config, ConfigPatch, Error, FailureType, Filter, Kind, Outcome, Pool};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;
const TWO_31: f64 = 2_147_483_648.0;

// ---------------------------------------------------------------------------------------------
// Config

/// The SPEC §3 defaults, typed in by hand.
fn spec_defaults() -> Config {
    Config {
        cool_after: 2,
        recover_after: 2,
        success_reward: 5.0,
        penalties: PerFailure([30.0, 15.0, 10.0, 5.0, 2.0]),
        cooldown_base_ms: PerFailure([3_600_000, 300_000, 120_000, 60_000, 30_000]),
        max_backoff_exponent: 6,
        exploration_floor: 1.0,
        lease_ttl_ms: 30_000,
        window_size: 10,
        half_open_causes: CauseSet::ALL,
        max_resources: 100_000,
        max_cells: 500_000,
        event_buffer_size: 65_536,
        min_gap_ms: 0,
        min_gap_ms_by_context: Default::default(),
        max_cooling_percent: 100,
    }
}

fn config(json: &str) -> Result<Config, Error> {
    Config::from_patch(&ConfigPatch::from_json(json)?)
}

/// JSON for `{path: v}` where path is `field` or `table.TYPE`.
fn patch_json(path: &str, v: f64) -> String {
    match path.split_once('.') {
        Some((table, key)) => format!(r#"{{"{table}":{{"{key}":{v}}}}}"#),
        None => format!(r#"{{"{path}":{v}}}"#),
    }
}

fn config_value(c: &Config, path: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let node = match path.split_once('.') {
        Some((table, key)) => &v[table][key],
        None => &v[path],
    };
    node.as_f64().unwrap_or_else(|| panic!("{path} in {v}"))
}

fn expect_invalid_config(r: Result<Config, Error>, field: &str, range_hint: &str, what: &str) {
    match r {
        Err(Error::InvalidConfig(msg)) => {
            assert!(msg.contains(field), "{what}: message {msg:?} must name {field}");
            assert!(
                msg.contains(range_hint),
                "{what}: message {msg:?} must state the range (…{range_hint}…)"
            );
        }
        other => panic!("{what}: expected InvalidConfig, got {other:?}"),
    }
}

/// (path, lo, hi, integer, hi as printed in the range)
fn ranges() -> Vec<(String, f64, f64, bool, &'static str)> {
    let mut v: Vec<(String, f64, f64, bool, &'static str)> = vec![
        ("coolAfter".into(), 1.0, 1000.0, true, "1000"),
        ("recoverAfter".into(), 1.0, 1000.0, true, "1000"),
        ("successReward".into(), 0.0, 200.0, false, "200"),
        ("maxBackoffExponent".into(), 0.0, 21.0, true, "21"),
        ("leaseTtlMs".into(), 1.0, TWO_31, true, "2147483648"),
        ("windowSize".into(), 1.0, 1024.0, true, "1024"),
        ("maxResources".into(), 1.0, 1e7, true, "10000000"),
        ("maxCells".into(), 1.0, 1e8, true, "100000000"),
        ("eventBufferSize".into(), 1.0, 1e7, true, "10000000"),
        ("minGapMs".into(), 0.0, TWO_31, true, "2147483648"),
        ("maxCoolingPercent".into(), 1.0, 100.0, true, "100"),
    ];
    for t in FailureType::ALL {
        v.push((format!("penalties.{t}"), 0.0, 200.0, false, "200"));
        v.push((format!("cooldownBaseMs.{t}"), 1.0, TWO_31, true, "2147483648"));
    }
    v
}

#[test]
fn defaults_are_the_spec_defaults() {
    assert_eq!(Config::default(), spec_defaults());
    assert_eq!(config("{}").unwrap(), spec_defaults());
    assert_eq!(*Harness::new().pool.config(), spec_defaults());
}

#[test]
fn every_numeric_field_is_checked_at_and_beyond_its_bounds() {
    for (path, lo, hi, integer, hi_text) in ranges() {
        let field = path.as_str();
        for ok in [lo, hi] {
            let c = config(&patch_json(field, ok))
                .unwrap_or_else(|e| panic!("{field} = {ok} must be accepted: {e}"));
            assert_eq!(config_value(&c, field), ok, "{field} = {ok} applied");
        }
        let below = if integer { lo - 1.0 } else { lo - 0.001 };
        let above = if integer { hi + 1.0 } else { hi + 0.001 };
        for bad in [below, above, -1e300, 1e300] {
            expect_invalid_config(
                config(&patch_json(field, bad)),
                field,
                hi_text,
                &format!("{field} = {bad}"),
            );
        }
        if integer {
            for frac in [lo + 0.5, hi - 0.25] {
                expect_invalid_config(
                    config(&patch_json(field, frac)),
                    field,
                    hi_text,
                    &format!("{field} = {frac} (not an integer)"),
                );
            }
        } else {
            // A fractional value inside the range is fine for a float field.
            let c = config(&patch_json(field, 12.75)).unwrap();
            assert_eq!(config_value(&c, field), 12.75, "{field}");
        }
    }
}

#[test]
fn exploration_floor_is_finite_at_least_2_to_the_minus_20_and_at_most_a_million() {
    for ok in [repute::config::MIN_EXPLORATION_FLOOR, 1e-6, 0.5, 1.0, 1e6] {
        let c = config(&patch_json("explorationFloor", ok)).unwrap();
        assert_eq!(c.exploration_floor, ok);
    }
    for bad in [0.0, -0.0, -1.0, 1e-7, 1e-9, 1e6 + 0.001, 1e300] {
        expect_invalid_config(
            config(&patch_json("explorationFloor", bad)),
            "explorationFloor",
            "1000000",
            &format!("explorationFloor = {bad}"),
        );
    }
}

#[test]
fn non_finite_numbers_are_rejected_for_every_field() {
    type MakePatch = Box<dyn Fn(f64) -> ConfigPatch>;
    let cases: Vec<(&str, MakePatch)> = vec![
        ("successReward", Box::new(|v| ConfigPatch { success_reward: Some(v), ..Default::default() })),
        ("explorationFloor", Box::new(|v| ConfigPatch { exploration_floor: Some(v), ..Default::default() })),
        (
            "penalties.TIMEOUT",
            Box::new(|v| ConfigPatch {
                penalties: Some(repute::config::PerFailurePatch { timeout: Some(v), ..Default::default() }),
                ..Default::default()
            }),
        ),
        (
            "cooldownBaseMs.BLOCKED",
            Box::new(|v| ConfigPatch {
                cooldown_base_ms: Some(repute::config::PerFailurePatch {
                    blocked: Some(v),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        ),
        ("coolAfter", Box::new(|v| ConfigPatch { cool_after: Some(v), ..Default::default() })),
        ("leaseTtlMs", Box::new(|v| ConfigPatch { lease_ttl_ms: Some(v), ..Default::default() })),
        ("windowSize", Box::new(|v| ConfigPatch { window_size: Some(v), ..Default::default() })),
    ];
    for (field, make) in cases {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            match Config::from_patch(&make(bad)) {
                Err(Error::InvalidConfig(msg)) => assert!(msg.contains(field), "{msg}"),
                other => panic!("{field} = {bad}: {other:?}"),
            }
        }
    }
}

#[test]
fn unknown_keys_and_wrong_types_are_invalid_config_naming_the_key() {
    let cases = [
        (r#"{"bogus":1}"#, "bogus"),
        (r#"{"cooldownMs":1}"#, "cooldownMs"),
        (r#"{"penalties":{"NOPE":1}}"#, "NOPE"),
        (r#"{"cooldownBaseMs":{"slow":1}}"#, "slow"),
        (r#"{"coolAfter":"2"}"#, "coolAfter"),
        (r#"{"penalties":5}"#, "penalties"),
        (r#"{"halfOpenCauses":"SLOW"}"#, "halfOpenCauses"),
        (r#"{"windowSize":4,"leaseTtlMs":true}"#, "leaseTtlMs"),
        (r#"{"coolAfter":2,"coolAfter":3}"#, "coolAfter"),
    ];
    for (json, name) in cases {
        match config(json) {
            Err(Error::InvalidConfig(msg)) => {
                assert!(msg.contains(name), "{json}: {msg:?} must name {name}")
            }
            other => panic!("{json}: expected InvalidConfig, got {other:?}"),
        }
    }
}

#[test]
fn half_open_causes_is_a_set_of_known_failure_types() {
    for json in [
        r#"{"halfOpenCauses":["SLOW","SLOW"]}"#,
        r#"{"halfOpenCauses":["BLOCKED","TIMEOUT","BLOCKED"]}"#,
        r#"{"halfOpenCauses":["NOPE"]}"#,
        r#"{"halfOpenCauses":["blocked"]}"#,
        r#"{"halfOpenCauses":["BLOCKED",""]}"#,
    ] {
        match config(json) {
            Err(Error::InvalidConfig(msg)) => {
                assert!(msg.contains("halfOpenCauses"), "{json}: {msg:?}")
            }
            other => panic!("{json}: expected InvalidConfig, got {other:?}"),
        }
    }
    let c = config(r#"{"halfOpenCauses":["TIMEOUT","BLOCKED"]}"#).unwrap();
    let set: Vec<FailureType> = c.half_open_causes.iter().collect();
    assert_eq!(set, vec![FailureType::Blocked, FailureType::Timeout]);
    let c = config(r#"{"halfOpenCauses":[]}"#).unwrap();
    assert_eq!(c.half_open_causes.iter().count(), 0);
}

#[test]
fn nested_partial_maps_change_only_the_given_keys() {
    let c = config(r#"{"penalties":{"SLOW":1}}"#).unwrap();
    let want = Config { penalties: PerFailure([30.0, 15.0, 10.0, 5.0, 1.0]), ..spec_defaults() };
    assert_eq!(c, want);
    let c = config(r#"{"cooldownBaseMs":{"BLOCKED":1000,"TIMEOUT":7},"coolAfter":4}"#).unwrap();
    let want = Config {
        cool_after: 4,
        cooldown_base_ms: PerFailure([1_000, 300_000, 120_000, 7, 30_000]),
        ..spec_defaults()
    };
    assert_eq!(c, want);
}

#[test]
fn an_invalid_field_rejects_the_whole_patch() {
    // coolAfter is valid, windowSize is not: nothing of it is applied (there is no Config).
    expect_invalid_config(config(r#"{"coolAfter":5,"windowSize":0}"#), "windowSize", "1024", "mixed patch");
    // Same through a restore override: the restore fails as a whole.
    let mut h = Harness::new();
    h.reg("p");
    let json = h.snapshot();
    let patch = ConfigPatch::from_json(r#"{"coolAfter":5,"windowSize":0}"#).unwrap();
    let r = ClockedPool::restore(&json, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0));
    assert!(matches!(r, Err(Error::InvalidConfig(_))), "{r:?}");
}

#[test]
fn deeply_nested_configs_and_snapshots_get_our_message_naming_the_field_never_a_recursion_error() {
    // The hosts refuse a config nested deeper than 32 levels before the engine sees it
    // (pkg-scripts/lib/pool.js); the engine's own readers are strict and stop at the first
    // value of a wrong type, so serde_json's recursion limit (128) is never what answers: the
    // message is ours and names the field, at any depth (issue 26).
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    for n in [127, 129, 5000] {
        let e = config(&format!(r#"{{"penalties":{}}}"#, deep(n))).unwrap_err().to_string();
        assert!(e.contains("penalties: invalid type") && !e.contains("recursion"), "{n}: {e}");
        let mut h = Harness::new();
        h.reg("p");
        let snap = h.snapshot();
        for (field, doc) in [
            ("config", snap.replacen(r#""config":{"#, &format!(r#""config":{{"coolAfter":{},"#, deep(n)), 1)),
            ("takenAt", snap.replacen(r#""takenAt":"#, &format!(r#""takenAt":{},"x":"#, deep(n)), 1)),
        ] {
            let r = ClockedPool::restore(&doc, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0));
            let e = r.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(field) && !e.contains("recursion"), "{n} {field}: {e}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Call arguments

struct Before {
    snap: String,
    rev: u64,
}

fn before(h: &mut Harness) -> Before {
    h.events();
    Before { snap: h.snapshot(), rev: h.pool.stats().unwrap().revision }
}

fn assert_unchanged(h: &mut Harness, b: &Before, what: &str) {
    assert_eq!(h.snapshot(), b.snap, "{what}: snapshot changed");
    assert_eq!(h.pool.stats().unwrap().revision, b.rev, "{what}: revision moved");
    assert!(h.events().is_empty(), "{what}: events emitted");
}

fn expect_invalid_argument<T: std::fmt::Debug>(r: Result<T, Error>, what: &str) {
    match r {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

const BLANKS: [&str; 10] = [
    "",
    " ",
    "\t",
    " \n\r ",
    "\u{3000}",
    "\u{2003}\u{2003}",
    "\u{A0}",
    "\u{85}",
    "\u{2028}",
    "\u{202F}\u{205F}\u{1680}",
];

/// A pool with `p` registered, a cell in `c` and a lease.
fn populated() -> Harness {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.ok("p", "c");
    let _ = h.pool.acquire_resource(Kind::Proxy, "q", "c").unwrap().unwrap();
    h
}

/// Every call that takes a value, with `v` as the value.
fn value_calls(h: &mut Harness, v: &str) {
    let what = |call: &str| format!("{call}({v:?})");
    expect_invalid_argument(h.pool.register(Kind::Proxy, v), &what("register"));
    expect_invalid_argument(h.pool.deregister(Kind::Proxy, v), &what("deregister"));
    expect_invalid_argument(h.pool.report(Kind::Proxy, v, "c", Outcome::success()), &what("report"));
    expect_invalid_argument(h.pool.block(Kind::Proxy, v, BlockSpec::Permanent), &what("block"));
    expect_invalid_argument(h.pool.unblock(Kind::Proxy, v), &what("unblock"));
    expect_invalid_argument(h.pool.acquire_resource(Kind::Proxy, v, "c"), &what("acquireResource"));
}

/// Every call that takes a context, with `c` as the context.
fn context_calls(h: &mut Harness, c: &str) {
    let what = |call: &str| format!("{call}({c:?})");
    expect_invalid_argument(h.pool.acquire(c), &what("acquire"));
    expect_invalid_argument(h.pool.report(Kind::Proxy, "p", c, Outcome::success()), &what("report"));
    expect_invalid_argument(h.pool.acquire_resource(Kind::Proxy, "p", c), &what("acquireResource"));
    expect_invalid_argument(h.pool.next_change_at(c), &what("nextChangeAt"));
    expect_invalid_argument(
        h.pool.resources(&Filter { context: Some(c.to_owned()), state: None, group: None }),
        &what("resources"),
    );
}

#[test]
fn blank_values_and_contexts_are_invalid_arguments_and_change_nothing() {
    let mut h = populated();
    let b = before(&mut h);
    for blank in BLANKS {
        value_calls(&mut h, blank);
        context_calls(&mut h, blank);
    }
    assert_unchanged(&mut h, &b, "blank arguments");
    // Surrounding white space is fine (values are opaque).
    assert!(h.pool.register(Kind::Proxy, " p ").unwrap());
}

/// Contexts are shown as they are (events, metric labels, leases), so one holding a credential
/// is refused, by the masking rule of values: with an `@` (`user:pass@host`, URLs with a
/// userinfo, `token@host:port`) and in the proxy lists' colon forms (issue 26), quoting nothing.
#[test]
fn contexts_holding_credentials_are_invalid_arguments_and_change_nothing() {
    let mut h = populated();
    let b = before(&mut h);
    for c in [
        "shopper:pw9SeKrit@shop.example",
        "https://shopper:pw9SeKrit@shop.example/cart",
        "pw9SeKrit@gate.example:8080",
        "gate.example.net:8080:shopper:pw9SeKrit",
        "10.0.0.1:1080:shopper:pw9SeKrit",
        "shopper:pw9SeKrit:10.0.0.1:1080",
        "gate.example.net:8080:pw9SeKrit",
        "[2001:db8::1]:8080:shopper:pw9SeKrit",
    ] {
        context_calls(&mut h, c);
        match h.pool.acquire(c) {
            Err(Error::InvalidArgument(msg)) => {
                assert!(msg.starts_with("context must not hold a credential"), "{c}: {msg}");
                assert!(!msg.contains("SeKrit"), "{c}: the message quotes nothing: {msg}");
            }
            other => panic!("{c}: {other:?}"),
        }
    }
    assert_unchanged(&mut h, &b, "contexts holding credentials");
    // Names, not credentials: an e-mail address, `name:name`, `host:port`, URLs without userinfo.
    for c in [
        "alice@example.com",
        "shop:eu",
        "shop:eu:fr",
        "shop.example:443",
        "https://shop.example:443/a:b",
        "checkout-us",
    ] {
        assert!(h.pool.next_change_at(c).is_ok(), "{c} is a name");
    }
}

/// Values and contexts holding control (Cc), format (Cf) or line/paragraph separator
/// characters: not blank (a zero-width space is not White_Space), still refused.
const HIDDEN: [&str; 14] = [
    "\u{200B}",
    "\u{200B}\u{200C}\u{200D}\u{2060}",
    "proxy-1\r\nRESOURCE_UNBLOCKED",
    "a\nb",
    "a\0b",
    "a\tb",
    "evil\u{202E}txt.exe",
    "\u{2066}x\u{2069}",
    "\u{FEFF}proxy-1",
    "x\u{7F}",
    "x\u{85}y",
    "x\u{2028}y",
    "x\u{E0041}",
    "x\u{AD}y",
];

#[test]
fn control_and_format_characters_are_invalid_arguments_naming_the_field() {
    let mut h = populated();
    let b = before(&mut h);
    for hidden in HIDDEN {
        value_calls(&mut h, hidden);
        context_calls(&mut h, hidden);
        for (e, field) in [
            (h.pool.register(Kind::Proxy, hidden).unwrap_err(), "value"),
            (h.pool.acquire(hidden).unwrap_err(), "context"),
        ] {
            let msg = e.detail();
            assert!(msg.starts_with(field), "{hidden:?}: {msg}");
            assert!(
                msg.contains("control or format characters") || msg.contains("blank"),
                "{hidden:?}: {msg}"
            );
        }
    }
    assert_unchanged(&mut h, &b, "hidden characters");
    // Renew and release of a real lease with the value or the context swapped for one.
    let lease = h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().unwrap();
    let b = before(&mut h);
    for hidden in HIDDEN {
        let bad_value = repute::Lease { value: hidden.into(), ..lease.clone() };
        let bad_context = repute::Lease { context: hidden.into(), ..lease.clone() };
        for l in [&bad_value, &bad_context] {
            expect_invalid_argument(h.pool.renew(l), &format!("renew {hidden:?}"));
            expect_invalid_argument(h.pool.release(l), &format!("release {hidden:?}"));
        }
    }
    assert_unchanged(&mut h, &b, "hidden characters in a lease");
    assert!(h.pool.release(&lease).unwrap());
    // Printable text of any script, and white space inside, is fine.
    for ok in ["é-ß-😀", "a b", "a\u{3000}b", "\u{0634}\u{0645}\u{0633}", "x\u{E000}"] {
        assert!(h.pool.register(Kind::Proxy, ok).unwrap(), "{ok:?}");
        h.pool.report(Kind::Proxy, "p", ok, Outcome::success()).unwrap();
    }
}

#[test]
fn a_snapshot_holding_hidden_characters_is_invalid_naming_the_path() {
    // Older engines accepted them; such a snapshot is refused with the path to fix (see
    // CHANGELOG), rather than restored into a pool whose calls could not name the resource.
    let mut v = base_snapshot();
    v["registered"][1]["value"] = "q\u{200B}".into();
    v["blocklist"][0]["value"] = "q\u{200B}".into();
    expect_invalid_snapshot(restore_value(&v), "registered[1].value", "zero-width space in a value");
    let mut v = base_snapshot();
    v["cells"][0]["context"] = "c\r\n".into();
    expect_invalid_snapshot(restore_value(&v), "cells[0].context", "CR LF in a context");
}

#[test]
fn values_over_1024_bytes_and_contexts_over_256_bytes_are_invalid() {
    let mut h = populated();
    let b = before(&mut h);
    let long_value = "x".repeat(1025);
    let long_utf8_value = "é".repeat(513); // 513 chars, 1026 bytes
    value_calls(&mut h, &long_value);
    value_calls(&mut h, &long_utf8_value);
    let long_ctx = "c".repeat(257);
    let long_utf8_ctx = "é".repeat(129); // 129 chars, 258 bytes
    context_calls(&mut h, &long_ctx);
    context_calls(&mut h, &long_utf8_ctx);
    assert_unchanged(&mut h, &b, "oversized arguments");

    // At the limits: accepted.
    let v1024 = "x".repeat(1024);
    let v1024_utf8 = "é".repeat(512);
    assert!(h.pool.register(Kind::Proxy, &v1024).unwrap());
    assert!(h.pool.register(Kind::Account, &v1024_utf8).unwrap());
    let c256 = "c".repeat(256);
    let c256_utf8 = "é".repeat(128);
    h.pool.report(Kind::Proxy, &v1024, &c256, Outcome::success()).unwrap();
    h.pool.report(Kind::Account, &v1024_utf8, &c256_utf8, Outcome::success()).unwrap();
    assert_eq!(h.pool.stats().unwrap().cells, 3);
}

#[test]
fn bad_latencies_are_invalid_arguments_and_change_nothing() {
    let mut h = populated();
    let b = before(&mut h);
    for bad in [-1.0, -0.001, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let ok = Outcome::Success { latency_ms: Some(bad) };
        let fail = Outcome::Failure { failure: FailureType::Slow, latency_ms: Some(bad) };
        expect_invalid_argument(h.pool.report(Kind::Proxy, "p", "c", ok), "success");
        expect_invalid_argument(h.pool.report(Kind::Proxy, "p", "new", fail), "failure");
    }
    assert_unchanged(&mut h, &b, "bad latency");
    h.pool.report(Kind::Proxy, "p", "c", Outcome::Success { latency_ms: Some(0.0) }).unwrap();
}

#[test]
fn bad_clock_readings_fail_every_call_and_change_nothing() {
    let mut h = populated();
    let q = h.pool.resource_id(Kind::Proxy, "q").unwrap();
    let token = h.view("q").lease.unwrap().token;
    let b = before(&mut h);
    let lease = h.view("q").lease.unwrap();
    let patch = ConfigPatch::from_json(r#"{"minGapMs": 50}"#).unwrap();
    let groups = [None, Some("g")];
    let two_52 = 4_503_599_627_370_496.0;
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -0.5, two_52 + 1.0, 1e300] {
        // The engine's own API: the reading is each call's first argument, `now`.
        let p: &mut Pool = &mut h.pool.pool;
        let w = |call: &str| format!("{call} with clock {bad}");
        expect_invalid_argument(p.register(bad, Kind::Proxy, "new"), &w("register"));
        expect_invalid_argument(p.register_in(bad, Kind::Proxy, "new", Some(Some("g"))), &w("registerIn"));
        expect_invalid_argument(p.deregister(bad, Kind::Proxy, "p"), &w("deregister"));
        expect_invalid_argument(p.acquire(bad, "c"), &w("acquire"));
        expect_invalid_argument(p.acquire_in(bad, "c", &groups), &w("acquireIn"));
        expect_invalid_argument(p.acquire_resource(bad, Kind::Proxy, "p", "c"), &w("acqRes"));
        expect_invalid_argument(p.report(bad, Kind::Proxy, "p", "c", Outcome::success()), &w("report"));
        expect_invalid_argument(p.report_lease(bad, q, token, Outcome::success()), &w("reportLease"));
        expect_invalid_argument(p.renew(bad, &lease), &w("renew"));
        expect_invalid_argument(p.renew_lease(bad, q, token), &w("renewLease"));
        expect_invalid_argument(p.release(bad, &lease), &w("release"));
        expect_invalid_argument(p.release_lease(bad, q, token), &w("releaseLease"));
        expect_invalid_argument(p.finish_lease(bad, q, token, Outcome::success(), None), &w("finishLease"));
        expect_invalid_argument(p.block(bad, Kind::Proxy, "p", BlockSpec::Permanent), &w("block"));
        expect_invalid_argument(p.unblock(bad, Kind::Proxy, "p"), &w("unblock"));
        expect_invalid_argument(p.snapshot(bad), &w("snapshot"));
        expect_invalid_argument(p.snapshot_part(bad, None), &w("snapshotPart head"));
        expect_invalid_argument(p.snapshot_part(bad, Some((Kind::Proxy, "p"))), &w("snapshotPart"));
        expect_invalid_argument(p.stats(bad), &w("stats"));
        expect_invalid_argument(p.resources(bad, &Filter::default()), &w("resources"));
        expect_invalid_argument(p.resource(bad, Kind::Proxy, "p"), &w("resource"));
        expect_invalid_argument(p.due_for_recovery_probe(bad), &w("probe"));
        expect_invalid_argument(p.next_change_at(bad, "c"), &w("nextChangeAt"));
        expect_invalid_argument(p.next_change_at_in(bad, "c", &groups), &w("nextChangeAtIn"));
        expect_invalid_argument(p.drain_events(bad), &w("drainEvents"));
        expect_invalid_argument(p.set_config(bad, &patch), &w("setConfig"));
    }
    assert_unchanged(&mut h, &b, "bad clock");
    assert_eq!(h.view("q").lease, Some(lease), "the lease survived");
    // 2^52 exactly is a valid reading.
    assert_eq!(h.pool.pool.stats(two_52).unwrap().now, 1 << 52);
}

#[test]
fn bad_random_draws_fail_acquire_and_change_nothing() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.ok("a", "c");
    let b = before(&mut h);
    for bad in [1.0, 1.5, -0.1, -1e-12, f64::NAN, f64::INFINITY] {
        for ctx in ["c", "fresh-ctx"] {
            h.draws.push(bad);
            expect_invalid_argument(h.pool.acquire(ctx), &format!("random {bad} in {ctx}"));
            assert_eq!(h.draws.remaining(), 0);
        }
    }
    assert_unchanged(&mut h, &b, "bad random");
    assert_eq!(h.pool.stats().unwrap().leased, 0);
    // The edges of [0, 1) are fine.
    for ok in [0.0, 0.999_999_999_999_999_9] {
        h.draws.push(ok);
        let l = h.pool.acquire("c").unwrap().unwrap();
        h.pool.release(&l).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Capacity and unknown resources

#[test]
fn registering_past_max_resources_is_capacity_exceeded_and_changes_nothing() {
    let mut h = Harness::with_patch(r#"{"maxResources":2}"#);
    h.reg("a");
    h.reg("b");
    let b = before(&mut h);
    let e = h.pool.register(Kind::Proxy, "c").unwrap_err();
    assert!(matches!(e, Error::CapacityExceeded(_)), "{e:?}");
    let e = h.pool.register(Kind::Account, "a").unwrap_err();
    assert_eq!(e.code(), "CAPACITY_EXCEEDED");
    assert_unchanged(&mut h, &b, "register past maxResources");
    // Re-registering an existing resource at the limit is fine (idempotent).
    assert!(!h.pool.register(Kind::Proxy, "a").unwrap());
    // After a removal there is room again.
    assert!(h.pool.deregister(Kind::Proxy, "b").unwrap());
    assert!(h.pool.register(Kind::Proxy, "c").unwrap());
}

#[test]
fn a_report_creating_a_cell_past_max_cells_is_capacity_exceeded() {
    let mut h = Harness::with_patch(r#"{"maxCells":2}"#);
    h.reg("a");
    h.reg("b");
    h.ok("a", "c1");
    h.ok("a", "c2");
    let b = before(&mut h);
    for (v, ctx) in [("a", "c3"), ("b", "c1")] {
        let e = h.pool.report(Kind::Proxy, v, ctx, Outcome::failure(FailureType::Slow)).unwrap_err();
        assert!(matches!(e, Error::CapacityExceeded(_)), "{v}/{ctx}: {e:?}");
    }
    assert_unchanged(&mut h, &b, "report past maxCells");
    // Existing cells at the limit still take reports.
    h.ok("a", "c1");
    h.fail("a", "c2", FailureType::Timeout);
    assert_eq!(h.cell("a", "c1").score, 10.0);
    assert_eq!(h.cell("a", "c2").score, 0.0);
    assert_eq!(h.pool.stats().unwrap().cells, 2);
    // acquire in new contexts is not limited (it creates no cell).
    h.draws.push(0.0);
    let l = h.acquire("c9").unwrap();
    h.pool.release(&l).unwrap();
    // Removing a resource frees its cells' budget.
    assert!(h.pool.deregister(Kind::Proxy, "a").unwrap());
    h.ok("b", "c1");
    h.ok("b", "c3");
    assert_eq!(h.pool.stats().unwrap().cells, 2);
}

#[test]
fn calls_on_unregistered_resources_are_unknown_resource() {
    let mut h = populated();
    let b = before(&mut h);
    for (kind, v) in [(Kind::Proxy, "ghost"), (Kind::Session, "p")] {
        let errs = [
            h.pool.report(kind, v, "c", Outcome::success()).unwrap_err(),
            h.pool.block(kind, v, BlockSpec::Permanent).unwrap_err(),
            h.pool.block(kind, v, BlockSpec::Seconds(1.0)).unwrap_err(),
            h.pool.unblock(kind, v).unwrap_err(),
            h.pool.acquire_resource(kind, v, "c").unwrap_err(),
        ];
        for e in errs {
            assert!(matches!(e, Error::UnknownResource(_)), "{kind}/{v}: {e:?}");
        }
        // deregister of an unknown resource is a plain false.
        assert!(!h.pool.deregister(kind, v).unwrap());
    }
    assert_unchanged(&mut h, &b, "unknown resources");
}

#[test]
fn secrets_never_appear_in_error_messages_or_events() {
    for value in [
        "http://user:hunter2@host.example:8080",
        "socks5://user:hunter2@host.example:8080/path",
        "user:hunter2@host.example:8080",
        "host.example:8080:user:hunter2",
        "user:hunter2:host.example:8080",
        "https://host.example:8080/?user=x&password=hunter2",
    ] {
        let mut h = Harness::new();
        let errs = [
            h.pool.report(Kind::Proxy, value, "c", Outcome::success()).unwrap_err(),
            h.pool.block(Kind::Proxy, value, BlockSpec::Permanent).unwrap_err(),
            h.pool.unblock(Kind::Proxy, value).unwrap_err(),
            h.pool.acquire_resource(Kind::Proxy, value, "c").unwrap_err(),
        ];
        for e in errs {
            assert_eq!(e.code(), "UNKNOWN_RESOURCE");
            for text in [e.to_string(), format!("{e:?}"), e.detail().to_owned()] {
                assert!(!text.contains("hunter2"), "{value}: {text}");
            }
        }
        // Events carry the redacted value; the lease (which the worker must use) the real one.
        h.pool.register(Kind::Proxy, value).unwrap();
        let lease = h.acquire("c").unwrap();
        assert_eq!(&*lease.value, value);
        h.pool.report(Kind::Proxy, value, "c", Outcome::failure(FailureType::Blocked)).unwrap();
        h.pool.report(Kind::Proxy, value, "c", Outcome::failure(FailureType::Blocked)).unwrap();
        h.pool.block(Kind::Proxy, value, BlockSpec::Permanent).unwrap();
        h.pool.release(&lease).unwrap();
        h.pool.unblock(Kind::Proxy, value).unwrap();
        let events = h.events();
        assert!(events.len() >= 6, "{events:?}");
        for e in &events {
            let (_, shown) = e.resource.as_ref().expect("resource event");
            assert!(!shown.contains("hunter2"), "{value}: {e:?}");
            assert!(shown.contains("host.example:8080"), "{value}: {e:?}");
            assert!(shown.contains("user"), "{value}: the user name stays: {e:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Snapshot restore

/// A snapshot with two resources (one blocked), a cooling cell with a two-entry window.
fn base_snapshot() -> serde_json::Value {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.pool
        .report(
            Kind::Proxy,
            "p",
            "c",
            Outcome::Failure { failure: FailureType::Timeout, latency_ms: Some(12.5) },
        )
        .unwrap();
    h.fail("p", "c", FailureType::Timeout);
    h.block_secs("q", 60.0);
    serde_json::from_str(&h.snapshot()).unwrap()
}

fn restore_value(v: &serde_json::Value) -> Result<ClockedPool, Error> {
    restore_str(&v.to_string())
}

fn restore_str(json: &str) -> Result<ClockedPool, Error> {
    ClockedPool::restore(json, None, ManualClock::new(T0), Draws::default().source())
}

fn expect_invalid_snapshot(r: Result<ClockedPool, Error>, path: &str, what: &str) {
    match r {
        Err(Error::InvalidSnapshot(msg)) => {
            assert!(msg.contains(path), "{what}: message {msg:?} must contain {path:?}")
        }
        other => panic!("{what}: expected InvalidSnapshot, got {other:?}"),
    }
}

#[test]
fn the_base_snapshot_restores() {
    // Guards the mutation tests below: the unmodified document is valid.
    let mut pool = restore_value(&base_snapshot()).unwrap();
    assert_eq!(pool.stats().unwrap().cells, 1);
}

#[test]
fn objects_written_as_arrays_are_refused() {
    // serde's derived readers also take a struct as an array of its fields' values in
    // declaration order; the format has no such form (SPEC §6), in a config or a snapshot.
    match config("[2, 2]") {
        Err(Error::InvalidConfig(msg)) => {
            assert_eq!(msg, "invalid type: sequence, expected struct ConfigPatch")
        }
        other => panic!("{other:?}"),
    }
    match config(r#"{"penalties":[30, 15]}"#) {
        Err(Error::InvalidConfig(msg)) => assert!(msg.starts_with("penalties"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let mut v = base_snapshot();
    let cell = v["cells"][0].as_object().unwrap().values().cloned().collect::<Vec<_>>();
    v["cells"][0] = serde_json::Value::Array(cell);
    expect_invalid_snapshot(
        restore_value(&v),
        "invalid type: sequence, expected struct CellIn",
        "cell as array",
    );
    let mut v = base_snapshot();
    let config = v["config"].as_object().unwrap().values().cloned().collect::<Vec<_>>();
    v["config"] = serde_json::Value::Array(config);
    expect_invalid_snapshot(restore_value(&v), "config: invalid type: sequence", "config as array");
}

#[test]
fn malformed_snapshots_name_the_json_path() {
    type Mutation = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, &str, Mutation)> = vec![
        // Unknown keys are not quoted: they may be fragments of a value (see the test below).
        (
            "unknown top-level field",
            "unknown field, expected one of `format`",
            Box::new(|v| v["bogus"] = 1.into()),
        ),
        ("unknown cell field", "cells[0]: unknown field", Box::new(|v| v["cells"][0]["extra"] = 1.into())),
        ("wrong type", "cells[0].score", Box::new(|v| v["cells"][0]["score"] = "high".into())),
        ("out-of-range score", "cells[0].score", Box::new(|v| v["cells"][0]["score"] = 150.into())),
        ("bad state enum", "cells[0].state", Box::new(|v| v["cells"][0]["state"] = "SLEEPING".into())),
        ("bad kind enum", "registered[1].kind", Box::new(|v| v["registered"][1]["kind"] = "proxy".into())),
        (
            "bad cause enum",
            "cells[0].cooldownCause",
            Box::new(|v| v["cells"][0]["cooldownCause"] = "NOPE".into()),
        ),
        (
            "bad window label",
            "cells[0].window[1]",
            Box::new(|v| v["cells"][0]["window"][1][0] = "MEH".into()),
        ),
        (
            "negative window latency",
            "cells[0].window[0]",
            Box::new(|v| v["cells"][0]["window"][0][1] = (-1).into()),
        ),
        (
            "fractional counter",
            "cells[0].consecutiveFailures",
            Box::new(|v| v["cells"][0]["consecutiveFailures"] = 1.5.into()),
        ),
        ("negative takenAt", "takenAt", Box::new(|v| v["takenAt"] = (-1).into())),
        ("negative revision", "revision", Box::new(|v| v["revision"] = (-1).into())),
        ("nextEventSeq 0", "nextEventSeq", Box::new(|v| v["nextEventSeq"] = 0.into())),
        (
            "fencing beyond 2^53 − 1",
            "fencingHighWater",
            Box::new(|v| v["fencingHighWater"] = 9_007_199_254_740_992u64.into()),
        ),
        ("config out of range", "config.coolAfter", Box::new(|v| v["config"]["coolAfter"] = 0.into())),
        (
            "config nested out of range",
            "config.penalties.SLOW",
            Box::new(|v| v["config"]["penalties"]["SLOW"] = 201.into()),
        ),
        ("config unknown key", "config: unknown field", Box::new(|v| v["config"]["nope"] = 1.into())),
        (
            "missing top-level field",
            "fencingHighWater",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("fencingHighWater");
            }),
        ),
        (
            "cell for an unregistered resource",
            "cells[0].value",
            Box::new(|v| v["cells"][0]["value"] = "ghost".into()),
        ),
        (
            "duplicate resource",
            "registered[2]",
            Box::new(|v| {
                let dup = v["registered"][0].clone();
                v["registered"].as_array_mut().unwrap().push(dup);
            }),
        ),
        (
            // Apart in the document (another resource's cell between them): found after sorting.
            "a second cell for one resource and context",
            "cells: a second cell for the same resource and context",
            Box::new(|v| {
                let (mut other, again) = (v["cells"][0].clone(), v["cells"][0].clone());
                other["value"] = "q".into();
                v["cells"].as_array_mut().unwrap().extend([other, again]);
            }),
        ),
        (
            "block for an unregistered resource",
            "blocklist[0].value",
            Box::new(|v| v["blocklist"][0]["value"] = "ghost".into()),
        ),
        (
            "window longer than windowSize",
            "cells[0].window",
            Box::new(|v| v["config"]["windowSize"] = 1.into()),
        ),
        ("blank context", "cells[0].context", Box::new(|v| v["cells"][0]["context"] = " ".into())),
        // Impossible states (a snapshot the engine never writes) are refused, with the path.
        (
            "cell without its cooldownUntil key",
            "cells[0]: missing field `cooldownUntil`",
            Box::new(|v| {
                v["cells"][0].as_object_mut().unwrap().remove("cooldownUntil");
            }),
        ),
        (
            "cell without its cooldownCause key",
            "cells[0]: missing field `cooldownCause`",
            Box::new(|v| {
                v["cells"][0].as_object_mut().unwrap().remove("cooldownCause");
            }),
        ),
        (
            "a permanent block with until: null",
            "blocklist[0].until",
            Box::new(|v| {
                v["blocklist"][0] =
                    serde_json::json!({"kind": "PROXY", "value": "q", "until": null, "permanent": true});
            }),
        ),
        (
            "a block with permanent: false",
            "blocklist[0].permanent",
            Box::new(|v| {
                v["blocklist"][0] = serde_json::json!({"kind": "PROXY", "value": "q", "permanent": false});
            }),
        ),
        (
            "RECOVERING without a cooldown",
            "cells[0]: a RECOVERING cell",
            Box::new(|v| {
                let c = &mut v["cells"][0];
                c["state"] = "RECOVERING".into();
                c["cooldownUntil"] = serde_json::Value::Null;
                c["cooldownCause"] = serde_json::Value::Null;
            }),
        ),
        (
            "RECOVERING before its cooldown ended",
            "cells[0].cooldownUntil",
            Box::new(|v| v["cells"][0]["state"] = "RECOVERING".into()),
        ),
        (
            "HEALTHY with a cooldown still running",
            "cells[0].cooldownUntil",
            Box::new(|v| v["cells"][0]["state"] = "HEALTHY".into()),
        ),
        (
            "a cell on neither streak",
            "cells[0]: exactly one of consecutiveFailures and consecutiveSuccesses",
            Box::new(|v| v["cells"][0]["consecutiveFailures"] = 0.into()),
        ),
        (
            "a cell with an empty window",
            "cells[0].window",
            Box::new(|v| v["cells"][0]["window"] = serde_json::json!([])),
        ),
        (
            "a newest outcome against the streak",
            "cells[0].window: must end with an outcome of the cell's streak",
            Box::new(|v| v["cells"][0]["window"][1] = serde_json::json!(["OK", null])),
        ),
    ];
    for (what, path, mutate) in cases {
        let mut v = base_snapshot();
        mutate(&mut v);
        expect_invalid_snapshot(restore_value(&v), path, what);
    }
}

#[test]
fn a_json_syntax_error_says_where() {
    let text = base_snapshot().to_string();
    let cut = text.find("\"cells\"").unwrap() + 20;
    match restore_str(&format!("{}\n", &text[..cut])) {
        Err(Error::InvalidSnapshot(msg)) => {
            assert!(msg.contains("not valid JSON") && msg.contains("line 1 column"), "{msg}");
            assert!(msg.starts_with("cells[0]"), "the path where it broke: {msg}");
        }
        other => panic!("{other:?}"),
    }
    match restore_str("{\"format\": \"repute-snapshot\",\n \"version\": 1,\n oops}") {
        Err(Error::InvalidSnapshot(msg)) => assert!(msg.contains("line 3 column 2"), "{msg}"),
        other => panic!("{other:?}"),
    }
    // Valid JSON of another type is not a syntax error, and a syntax error is not that.
    for (text, want) in [
        ("[]", "must be a JSON object"),
        ("42", "must be a JSON object"),
        ("{", "not valid JSON, at line 1 column 1"),
        ("", "not valid JSON, at line 1 column 0"),
    ] {
        match restore_str(text) {
            Err(Error::InvalidSnapshot(msg)) => assert!(msg.contains(want), "{text:?}: {msg}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn snapshot_errors_never_quote_the_documents_text() {
    // A damaged or hand-edited snapshot with a secret where the parser complains: the message
    // names the place and the problem, never the text.
    let secret = "hunter2";
    type Mutation = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        ("cells[0].score: invalid type: string", Box::new(|v| v["cells"][0]["score"] = "u:hunter2@h".into())),
        ("cells[0]: unknown field", Box::new(|v| v["cells"][0]["u:hunter2@h"] = 1.into())),
        ("unknown field", Box::new(|v| v["hunter2"] = 1.into())),
        ("registered[0].kind: must be", Box::new(|v| v["registered"][0]["kind"] = "hunter2".into())),
        ("cells[0].state", Box::new(|v| v["cells"][0]["state"] = "hunter2".into())),
        (
            "registered[0].value: invalid type: map",
            Box::new(|v| v["registered"][0]["value"] = serde_json::json!({"hunter2": 1})),
        ),
        (
            "config.halfOpenCauses",
            Box::new(|v| v["config"]["halfOpenCauses"] = serde_json::json!(["hunter2"])),
        ),
    ];
    for (want, mutate) in cases {
        let mut v = base_snapshot();
        mutate(&mut v);
        let text = v.to_string();
        match restore_str(&text) {
            Err(Error::InvalidSnapshot(msg)) => {
                assert!(msg.starts_with(want), "{want}: {msg}");
                assert!(!msg.contains(secret), "{want}: {msg}");
            }
            other => panic!("{want}: expected InvalidSnapshot, got {other:?}"),
        }
    }
    // Not an object, cut short, or a value broken out of its string.
    let good = base_snapshot().to_string();
    let broken = good.replacen(r#""value":"q""#, r#""value":"q" "hunter2","#, 1);
    for text in [
        r#""hunter2""#.to_owned(),
        format!(r#"["hunter2", {good}]"#),
        good[..good.len() / 2].to_owned(),
        broken,
    ] {
        match restore_str(&text) {
            Err(Error::InvalidSnapshot(msg)) => assert!(!msg.contains(secret), "{text}: {msg}"),
            other => panic!("{text}: expected InvalidSnapshot, got {other:?}"),
        }
    }
}

#[test]
fn a_missing_config_field_is_named_by_its_path() {
    let mut v = base_snapshot();
    v["config"].as_object_mut().unwrap().remove("coolAfter");
    expect_invalid_snapshot(restore_value(&v), "config.coolAfter", "missing coolAfter");
    let mut v = base_snapshot();
    v["config"]["penalties"].as_object_mut().unwrap().remove("SLOW");
    expect_invalid_snapshot(restore_value(&v), "config.penalties.SLOW", "missing SLOW");
}

#[test]
fn a_missing_config_field_is_invalid_snapshot() {
    let mut v = base_snapshot();
    v["config"].as_object_mut().unwrap().remove("coolAfter");
    expect_invalid_snapshot(restore_value(&v), "config", "missing coolAfter");
}

#[test]
fn duplicate_keys_are_invalid_snapshot() {
    let json = base_snapshot().to_string();
    assert!(json.starts_with('{'));
    let dup = format!("{{\"revision\":1,{}", &json[1..]);
    expect_invalid_snapshot(restore_str(&dup), "revision", "duplicate revision");
    // A duplicate inside a cell.
    let dup = json.replacen("\"score\":", "\"score\":1,\"score\":", 1);
    match restore_str(&dup) {
        Err(Error::InvalidSnapshot(msg)) => {
            assert!(msg.contains("cells[0]") && msg.contains("score"), "{msg}")
        }
        other => panic!("duplicate score: {other:?}"),
    }
}

#[test]
fn an_unknown_version_is_unsupported_snapshot_version() {
    for version in [0, 4, 99] {
        let mut v = base_snapshot();
        v["version"] = version.into();
        let r = restore_value(&v);
        assert!(matches!(r, Err(Error::UnsupportedSnapshotVersion(_))), "version {version}: {r:?}");
        // Even when the rest of the document has another shape.
        v["shards"] = serde_json::json!([1, 2]);
        v.as_object_mut().unwrap().remove("cells");
        let r = restore_value(&v);
        assert!(
            matches!(r, Err(Error::UnsupportedSnapshotVersion(_))),
            "version {version} with other fields: {r:?}"
        );
    }
    let mut v = base_snapshot();
    v["format"] = "something-else".into();
    expect_invalid_snapshot(restore_value(&v), "format", "wrong format");
    expect_invalid_snapshot(restore_str("[1,2]"), "", "not an object");
}

#[test]
fn restore_applies_a_config_override_on_top_of_the_snapshot_config() {
    let mut h = Harness::with_patch(r#"{"windowSize":7,"penalties":{"SLOW":9}}"#);
    h.reg("p");
    let json = h.snapshot();
    let patch = ConfigPatch::from_json(r#"{"coolAfter":5,"penalties":{"BLOCKED":1}}"#).unwrap();
    let pool =
        ClockedPool::restore(&json, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0))
            .unwrap();
    let want = Config {
        cool_after: 5,
        window_size: 7,
        penalties: PerFailure([1.0, 15.0, 10.0, 5.0, 9.0]),
        ..spec_defaults()
    };
    assert_eq!(*pool.config(), want);
    // Without an override the snapshot's config is used as is.
    let pool =
        ClockedPool::restore(&json, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0)).unwrap();
    assert_eq!(
        *pool.config(),
        Config { window_size: 7, penalties: PerFailure([30.0, 15.0, 10.0, 5.0, 9.0]), ..spec_defaults() }
    );
}

#[test]
fn a_smaller_window_size_on_restore_keeps_the_newest_outcomes() {
    let mut h = Harness::new();
    h.reg("p");
    for ms in 1..=5 {
        h.pool.report(Kind::Proxy, "p", "c", Outcome::Success { latency_ms: Some(f64::from(ms)) }).unwrap();
    }
    let json = h.snapshot();
    let patch = ConfigPatch::from_json(r#"{"windowSize":2}"#).unwrap();
    let mut pool =
        ClockedPool::restore(&json, Some(&patch), ManualClock::new(T0), repute::Randomness::host(|| 0.0))
            .unwrap();
    let snap: serde_json::Value = serde_json::from_str(&pool.snapshot().unwrap()).unwrap();
    assert_eq!(snap["cells"][0]["window"], serde_json::json!([["OK", 4], ["OK", 5]]));
    assert_eq!(snap["config"]["windowSize"], 2);
}

#[test]
fn limits_smaller_than_the_snapshot_are_capacity_exceeded() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.ok("a", "c1");
    h.ok("a", "c2");
    let json = h.snapshot();
    for patch in [r#"{"maxResources":1}"#, r#"{"maxCells":1}"#] {
        let p = ConfigPatch::from_json(patch).unwrap();
        let r = ClockedPool::restore(&json, Some(&p), ManualClock::new(T0), repute::Randomness::host(|| 0.0));
        assert!(matches!(r, Err(Error::CapacityExceeded(_))), "{patch}: {r:?}");
    }
    // Exactly at the limits: fine.
    let p = ConfigPatch::from_json(r#"{"maxResources":2,"maxCells":2}"#).unwrap();
    assert!(
        ClockedPool::restore(&json, Some(&p), ManualClock::new(T0), repute::Randomness::host(|| 0.0)).is_ok()
    );
}

/// A pool in a varied state: non-default config, kinds, escapes, cooling/recovering cells,
/// fractional scores and latencies, temporary and permanent blocks, leases, events.
fn rich() -> Harness {
    let mut h = Harness::with_patch(r#"{"successReward":2.5,"explorationFloor":0.25,"windowSize":4}"#);
    let values = [
        (Kind::Proxy, "http://u:pw@h:1"),
        (Kind::Proxy, "quote\"back\\slash"),
        (Kind::Account, "alice@example.com"),
        (Kind::Session, "é-ß-😀"),
    ];
    for (k, v) in values {
        h.pool.register(k, v).unwrap();
    }
    let (k0, v0) = values[0];
    for i in 0..6 {
        h.pool.report(k0, v0, "ctx-😀", Outcome::Success { latency_ms: Some(0.125 * f64::from(i)) }).unwrap();
    }
    h.pool.report(k0, v0, "b", Outcome::failure(FailureType::Timeout)).unwrap();
    h.pool.report(k0, v0, "b", Outcome::failure(FailureType::Timeout)).unwrap();
    h.at(120_000.0);
    h.pool.report(k0, v0, "b", Outcome::success()).unwrap(); // RECOVERING
    let (k1, v1) = values[1];
    h.pool.report(k1, v1, "b", Outcome::failure(FailureType::Blocked)).unwrap();
    h.pool.report(k1, v1, "b", Outcome::failure(FailureType::Blocked)).unwrap(); // COOLING 2 h
    h.pool.block(values[2].0, values[2].1, BlockSpec::Seconds(90.5)).unwrap();
    h.pool.block(values[3].0, values[3].1, BlockSpec::Permanent).unwrap();
    h.draws.push(0.3);
    let _lease = h.acquire("ctx-😀");
    h
}

#[test]
fn restore_then_snapshot_is_byte_identical() {
    let mut h = rich();
    h.at(125_000.0);
    let json = h.snapshot();
    let clock = ManualClock::new(T0 + 125_000.0);
    let mut pool = ClockedPool::restore(&json, None, clock, repute::Randomness::host(|| 0.0)).unwrap();
    assert_eq!(pool.snapshot().unwrap(), json);
    // Twice round.
    let again = pool.snapshot().unwrap();
    let mut pool2 =
        ClockedPool::restore(&again, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0)).unwrap();
    assert_eq!(pool2.snapshot().unwrap(), json);
}

#[test]
fn a_restored_pools_time_starts_at_taken_at() {
    let mut h = rich();
    h.at(125_000.0);
    let json = h.snapshot();
    // An earlier clock reading is treated as takenAt: the snapshot is unchanged, byte for byte.
    let clock = ManualClock::new(T0 + 5_000.0);
    let mut pool =
        ClockedPool::restore(&json, None, clock.clone(), repute::Randomness::host(|| 0.0)).unwrap();
    assert_eq!(pool.snapshot().unwrap(), json);
    assert_eq!(pool.stats().unwrap().now, T + 125_000);
    // A report at the earlier reading is stamped at takenAt, and cooldowns run from it.
    pool.register(Kind::Proxy, "fresh").unwrap();
    pool.report(Kind::Proxy, "fresh", "z", Outcome::failure(FailureType::Slow)).unwrap();
    pool.report(Kind::Proxy, "fresh", "z", Outcome::failure(FailureType::Slow)).unwrap();
    let view =
        pool.resources(&Filter::default()).unwrap().into_iter().find(|r| &*r.value == "fresh").unwrap();
    assert_eq!(view.cells[0].updated_at, T + 125_000);
    assert_eq!(view.cells[0].cooldown_until, Some(T + 125_000 + 60_000));
}

#[test]
fn restore_then_snapshot_is_byte_identical_over_random_histories() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let names = ["a", "b:c@d", "é", "Z", "1"];
    let ctxs = ["x", "y", "😀"];
    for round in 0..30 {
        let mut h = Harness::with_patch(r#"{"windowSize":3,"successReward":1.5}"#);
        for _ in 0..60 {
            let kind = [Kind::Proxy, Kind::Account, Kind::Session][next(3) as usize];
            let v = names[next(5) as usize];
            let c = ctxs[next(3) as usize];
            match next(8) {
                0 | 1 => {
                    h.pool.register(kind, v).unwrap();
                }
                2..=4 => {
                    let o = match next(6) {
                        0 => Outcome::Success { latency_ms: Some(next(1000) as f64 / 8.0) },
                        n => Outcome::failure(FailureType::ALL[(n - 1) as usize]),
                    };
                    let _ = h.pool.report(kind, v, c, o);
                }
                5 => {
                    let _ = h.pool.block(kind, v, BlockSpec::Seconds(next(300) as f64 + 0.5));
                }
                6 => {
                    let _ = h.pool.deregister(kind, v);
                }
                _ => h.advance(next(400_000) as f64),
            }
        }
        let json = h.snapshot();
        let mut pool =
            ClockedPool::restore(&json, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0))
                .unwrap();
        assert_eq!(pool.snapshot().unwrap(), json, "round {round}");
    }
}
