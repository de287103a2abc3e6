//! No input may panic: config and snapshot text from the outside (an HTTP body, a file, an
//! operator's paste) is fuzzed with proptest — JSON-like text over an alphabet rich in escapes,
//! quotes, brackets and multi-byte characters, and valid snapshots cut short or with a piece
//! replaced. Every input must give `Ok` or an `Err`, never a panic. (A panic once came from the
//! error path naming a key cut inside a multi-byte character.)

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{ClockedPool, Harness, ManualClock, T0};
use proptest::prelude::*;
use repute::{BlockSpec, ConfigPatch, FailureType, Filter, Kind, Outcome};

/// Pieces of JSON-ish text: structure, escapes, multi-byte characters, numbers, field names.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"",
        "\\",
        "\\\"",
        "\\u00e9",
        "\\ud83d",
        "é",
        "😀",
        "ü",
        "\u{202e}",
        " ",
        "\n",
        "0",
        "1",
        "-1",
        "1e999",
        "0.1",
        "null",
        "true",
        "\"coolAfter\"",
        "\"penalties\"",
        "\"BLOCKED\"",
        "\"cells\"",
        "\"score\"",
        "\"window\"",
        "\"version\"",
        "\"format\"",
        "\"repute-snapshot\"",
        "\"OK\"",
    ])
}

fn jsonish() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..40).prop_map(|v| v.concat())
}

/// Text inside quotes, often with bad or cut escapes next to multi-byte characters.
fn string_body() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "é", "😀", "\\", "\\é", "\\u", "\\\"", "\\n", "0"]),
        0..6,
    )
    .prop_map(|v| v.concat())
}

/// Nested objects and arrays whose keys and strings come from `string_body`, then cut at a
/// random point (most parse errors happen inside a key or just after one).
fn structured() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        string_body().prop_map(|s| format!("\"{s}\"")),
        Just("1".to_owned()),
        Just("-0.1".to_owned()),
        Just("null".to_owned()),
    ];
    let tree = leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec((string_body(), inner.clone()), 0..4).prop_map(|kv| {
                let fields: Vec<String> = kv.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", fields.join(","))
            }),
            prop::collection::vec(inner, 0..4).prop_map(|v| format!("[{}]", v.join(","))),
        ]
    });
    (tree, any::<prop::sample::Index>()).prop_map(|(t, cut)| {
        let bytes = t.as_bytes();
        let end = cut.index(bytes.len() + 1);
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    })
}

fn never_panics(text: &str) {
    let config = catch_unwind(|| ConfigPatch::from_json(text).map(|_| ()));
    assert!(config.is_ok(), "ConfigPatch::from_json panicked on {text:?}");
    let restore = catch_unwind(AssertUnwindSafe(|| {
        // What restores must also serve every call without a panic (errors are fine).
        let mut pool = ClockedPool::restore(
            text,
            None,
            ManualClock::new(T0 + 3_600_000.0),
            repute::Randomness::host(|| 0.5),
        )
        .ok()?;
        exercise(&mut pool);
        pool.snapshot().ok()
    }));
    let Ok(after) = restore else {
        panic!("Pool::restore, or a call on what it restored, panicked on {text:?}");
    };
    // And what it then writes restores again (a counter at 2^53 − 1 once let a pool write a
    // snapshot it refused).
    if let Some(snap) = after
        && let Err(e) =
            ClockedPool::restore(&snap, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5))
    {
        panic!("{text:?} restored, then its own snapshot did not: {e}");
    }
}

/// Every kind of call once, on whatever the pool holds.
fn exercise(pool: &mut ClockedPool) {
    let _ = pool.stats();
    let views = pool.resources(&Filter::default()).unwrap_or_default();
    let _ = pool.due_for_recovery_probe();
    for r in views.iter().take(4) {
        let _ = pool.resource(r.kind, &r.value);
        for c in r.cells.iter().take(2) {
            let _ = pool.next_change_at(&c.context);
            if let Ok(Some(l)) = pool.acquire(&c.context) {
                let _ = pool.renew(&l);
                let _ = pool.report(l.kind, &l.value, &l.context, Outcome::failure(FailureType::Blocked));
                let _ = pool.release(&l);
            }
            let _ = pool.acquire_resource(r.kind, &r.value, &c.context);
            let _ = pool.report(r.kind, &r.value, &c.context, Outcome::success());
        }
        let _ = pool.block(r.kind, &r.value, BlockSpec::Seconds(1.0));
        let _ = pool.unblock(r.kind, &r.value);
    }
    let _ = pool.register(Kind::Proxy, "fresh");
    let _ = pool.acquire("fresh-context");
    let _ = pool.drain_events();
}

/// A small but complete snapshot: cells with windows, a block, a fractional score.
fn snapshot() -> String {
    let mut h = Harness::with_patch(r#"{"successReward":0.1,"windowSize":3}"#);
    for v in ["a", "b:c@d", "é"] {
        h.reg(v);
    }
    h.ok("a", "x");
    h.fail("b:c@d", "😀", FailureType::Timeout);
    h.fail("b:c@d", "😀", FailureType::Timeout);
    h.block_secs("é", 60.0);
    h.snapshot()
}

/// Numbers at and past every edge the engine checks: 2^31, 2^52, 2^53, u64, f64, tiny,
/// negative zero, fractions where integers belong.
fn edge_number() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "0",
        "-0",
        "-1",
        "0.5",
        "1.5",
        "1e-7",
        "9.5367431640625e-7",
        "2147483647",
        "2147483648",
        "4503599627370496",
        "4503599627370497",
        "9007199254740991",
        "9007199254740992",
        "18446744073709551615",
        "18446744073709551616",
        "1e308",
        "1e309",
        "-1e309",
        "1e-400",
        "123456789012345678901234567890.5",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        never_panics(&text);
    }

    #[test]
    fn snapshots_with_a_number_replaced_never_panic(which in any::<prop::sample::Index>(), n in edge_number()) {
        // Every number in a valid snapshot is a place where a range check must hold.
        let full = snapshot();
        let starts: Vec<usize> = full
            .char_indices()
            .filter(|&(i, c)| {
                (c.is_ascii_digit() || c == '-') && matches!(full.as_bytes()[i - 1], b':' | b',' | b'[')
            })
            .map(|(i, _)| i)
            .collect();
        let at = starts[which.index(starts.len())];
        let end = at + full[at..].find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c))).unwrap();
        never_panics(&format!("{}{n}{}", &full[..at], &full[end..]));
    }

    #[test]
    fn jsonish_text_never_panics(text in jsonish()) {
        never_panics(&text);
    }

    #[test]
    fn structured_text_never_panics(text in structured()) {
        never_panics(&text);
    }

    #[test]
    fn damaged_snapshots_never_panic(cut in 0usize..4000, at in 0usize..4000, insert in jsonish()) {
        let full = snapshot();
        let bytes = full.as_bytes();
        // Cut short at any byte (lossy: the cut may split a character).
        never_panics(&String::from_utf8_lossy(&bytes[..cut.min(bytes.len())]));
        // A piece replaced at any byte.
        let at = at.min(bytes.len());
        let mut spliced = bytes[..at].to_vec();
        spliced.extend_from_slice(insert.as_bytes());
        spliced.extend_from_slice(&bytes[(at + insert.len()).min(bytes.len())..]);
        never_panics(&String::from_utf8_lossy(&spliced));
    }
}
