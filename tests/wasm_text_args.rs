//! The facade's strings through its buffer (`src/wasm/facade/text_args.rs`), compiled to wasm32 and
//! run by `wasm-bindgen-test-runner` in Node and in headless Chromium (`pkg-scripts/test`; by
//! hand: `cargo test --target wasm32-unknown-unknown --test wasm_text_args`).
//!
//! It owns what `pkg-scripts/lib/pool.js` relies on when it writes a call's strings into
//! `textArgs` instead of passing them: the calls by the buffer answer exactly as the calls
//! that take the strings (the same grants, errors and events), the value first and the context
//! after it; bytes that are not ASCII or lie outside the buffer are refused, not read; the view
//! is detached by memory growth and asked for again. The encodings shared with the string
//! calls are `wasm_facade.rs`'s.

#![cfg(target_arch = "wasm32")]

use js_sys::{Reflect, Uint8Array};
use repute::wasm::RawPool;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

const T0: f64 = 1_700_000_000_000.0;
const PROXY: u8 = 0;
const OK: u8 = 0;
const TIMEOUT: u8 = 4;

fn pool() -> RawPool {
    RawPool::new(Some(r#"{"leaseTtlMs":30000}"#.to_string()), None, Some(7.0)).expect("a pool")
}

/// Writes `texts` one after the other from byte 0 of the pool's buffer, as `pool.js` does;
/// their lengths.
fn put(raw: &RawPool, texts: &[&str]) -> Vec<u32> {
    let view: Uint8Array = raw.text_args();
    let mut at = 0;
    texts
        .iter()
        .map(|t| {
            view.subarray(at, at + t.len() as u32).copy_from(t.as_bytes());
            at += t.len() as u32;
            t.len() as u32
        })
        .collect()
}

/// The code of the error a hot call that answered NaN left.
fn error_code(raw: &mut RawPool, answer: f64) -> String {
    assert!(answer.is_nan(), "a failed call answers NaN, got {answer}");
    let e: js_sys::Error = raw.take_error().dyn_into().expect("an Error");
    Reflect::get(&e, &"code".into()).unwrap().as_string().expect("a code")
}

fn pair(raw: &RawPool, value: &str, context: &str) -> (u32, u32) {
    let l = put(raw, &[value, context]);
    (l[0], l[1])
}

#[wasm_bindgen_test]
fn calls_by_the_buffer_answer_as_the_calls_that_take_strings() {
    // Two pools, the same calls: one passes strings, the other writes them into its buffer.
    let (mut by_str, mut by_buf) = (pool(), pool());
    for raw in [&mut by_str, &mut by_buf] {
        for v in ["proxy-a", "proxy-b", "proxy-c"] {
            raw.register(T0, PROXY, v).unwrap();
        }
    }
    let c = "checkout-us.example";
    let mut granted = Vec::new();
    for i in 0..3 {
        let now = T0 + f64::from(i);
        let s = by_str.acquire(now, c, false);
        let n = put(&by_buf, &[c])[0];
        assert_eq!(by_buf.acquire_text(now, n, false), s, "the same grant");
        assert_eq!(by_buf.lease_fields().to_vec(), by_str.lease_fields().to_vec());
        granted.push(s);
    }
    let none = by_str.acquire(T0 + 5.0, c, true);
    let n = put(&by_buf, &[c])[0];
    assert_eq!((none, by_buf.acquire_text(T0 + 5.0, n, true)), (0.0, 0.0), "all leased, quiet");

    let second = by_str.resource_value(granted[1]).unwrap();
    let (v, o) = (second.as_str(), c);
    assert_eq!(by_str.report(T0 + 6.0, PROXY, v, o, TIMEOUT, Some(90.0)), 0.0);
    let (vl, cl) = pair(&by_buf, v, o);
    assert_eq!(by_buf.report_text(T0 + 6.0, PROXY, vl, cl, TIMEOUT, Some(90.0)), 0.0);

    let token = 2.0; // the second grant's, in both pools
    let renewed = by_str.renew(T0 + 7.0, PROXY, v, o, token);
    let (vl, cl) = pair(&by_buf, v, o);
    assert_eq!(by_buf.renew_text(T0 + 7.0, PROXY, vl, cl, token), renewed);
    assert!(renewed > 0.0, "renewed: its resource's id");
    assert_eq!(by_buf.lease_fields().to_vec(), by_str.lease_fields().to_vec(), "the same expiry");

    let (vl, cl) = pair(&by_buf, v, "search-eu");
    assert_eq!(by_buf.release_text(T0 + 8.0, PROXY, vl, cl, token), 0.0, "not held in that context");
    assert_eq!(by_str.release(T0 + 8.0, PROXY, v, o, token), 1.0);
    let (vl, cl) = pair(&by_buf, v, o);
    assert_eq!(by_buf.release_text(T0 + 8.0, PROXY, vl, cl, token), 1.0);

    // Errors are the engine's, by the same checks.
    let (vl, cl) = pair(&by_buf, "proxy-z", o);
    let answer = by_buf.report_text(T0 + 9.0, PROXY, vl, cl, OK, None);
    assert_eq!(error_code(&mut by_buf, answer), "UNKNOWN_RESOURCE");
    let answer = by_buf.acquire_text(T0 + 9.0, 0, false);
    assert_eq!(error_code(&mut by_buf, answer), "INVALID_ARGUMENT", "a blank context");

    assert_eq!(
        by_buf.snapshot(T0 + 10.0).unwrap(),
        by_str.snapshot(T0 + 10.0).unwrap(),
        "the same pool after the same calls"
    );
    let events = |raw: &mut RawPool| (raw.drain_events(T0 + 10.0).unwrap().to_vec(), raw.drained_strings());
    assert_eq!(events(&mut by_buf), events(&mut by_str), "the same events");
}

#[wasm_bindgen_test]
fn bytes_that_are_not_ascii_or_lie_outside_the_buffer_are_refused() {
    let mut raw = pool();
    let a = raw.register(T0, PROXY, "proxy-a").unwrap();
    let view = raw.text_args();
    let size = view.length();
    assert!(size >= 1024 + 256, "a value and a context fit ({size} bytes)");
    // "é" in UTF-8: pool.js sends anything past ASCII as a string instead.
    view.subarray(0, 2).copy_from(&[0xc3, 0xa9]);
    let answer = raw.acquire_text(T0, 2, false);
    assert_eq!(error_code(&mut raw, answer), "INVALID_ARGUMENT");
    put(&raw, &["checkout-us"]);
    let answer = raw.acquire_text(T0, size + 1, false);
    assert_eq!(error_code(&mut raw, answer), "INVALID_ARGUMENT", "past the buffer's end");
    let answer = raw.report_text(T0, PROXY, size, 1, OK, None);
    assert_eq!(error_code(&mut raw, answer), "INVALID_ARGUMENT", "a context past the end");
    assert_eq!(raw.acquire_text(T0, 11, false), a, "the context written before, read whole");
    assert_eq!(raw.lease_fields().to_vec()[1], 1.0, "the first token: the refused calls changed nothing");
}

#[wasm_bindgen_test]
fn the_buffer_view_is_detached_by_memory_growth_and_asked_for_again() {
    let mut raw = pool();
    raw.register(T0, PROXY, "proxy-a").unwrap();
    let kept = raw.text_args();
    let size = kept.length();
    // Grow the module's memory (as a bulk call may): the view pool.js keeps reads length 0.
    let big = std::hint::black_box(vec![1u8; 64 << 20]);
    assert_eq!(kept.length(), 0, "detached by memory growth");
    drop(big);
    assert_eq!(raw.text_args().length(), size, "a fresh view of the same buffer");
    let n = put(&raw, &["checkout-us"])[0];
    assert!(raw.acquire_text(T0, n, false) > 0.0, "written through the fresh view");
}
