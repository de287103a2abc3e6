//! No input may panic: config and snapshot text from the outside (an HTTP body, a file, an
//! operator's paste) is fuzzed with proptest — JSON-like text over an alphabet rich in escapes,
//! quotes, brackets and multi-byte characters, and valid snapshots cut short or with a piece
//! replaced. Every input must give `Ok` or an `Err`, never a panic. (A panic once came from the
//! error path naming a key cut inside a multi-byte character.)

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{Harness, T0};
use proptest::prelude::*;
use repute::{ConfigPatch, FailureType, ManualClock, Pool};

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
        Pool::restore(text, None, ManualClock::new(T0), || 0.0).map(|_| ())
    }));
    assert!(restore.is_ok(), "Pool::restore panicked on {text:?}");
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

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
