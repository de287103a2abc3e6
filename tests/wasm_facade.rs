//! The WebAssembly facade (`src/wasm/`) as JavaScript meets it, compiled to wasm32 and run by
//! `wasm-bindgen-test-runner` in Node and in headless Chromium (`pkg-scripts/test`; by hand:
//! `cargo test --target wasm32-unknown-unknown --test wasm_facade`, with
//! `WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=$(command -v chromedriver)` for Chromium).
//!
//! It owns the encodings that `pkg-scripts/lib/pool.js` decodes, checked on real JavaScript
//! values: errors as `Error` objects with a stable `code` and the detail as `message`; a
//! hot-path failure as NaN with its error kept for `takeError`, once; `undefined`, NaN and -1
//! standing for "none"; resource ids as slot + 1 in the low 32 bits with a generation above,
//! answered by a grant and taken back by the calls by a lease (`BY_NAME` when it is not held);
//! lease numbers in `leaseFields`; drained events packed into numbers and a string table cut at UTF-16 lengths;
//! groups lists cut at UTF-16 lengths. Views, stats and the config are read field by field as
//! JavaScript objects (parsed like `pool.js` parses them while they cross as JSON text), not
//! compared byte by byte. It does not own the engine's rules (the native tests do) nor the JS
//! wrapper's argument checks (`tests/js/`).

#![cfg(target_arch = "wasm32")]

use js_sys::{Float64Array, Function, JSON, JsString, Reflect};
use repute::wasm::RawPool;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const T0: f64 = 1_700_000_000_000.0;
/// Kind codes, in SPEC order.
const PROXY: u8 = 0;
const ACCOUNT: u8 = 1;
const SESSION: u8 = 2;
/// Outcome codes: success, then the failure types in SPEC order.
const OK: u8 = 0;
const BLOCKED: u8 = 1;
const TIMEOUT: u8 = 4;
/// "None" for a block's duration (permanent) and `maxLeases` (not given).
const NONE: f64 = f64::NAN;
/// What a call by a lease's id answers when the lease is not held any more.
const BY_NAME: f64 = -1.0;
/// The length standing for `null` in a groups list.
const NULL_GROUP: u32 = u32::MAX;
/// A resource id's low 32 bits are its slot plus one.
const SLOTS: f64 = 4_294_967_296.0;
/// Numbers per packed event.
const EVENT_FIELDS: usize = 13;

// ----- making pools, and reading what crosses ---------------------------------------------

/// A pool as `new Pool({config, seed})` makes it.
fn try_pool(config: &str, random: Option<Function>, seed: Option<f64>) -> Result<RawPool, JsValue> {
    RawPool::new(Some(config.to_string()), random, seed)
}

fn pool(config: &str) -> RawPool {
    try_pool(config, None, Some(7.0)).unwrap_or_else(|e| panic!("pool {config}: {e:?}"))
}

fn refused<T>(r: Result<T, JsValue>) -> JsValue {
    match r {
        Ok(_) => panic!("the call succeeded; an error was expected"),
        Err(e) => e,
    }
}

/// Checks that `e` is a JavaScript `Error` (not a string) with `code`, and that its message is
/// the detail alone (the code is its own property); returns the message.
fn error(e: JsValue, code: &str) -> String {
    let err: js_sys::Error = e.dyn_into().unwrap_or_else(|v| panic!("an Error object, got {v:?}"));
    let message = String::from(err.message());
    let got = Reflect::get(&err, &"code".into()).unwrap().as_string();
    assert_eq!(got.as_deref(), Some(code), "code of the error {message:?}");
    assert!(!message.is_empty() && !message.starts_with(code), "message is the detail: {message:?}");
    message
}

/// A hot-path call's answer that must be a failure: NaN, its error taken once with `takeError`.
fn hot_error(raw: &mut RawPool, answer: f64, code: &str) -> String {
    assert!(answer.is_nan(), "a failed hot-path call answers NaN, got {answer}");
    let message = error(raw.take_error(), code);
    assert!(raw.take_error().is_undefined(), "the error is taken once");
    message
}

/// A bulk result as JavaScript holds it: JSON text parsed as `pool.js` parses it, or a value
/// that already crossed as one.
trait Structured {
    fn js(self) -> JsValue;
}

impl Structured for String {
    fn js(self) -> JsValue {
        JSON::parse(&self).unwrap_or_else(|_| panic!("JSON text: {self}"))
    }
}

impl Structured for JsValue {
    fn js(self) -> JsValue {
        self
    }
}

fn view(r: Result<impl Structured, JsValue>) -> JsValue {
    r.unwrap_or_else(|e| panic!("view: {e:?}")).js()
}

/// The value at a dotted path (`"0.cells.0.score"`); `undefined` when a key is absent.
fn at(v: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(v.clone(), |v, k| {
        assert!(v.is_object(), "{path}: {k} of a non-object {v:?}");
        Reflect::get(&v, &k.into()).unwrap()
    })
}

fn num(v: &JsValue, path: &str) -> f64 {
    at(v, path).as_f64().unwrap_or_else(|| panic!("{path}: a number, got {:?}", at(v, path)))
}

fn text(v: &JsValue, path: &str) -> String {
    at(v, path).as_string().unwrap_or_else(|| panic!("{path}: a string, got {:?}", at(v, path)))
}

fn len(v: &JsValue, path: &str) -> u32 {
    let a = if path.is_empty() { v.clone() } else { at(v, path) };
    a.dyn_into::<js_sys::Array>().unwrap_or_else(|v| panic!("{path}: an array, got {v:?}")).length()
}

/// `report` by name of a PROXY, as `pool.js` calls it for a resource it holds no grant of.
fn report(raw: &mut RawPool, now: f64, value: &str, context: &str, code: u8, latency: Option<f64>) -> f64 {
    raw.report(now, PROXY, value, context, code, latency)
}

fn register(raw: &mut RawPool, kind: u8, value: &str) -> f64 {
    raw.register(T0, kind, value).unwrap_or_else(|e| panic!("register {value}: {e:?}"))
}

fn register_in(raw: &mut RawPool, value: &str, group: Option<&str>) -> f64 {
    let r = raw.register_with(T0, PROXY, value, true, group.map(String::from), NONE);
    r.unwrap_or_else(|e| panic!("register {value}: {e:?}"))
}

/// The last lease's `[kind code, token, leasedAt, expiresAt, group number]`.
fn fields(raw: &RawPool) -> Vec<f64> {
    raw.lease_fields().to_vec()
}

/// A function of no arguments made from JavaScript source, as a host's `random`.
fn js_fn(body: &str) -> Function {
    Function::new_no_args(body)
}

// ----- errors -----------------------------------------------------------------------------

#[wasm_bindgen_test]
fn a_bad_config_is_an_invalid_config_error_naming_the_field() {
    let m = error(refused(try_pool(r#"{"coolAfter":0}"#, None, Some(1.0))), "INVALID_CONFIG");
    assert!(m.contains("coolAfter"), "{m}");
    let m = error(refused(try_pool(r#"{"windowSize":10,"coolAftr":2}"#, None, Some(1.0))), "INVALID_CONFIG");
    assert!(m.contains("coolAftr"), "an unknown field is named: {m}");

    let mut raw = pool("{}");
    let before = view(raw.config());
    let m = error(refused(raw.set_config(T0, r#"{"coolAfter":5,"leaseTtlMs":-1}"#)), "INVALID_CONFIG");
    assert!(m.contains("leaseTtlMs"), "{m}");
    let after = view(raw.config());
    assert_eq!(num(&after, "coolAfter"), num(&before, "coolAfter"), "nothing half-applied");
}

#[wasm_bindgen_test]
fn bad_arguments_are_invalid_argument_errors() {
    let mut raw = pool("{}");
    error(refused(raw.register(T0, 3, "proxy-1")), "INVALID_ARGUMENT"); // no kind 3
    error(refused(raw.register(T0, PROXY, "  ")), "INVALID_ARGUMENT"); // blank value
    let answer = raw.acquire(T0, "", false); // a blank context
    hot_error(&mut raw, answer, "INVALID_ARGUMENT");
    error(refused(raw.register(NONE, PROXY, "proxy-1")), "INVALID_ARGUMENT"); // pool.js's clock gives NaN for a non-number
    error(refused(RawPool::mask_value(9, "x")), "INVALID_ARGUMENT");
    register(&mut raw, PROXY, "proxy-1");
    error(refused(raw.block(T0, PROXY, "proxy-1", 0.0)), "INVALID_ARGUMENT"); // non-positive seconds
    error(refused(raw.block(T0, PROXY, "proxy-1", -5.0)), "INVALID_ARGUMENT");
    error(refused(raw.resources(T0, None, Some("SLEEPING".into()), false, None)), "INVALID_ARGUMENT");
    error(refused(raw.register_with(T0, PROXY, "proxy-2", false, None, 0.0)), "INVALID_ARGUMENT"); // maxLeases 0
    let stats = view(raw.stats(T0));
    assert_eq!(num(&stats, "registered"), 1.0, "no failed call registered anything");
    assert_eq!(num(&stats, "blocked"), 0.0);
}

#[wasm_bindgen_test]
fn unknown_resources_capacity_and_finished_leases_have_their_codes_and_no_secret() {
    let mut raw = pool(r#"{"maxResources":1}"#);
    let secret = "http://user:hunter2@proxy-1.example.net:8080";
    let m = error(refused(raw.block(T0, PROXY, secret, NONE)), "UNKNOWN_RESOURCE");
    assert!(m.contains("proxy-1.example.net") && !m.contains("hunter2"), "named, masked: {m}");
    let answer = report(&mut raw, T0, secret, "checkout-us", OK, None);
    let m = hot_error(&mut raw, answer, "UNKNOWN_RESOURCE");
    assert!(!m.contains("hunter2"), "masked: {m}");

    register(&mut raw, PROXY, secret);
    let m = error(refused(raw.register(T0, PROXY, "proxy-2")), "CAPACITY_EXCEEDED");
    assert!(m.contains("maxResources"), "{m}");

    let c = "checkout-us";
    let h = raw.acquire(T0, c, false);
    let token = fields(&raw)[1];
    assert_eq!(raw.finish_lease(T0 + 1.0, h, token, OK, None, false, None, None, None, false), 0.0);
    let again = raw.finish_lease(T0 + 2.0, h, token, OK, None, false, None, None, None, false);
    assert_eq!(again, BY_NAME, "not held any more: left to the call by name");
    let again = raw.finish(T0 + 2.0, PROXY, secret, c, token, OK, None, false, None, None, None, false);
    hot_error(&mut raw, again, "LEASE_FINISHED");
}

#[wasm_bindgen_test]
fn snapshots_that_cannot_be_read_are_refused_with_their_codes() {
    let restore = |text: &str| RawPool::restore(text, None, None, Some(1.0), None, None, None);
    error(refused(restore("not json")), "INVALID_SNAPSHOT");
    error(refused(restore("[]")), "INVALID_SNAPSHOT");

    let mut raw = pool("{}");
    register(&mut raw, PROXY, "proxy-1");
    let snapshot = JSON::parse(&raw.snapshot(T0).unwrap()).unwrap();
    Reflect::set(&snapshot, &"version".into(), &99.into()).unwrap();
    let future = String::from(JSON::stringify(&snapshot).unwrap());
    let m = error(refused(restore(&future)), "UNSUPPORTED_SNAPSHOT_VERSION");
    assert!(m.contains("99"), "{m}");
}

#[wasm_bindgen_test]
fn hot_path_failures_answer_nan_and_leave_their_error_for_take_error() {
    let mut raw = pool("{}");
    let h = register(&mut raw, PROXY, "proxy-1");
    let c = "checkout-us";
    assert!(raw.take_error().is_undefined(), "nothing failed yet");

    let answer = report(&mut raw, T0, "proxy-1", c, 6, None); // no outcome 6
    hot_error(&mut raw, answer, "INVALID_ARGUMENT");
    for bad in [-1.0, f64::INFINITY, f64::NAN] {
        let answer = report(&mut raw, T0, "proxy-1", c, OK, Some(bad));
        let m = hot_error(&mut raw, answer, "INVALID_ARGUMENT");
        assert_eq!(m, "latencyMs must be a finite, non-negative number", "the message pool.js shares");
    }
    assert_eq!(raw.report_lease(T0, h + 1.0, 1.0, OK, None), BY_NAME, "an id naming no resource: by name");
    let answer = raw.report_lease(T0, 1.5, 1.0, OK, None); // a number no id gives
    hot_error(&mut raw, answer, "UNKNOWN_RESOURCE");
    let answer = raw.renew(T0, PROXY, "proxy-1", c, 0.0); // tokens start at 1
    hot_error(&mut raw, answer, "INVALID_ARGUMENT");
    let answer = raw.renew_lease(T0, h, 0.0);
    hot_error(&mut raw, answer, "INVALID_ARGUMENT");
    let cells = view(raw.resources(T0, None, None, false, None));
    assert_eq!(len(&cells, "0.cells"), 0, "no failed report made a cell");

    assert_eq!(report(&mut raw, T0, "proxy-1", c, OK, None), 0.0, "a report that succeeded answers 0");
    assert!(raw.take_error().is_undefined(), "and leaves no error");
}

// ----- "none" encodings -------------------------------------------------------------------

#[wasm_bindgen_test]
fn undefined_and_nan_are_none_for_latencies_block_durations_and_max_leases() {
    let mut raw = pool("{}");
    register(&mut raw, PROXY, "proxy-a");
    register(&mut raw, PROXY, "proxy-b");
    let c = "checkout-us";
    assert_eq!(report(&mut raw, T0, "proxy-a", c, OK, None), 0.0);
    assert_eq!(report(&mut raw, T0, "proxy-b", c, OK, Some(120.0)), 0.0);
    let all = view(raw.resources(T0, None, None, false, None));
    assert_eq!(text(&all, "0.value"), "proxy-a");
    assert!(at(&all, "0.cells.0.p50LatencyMs").is_null(), "no latency reported: null");
    assert_eq!(num(&all, "1.cells.0.p50LatencyMs"), 120.0);

    raw.block(T0, PROXY, "proxy-a", NONE).unwrap();
    raw.block(T0, PROXY, "proxy-b", 90.0).unwrap();
    let all = view(raw.resources(T0, None, None, false, None));
    assert_eq!(at(&all, "0.blocked.permanent"), JsValue::TRUE, "NaN seconds: permanent");
    assert!(at(&all, "0.blocked.until").is_undefined());
    assert_eq!(num(&all, "1.blocked.until"), T0 + 90_000.0);
    assert_eq!(text(&all, "1.cells.0.state"), "BLOCKLISTED");

    raw.register_with(T0, PROXY, "proxy-c", false, None, NONE).unwrap();
    raw.register_with(T0, PROXY, "proxy-d", false, None, 3.0).unwrap();
    let c_view = view(raw.resource_detail(T0, PROXY, "proxy-c"));
    let d_view = view(raw.resource_detail(T0, PROXY, "proxy-d"));
    assert_eq!(num(&c_view, "maxLeases"), 1.0, "NaN: not given, the default");
    assert_eq!(num(&d_view, "maxLeases"), 3.0);
}

#[wasm_bindgen_test]
fn next_change_at_is_minus_one_for_null_and_an_instant_otherwise() {
    let mut raw = pool(r#"{"halfOpenCauses":[]}"#); // due cells go to a prober
    assert_eq!(raw.next_change_at(T0, "checkout-us").unwrap(), -1.0, "nothing registered: null");
    register(&mut raw, PROXY, "proxy-1");
    assert_eq!(raw.next_change_at(T0, "checkout-us").unwrap(), T0, "a candidate now: now");
    let c = "checkout-us";
    report(&mut raw, T0, "proxy-1", c, TIMEOUT, None);
    report(&mut raw, T0, "proxy-1", c, TIMEOUT, None);
    // Cooling for TIMEOUT's 60 s × 2, and not half-open: a prober's business, never a change
    // by time alone.
    assert_eq!(raw.next_change_at(T0, "checkout-us").unwrap(), -1.0);
    assert_eq!(len(&view(raw.due_for_recovery_probe(T0)), ""), 0, "not due yet");
    let due = view(raw.due_for_recovery_probe(T0 + 120_000.0));
    assert_eq!(len(&due, ""), 1);
    assert_eq!(text(&due, "0.kind"), "PROXY");
    assert_eq!(text(&due, "0.value"), "proxy-1");
    assert!(at(&due, "0.group").is_null());
    assert_eq!(text(&due, "0.context"), "checkout-us");
    assert_eq!(num(&due, "0.cooldownUntil"), T0 + 120_000.0);
    let lens: [u32; 1] = [NULL_GROUP];
    // The pool's clock is at T0 + 120 s now (it never goes back).
    let now = T0 + 120_000.0;
    assert_eq!(raw.next_change_at_in(now, "search-eu", "", &lens).unwrap(), now, "groups [null]");
    assert_eq!(raw.next_change_at_in(now, "search-eu", "dc", &[2]).unwrap(), -1.0, "no group dc");
}

// ----- ids and generations ----------------------------------------------------------------

#[wasm_bindgen_test]
fn resource_ids_are_slot_plus_one_below_a_generation() {
    let mut raw = pool("{}");
    let a = register(&mut raw, PROXY, "proxy-a");
    let b = register(&mut raw, ACCOUNT, "alice:s3cret");
    assert!(a.fract() == 0.0 && a > 0.0 && a <= 9_007_199_254_740_991.0, "a safe integer: {a}");
    assert_eq!(a % SLOTS, 1.0, "first slot");
    assert_eq!(b % SLOTS, 2.0, "second slot");
    assert_eq!(register(&mut raw, PROXY, "proxy-a"), 0.0, "registered already: 0");
    let granted = raw.acquire_resource(T0, PROXY, "proxy-a", "checkout-us").unwrap();
    assert_eq!(granted, a, "a grant answers its resource's id");
    let token = fields(&raw)[1];
    assert_eq!(raw.resource_value(b).unwrap(), "alice:s3cret", "the value as registered, unmasked");

    assert!(raw.deregister(T0, PROXY, "proxy-a").unwrap());
    let c = register(&mut raw, SESSION, "cookie-c");
    assert_eq!(c % SLOTS, a % SLOTS, "the freed slot again (a dense array on the JS side)");
    assert_ne!(c, a, "another generation");
    assert_eq!(raw.resource_value(c).unwrap(), "cookie-c");
    error(refused(raw.resource_value(a)), "UNKNOWN_RESOURCE");
    assert_eq!(raw.report_lease(T0, a, token, OK, None), BY_NAME, "a's lease ended with it");
    assert_eq!(raw.renew_lease(T0, a, token), 0.0);
    assert_eq!(raw.release_lease(T0, a, token), 0.0);
    let answer = raw.report(T0, PROXY, "proxy-a", "checkout-us", OK, None);
    hot_error(&mut raw, answer, "UNKNOWN_RESOURCE");
    let cell_of_c = view(raw.resource_detail(T0, SESSION, "cookie-c"));
    assert_eq!(len(&cell_of_c, "cells"), 0, "the stale id reached nobody else");

    for n in [0.0, -1.0, 1.5, NONE, f64::INFINITY, 9_007_199_254_740_992.0] {
        error(refused(raw.resource_value(n)), "UNKNOWN_RESOURCE");
    }
}

// ----- leases -----------------------------------------------------------------------------

#[wasm_bindgen_test]
fn lease_fields_hold_the_last_lease_and_renew_release_answer_numbers() {
    let mut raw = pool(r#"{"leaseTtlMs":30000}"#);
    let h = register(&mut raw, ACCOUNT, "alice:s3cret");
    let c = "checkout-us";
    assert_eq!(raw.acquire(T0, c, false), h, "the lease's handle is its resource's id");
    let f = fields(&raw);
    assert_eq!(
        f,
        [f64::from(ACCOUNT), 1.0, T0, T0 + 30_000.0, 0.0],
        "kind, token, leasedAt, expiresAt, no group"
    );
    assert_eq!(raw.acquire(T0, c, false), 0.0, "leased already: 0, nothing granted");

    assert_eq!(raw.renew_lease(T0 + 1_000.0, h, 2.0), 0.0, "not the holder's token");
    assert_eq!(raw.renew_lease(T0 + 1_000.0, h, 1.0), h, "renewed: its resource's id");
    assert_eq!(fields(&raw)[3], T0 + 31_000.0, "renewed expiry");
    assert_eq!(raw.renew(T0 + 1_500.0, ACCOUNT, "alice:s3cret", c, 1.0), h, "by name the same");
    assert_eq!(fields(&raw)[3], T0 + 31_500.0);
    assert_eq!(raw.release(T0 + 2_000.0, ACCOUNT, "alice:s3cret", "search-eu", 1.0), 0.0, "not the holder");
    assert_eq!(raw.release_lease(T0 + 2_000.0, h, 2.0), 0.0);
    assert_eq!(raw.release_lease(T0 + 2_000.0, h, 1.0), 1.0);
    assert_eq!(raw.release_lease(T0 + 2_000.0, h, 1.0), 0.0, "released already");
    assert_eq!(raw.release(T0 + 2_000.0, ACCOUNT, "alice:s3cret", c, 1.0), 0.0);

    assert_eq!(raw.acquire(T0 + 3_000.0, c, false), h);
    assert_eq!(fields(&raw)[1], 2.0, "tokens increase");
    // finish: `next` false for no next lease; a next context, or the lease's.
    assert_eq!(raw.finish_lease(T0 + 4_000.0, h, 2.0, OK, None, true, None, None, None, false), h);
    assert_eq!(fields(&raw)[1], 3.0);
    let other = Some("search-eu".to_string());
    assert_eq!(raw.finish_lease(T0 + 5_000.0, h, 3.0, OK, Some(80.0), true, other, None, None, false), h);
    let leased = view(raw.resources(T0 + 5_000.0, None, None, false, None));
    assert_eq!(text(&leased, "0.lease.context"), "search-eu");
    assert_eq!(num(&leased, "0.lease.token"), 4.0);
    let groups = (Some(String::new()), Some(vec![NULL_GROUP].into_boxed_slice()));
    let (v, o) = ("alice:s3cret", "search-eu");
    assert_eq!(
        raw.finish(T0 + 6_000.0, ACCOUNT, v, o, 4.0, OK, None, true, None, groups.0, groups.1, false),
        h
    );
    assert_eq!(fields(&raw)[1], 5.0, "by name, from the groups list [null]");
    assert_eq!(raw.finish_lease(T0 + 6_000.0, h, 5.0, OK, None, false, None, None, None, false), 0.0);
    assert_eq!(num(&view(raw.stats(T0 + 6_000.0)), "leased"), 0.0, "finished, nothing leased");
}

#[wasm_bindgen_test]
fn a_lease_says_whether_it_has_a_group_and_the_registry_names_it() {
    let mut raw = pool("{}");
    let a = register_in(&mut raw, "dc-a", Some("dc"));
    let b = register_in(&mut raw, "res-b", Some("residential"));
    let c = register_in(&mut raw, "dc-c", Some("dc"));
    let ctx = "checkout-us";
    let mut numbers = Vec::new();
    for _ in 0..3 {
        let h = raw.acquire(T0, ctx, false);
        let g = fields(&raw)[4];
        assert_eq!(g, 1.0, "a group");
        numbers.push((h, g, raw.resource_group(h).unwrap()));
    }
    numbers.sort_by(|x, y| x.0.total_cmp(&y.0));
    let [(ha, ga, na), (hb, gb, nb), (hc, gc, nc)] = numbers.try_into().unwrap();
    assert_eq!((ha, hb, hc), (a, b, c));
    assert_eq!((na.as_deref(), nb.as_deref(), nc.as_deref()), (Some("dc"), Some("residential"), Some("dc")));
    assert_eq!((ga, gb, gc), (1.0, 1.0, 1.0));
    let none = register(&mut raw, PROXY, "plain");
    assert_eq!(raw.acquire(T0, ctx, false), none);
    assert_eq!(fields(&raw)[4], 0.0, "no group: 0");
    assert_eq!(raw.resource_group(none).unwrap(), None);
}

#[wasm_bindgen_test]
fn the_lease_fields_view_is_detached_by_memory_growth_and_asked_for_again() {
    let mut raw = pool("{}");
    register(&mut raw, PROXY, "proxy-1");
    let c = "checkout-us";
    raw.acquire(T0, c, false);
    let kept: Float64Array = raw.lease_fields();
    let numbers = kept.to_vec();
    assert_eq!(kept.length(), 5);
    // Grow the module's memory (as a bulk call may): the view pool.js keeps reads length 0.
    let big = std::hint::black_box(vec![1u8; 64 << 20]);
    assert_eq!(kept.length(), 0, "detached by memory growth");
    drop(big);
    assert_eq!(raw.lease_fields().to_vec(), numbers, "a fresh view shows the same lease");
}

// ----- groups lists -----------------------------------------------------------------------

#[wasm_bindgen_test]
fn groups_lists_cross_as_one_string_cut_at_utf16_lengths() {
    let mut raw = pool("{}");
    let wide = "dé😀"; // 4 UTF-16 units, 7 UTF-8 bytes
    let a = register_in(&mut raw, "proxy-a", Some(wide));
    let b = register_in(&mut raw, "proxy-b", None);
    let c = register_in(&mut raw, "proxy-c", Some("x"));
    // ["zz", "dé😀"]: zz has no resource, so the pick is in the second group, whose name is cut
    // at 2 + 4 units (cut at bytes it would name "dé" and "😀"-less rests).
    let names = format!("zz{wide}");
    let h = raw.acquire_in(T0, "checkout-us", &names, &[2, 4], false).unwrap();
    assert_eq!(h, a);
    assert_eq!(raw.resource_group(h).unwrap().as_deref(), Some(wide));
    let h = raw.acquire_in(T0, "checkout-us", "", &[NULL_GROUP], false).unwrap();
    assert_eq!(h, b, "[null]: the resources with no group");
    let h = raw.acquire_in(T0, "checkout-us", "x", &[NULL_GROUP, 1], false).unwrap();
    assert_eq!(h, c, "[null, \"x\"]: null has nothing left, x has");
    assert_eq!(raw.acquire_in(T0, "checkout-us", &names, &[2, 4], true).unwrap(), 0.0);
    let seventeen = vec![NULL_GROUP; 17];
    error(refused(raw.acquire_in(T0, "checkout-us", "", &seventeen, false)), "INVALID_ARGUMENT");
}

// ----- packed events ----------------------------------------------------------------------

/// One event as `pool.js` builds it from the packed form.
#[derive(Debug, Default, Clone, PartialEq)]
struct Event {
    seq: f64,
    at: f64,
    ty: String,
    kind: Option<String>,
    value: Option<String>,
    unmasked: Option<String>,
    /// `Some(None)`: `group: null`.
    group: Option<Option<String>>,
    context: Option<String>,
    cause: Option<String>,
    until: Option<f64>,
    permanent: bool,
    token: Option<f64>,
    max_leases: Option<f64>,
}

/// Drains as `pool.js` does: the numbers (read at once, as a view into the module's memory),
/// then the string table, cut with JavaScript's own UTF-16 `slice`.
fn drain(raw: &mut RawPool, now: f64) -> Vec<Event> {
    let nums = raw.drain_events(now).unwrap().to_vec();
    let strings = JsString::from(raw.drained_strings());
    assert_eq!(raw.drained_strings(), "", "the string table is handed out once");
    let (count, n) = (nums[0] as usize, nums[1] as usize);
    assert_eq!(nums.len(), 2 + count * EVENT_FIELDS + n, "counts, fields, then one length per string");
    let mut table = Vec::new();
    let mut pos = 0;
    for &l in &nums[2 + count * EVENT_FIELDS..] {
        let end = pos + l as u32;
        table.push(String::from(strings.slice(pos, end)));
        pos = end;
    }
    assert_eq!(pos, strings.length(), "the lengths cover the whole table");
    let s = |i: f64| (i >= 0.0).then(|| table[i as usize].clone());
    let opt = |x: f64| (x >= 0.0).then_some(x);
    nums[2..2 + count * EVENT_FIELDS]
        .chunks(EVENT_FIELDS)
        .map(|f| Event {
            seq: f[0],
            at: f[1],
            ty: s(f[2]).expect("a type"),
            kind: s(f[3]),
            value: s(f[4]),
            context: s(f[5]),
            cause: s(f[6]),
            until: opt(f[7]),
            permanent: f[8] == 1.0,
            token: opt(f[9]),
            unmasked: s(f[10]),
            group: match f[11] {
                -1.0 => None,
                -2.0 => Some(None),
                g => Some(s(g)),
            },
            max_leases: opt(f[12]),
        })
        .collect()
}

#[wasm_bindgen_test]
fn drained_events_unpack_into_the_events_that_happened() {
    let mut raw = pool(r#"{"leaseTtlMs":30000}"#);
    let secret = "http://user:hunter2@proxy-1.example.net:8080";
    let masked = RawPool::mask_value(PROXY, secret).unwrap();
    assert!(!masked.contains("hunter2") && masked.contains("proxy-1.example.net"), "{masked}");
    let place = "checkout-ü😀";

    let h = register(&mut raw, PROXY, secret);
    raw.register_with(T0, SESSION, "cookie", true, Some("dé😀".into()), NONE).unwrap();
    let c = place;
    assert_eq!(raw.acquire_in(T0, place, "", &[NULL_GROUP], false).unwrap(), h);
    assert_eq!(raw.report_lease(T0 + 1.0, h, 1.0, BLOCKED, Some(250.0)), 0.0);
    assert_eq!(report(&mut raw, T0 + 2.0, secret, c, BLOCKED, None), 0.0);
    assert_eq!(raw.release_lease(T0 + 3.0, h, 1.0), 1.0);
    raw.block(T0 + 4.0, PROXY, secret, NONE).unwrap();
    assert_eq!(raw.acquire_in(T0 + 5.0, place, "", &[NULL_GROUP], false).unwrap(), 0.0);

    let events = drain(&mut raw, T0 + 6.0);
    let types: Vec<&str> = events.iter().map(|e| e.ty.as_str()).collect();
    assert_eq!(
        types,
        [
            "RESOURCE_REGISTERED",
            "RESOURCE_REGISTERED",
            "RESOURCE_LEASED",
            "RESOURCE_COOLED",
            "LEASE_RELEASED",
            "RESOURCE_BLOCKLISTED",
            "ACQUISITION_REJECTED",
        ]
    );
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, events[0].seq + i as f64, "seqs in order, none missing");
    }
    let proxy = |ty: &str, at: f64| Event {
        seq: 0.0,
        at,
        ty: ty.into(),
        kind: Some("PROXY".into()),
        value: Some(masked.clone()),
        unmasked: Some(secret.into()),
        ..Event::default()
    };
    let without_seq = |e: &Event| Event { seq: 0.0, ..e.clone() };
    assert_eq!(without_seq(&events[0]), Event { group: Some(None), ..proxy("RESOURCE_REGISTERED", T0) });
    assert_eq!(
        without_seq(&events[1]),
        Event {
            seq: 0.0,
            at: T0,
            ty: "RESOURCE_REGISTERED".into(),
            kind: Some("SESSION".into()),
            value: Some("***".into()),
            unmasked: Some("cookie".into()),
            group: Some(Some("dé😀".into())),
            ..Event::default()
        }
    );
    let in_place = Some(place.to_string());
    assert_eq!(
        without_seq(&events[2]),
        Event {
            context: in_place.clone(),
            until: Some(T0 + 30_000.0),
            token: Some(1.0),
            ..proxy("RESOURCE_LEASED", T0)
        }
    );
    // BLOCKED cools for 3600 s × 2^(2 − 1) from the second failure.
    assert_eq!(
        without_seq(&events[3]),
        Event {
            context: in_place.clone(),
            cause: Some("BLOCKED".into()),
            until: Some(T0 + 2.0 + 7_200_000.0),
            ..proxy("RESOURCE_COOLED", T0 + 2.0)
        }
    );
    assert_eq!(
        without_seq(&events[4]),
        Event { context: in_place.clone(), token: Some(1.0), ..proxy("LEASE_RELEASED", T0 + 3.0) }
    );
    assert_eq!(without_seq(&events[5]), Event { permanent: true, ..proxy("RESOURCE_BLOCKLISTED", T0 + 4.0) });
    assert_eq!(
        without_seq(&events[6]),
        Event { at: T0 + 5.0, ty: "ACQUISITION_REJECTED".into(), context: in_place, ..Event::default() }
    );

    assert!(drain(&mut raw, T0 + 7.0).is_empty(), "drained: an empty drain next");
    let stats = view(raw.stats(T0 + 7.0));
    assert_eq!(num(&stats, "eventsPending"), 0.0);
    assert_eq!(num(&stats, "nextEventSeq"), events[6].seq + 1.0);
}

// ----- views, stats, config, snapshots ----------------------------------------------------

#[wasm_bindgen_test]
fn views_and_stats_carry_the_cells_fields() {
    let mut raw = pool("{}");
    register_in(&mut raw, "dc-a", Some("dc"));
    register_in(&mut raw, "plain-b", None);
    let c = "checkout-us";
    report(&mut raw, T0, "dc-a", c, BLOCKED, Some(100.0));
    report(&mut raw, T0 + 10.0, "dc-a", c, BLOCKED, Some(300.0));

    let cooling = view(raw.resources(T0 + 20.0, None, Some("COOLING".into()), false, None));
    assert_eq!(len(&cooling, ""), 1);
    assert_eq!(text(&cooling, "0.kind"), "PROXY");
    assert_eq!(text(&cooling, "0.value"), "dc-a");
    assert_eq!(text(&cooling, "0.group"), "dc");
    assert!(at(&cooling, "0.blocked").is_null() && at(&cooling, "0.lease").is_null());
    let cell = at(&cooling, "0.cells.0");
    assert_eq!(text(&cell, "context"), "checkout-us");
    assert_eq!(text(&cell, "state"), "COOLING");
    assert_eq!(num(&cell, "score"), -60.0);
    assert_eq!(num(&cell, "consecutiveFailures"), 2.0);
    assert_eq!(num(&cell, "consecutiveSuccesses"), 0.0);
    assert_eq!(num(&cell, "cooldownUntil"), T0 + 10.0 + 7_200_000.0);
    assert_eq!(text(&cell, "cooldownCause"), "BLOCKED");
    assert_eq!(num(&cell, "updatedAt"), T0 + 10.0);
    assert!(at(&cell, "pacedUntil").is_null());
    assert_eq!(at(&cell, "held"), JsValue::FALSE);

    let ungrouped = view(raw.resources(T0, None, None, true, None));
    assert_eq!(len(&ungrouped, ""), 1);
    assert_eq!(text(&ungrouped, "0.value"), "plain-b");
    assert!(at(&ungrouped, "0.group").is_null());
    assert_eq!(len(&ungrouped, "0.cells"), 0, "never reported: no cells");

    let detail = view(raw.resource_detail(T0 + 20.0, PROXY, "dc-a"));
    assert_eq!(len(&detail, "cells.0.window"), 2, "both outcomes in the window");

    let stats = view(raw.stats(T0 + 20.0));
    assert_eq!(num(&stats, "registered"), 2.0);
    assert_eq!(num(&stats, "cells"), 1.0);
    assert_eq!(num(&stats, "leased"), 0.0);
    assert_eq!(num(&stats, "cellsByState.COOLING"), 1.0);
    assert_eq!(num(&stats, "now"), T0 + 20.0);
}

#[wasm_bindgen_test]
fn the_config_crosses_whole_and_set_config_says_whether_it_changed() {
    let mut raw = pool(r#"{"penalties":{"SLOW":1}}"#);
    let config = view(raw.config());
    assert_eq!(num(&config, "penalties.SLOW"), 1.0, "the patch");
    assert_eq!(num(&config, "penalties.BLOCKED"), 30.0, "the rest from defaults");
    assert_eq!(num(&config, "coolAfter"), 2.0);
    assert_eq!(len(&config, "halfOpenCauses"), 5);
    assert!(!raw.set_config(T0, r#"{"coolAfter":2}"#).unwrap(), "no change: false");
    assert!(raw.set_config(T0, r#"{"coolAfter":3}"#).unwrap());
    assert_eq!(num(&view(raw.config()), "coolAfter"), 3.0);
}

/// `config()` and `stats()` cross as objects built by serde-wasm-bindgen: plain objects (not
/// `Map`s), numbers, `null`s — the very object `JSON.parse` gives of the canonical text, key
/// order included (the snapshot's `config` is that text).
#[wasm_bindgen_test]
fn config_and_stats_cross_as_plain_objects_equal_to_their_json() {
    let mut raw = pool(
        r#"{"minGapMsByContext":{"b.example":5,"a.example":7},"halfOpenCauses":["SLOW"],"successReward":0.25}"#,
    );
    let config = view(raw.config());
    let snapshot = JSON::parse(&raw.snapshot(T0).unwrap()).unwrap();
    let canonical = at(&snapshot, "config");
    assert_eq!(JSON::stringify(&config).unwrap(), JSON::stringify(&canonical).unwrap());
    for path in ["", "penalties", "cooldownBaseMs", "minGapMsByContext"] {
        let v = if path.is_empty() { config.clone() } else { at(&config, path) };
        let proto = js_sys::Object::get_prototype_of(&v);
        assert!(
            proto == js_sys::Object::get_prototype_of(&js_sys::Object::new().into()),
            "{path}: a plain object"
        );
    }
    let gaps = at(&config, "minGapMsByContext");
    assert_eq!(Reflect::get(&gaps, &"a.example".into()).unwrap().as_f64(), Some(7.0));
    assert!(JsValue::is_array(&at(&config, "halfOpenCauses")));

    let stats = view(raw.stats(T0));
    let keys = js_sys::Object::keys(&stats.clone().into()).join(",");
    assert_eq!(
        String::from(keys),
        "registered,cells,contexts,leased,blocked,available,revision,fencingHighWater,nextEventSeq,\
         eventsPending,eventsDropped,now,cellsByState"
    );
    assert_eq!(num(&stats, "now"), T0);
    assert_eq!(num(&stats, "cellsByState.HEALTHY"), 0.0);
}

#[wasm_bindgen_test]
fn a_snapshot_restores_to_the_same_text_and_a_floor_raises_the_tokens() {
    let mut raw = pool("{}");
    register(&mut raw, PROXY, "proxy-1");
    let c = "checkout-us";
    report(&mut raw, T0, "proxy-1", c, TIMEOUT, Some(12.5));
    raw.acquire(T0, c, false);
    let text = raw.snapshot(T0 + 1.0).unwrap();
    let mut back = RawPool::restore(&text, None, None, Some(3.0), None, None, None).unwrap();
    assert_eq!(back.snapshot(T0 + 1.0).unwrap(), text, "the same canonical text");

    let mut raised = RawPool::restore(&text, None, None, Some(3.0), None, Some(1_000.0), None).unwrap();
    let c = "checkout-us";
    assert!(raised.acquire(T0 + 2.0, c, false) > 0.0, "leases are not restored: free again");
    assert!(fields(&raised)[1] > 1_000.0, "token above the floor: {}", fields(&raised)[1]);
}

// ----- randomness -------------------------------------------------------------------------

#[wasm_bindgen_test]
fn a_host_random_function_draws_and_a_bad_draw_is_refused() {
    let with = |body: &str| {
        let mut raw = try_pool("{}", Some(js_fn(body)), None).unwrap_or_else(|e| panic!("{e:?}"));
        register(&mut raw, PROXY, "proxy-a");
        register(&mut raw, PROXY, "proxy-b");
        let c = "checkout-us";
        let got = raw.acquire(T0, c, false);
        (raw, got)
    };
    let (_, low) = with("return 0");
    let (_, high) = with("return 0.999");
    assert!(low > 0.0 && high > 0.0);
    assert_ne!(low, high, "the draw decides between two equal candidates");

    for body in ["return 1", "return -0.5", "return 'half'", "throw new Error('no entropy')"] {
        let (mut raw, got) = with(body);
        let m = hot_error(&mut raw, got, "INVALID_ARGUMENT");
        assert!(m.contains("random"), "{body}: {m}");
        assert_eq!(num(&view(raw.stats(T0)), "leased"), 0.0, "{body}: nothing leased");
    }

    error(refused(try_pool("{}", Some(js_fn("return 0")), Some(1.0))), "INVALID_ARGUMENT");
    error(refused(try_pool("{}", None, Some(1.5))), "INVALID_ARGUMENT");
    error(refused(try_pool("{}", None, Some(-1.0))), "INVALID_ARGUMENT");
}

#[wasm_bindgen_test]
fn the_same_seed_and_calls_give_the_same_picks() {
    let picks = |seed: f64| {
        let mut raw = try_pool("{}", None, Some(seed)).unwrap_or_else(|e| panic!("{e:?}"));
        for i in 0..8 {
            register(&mut raw, PROXY, &format!("proxy-{i}"));
        }
        let c = "checkout-us";
        (0..6).map(|_| raw.acquire(T0, c, false)).collect::<Vec<f64>>()
    };
    assert_eq!(picks(42.0), picks(42.0));
    assert!(picks(42.0).iter().all(|&h| h > 0.0));
}

/// The module's allocator grows its memory at least 4 MiB (64 pages) at a time
/// (src/wasm/allocator.rs: V8 collects garbage at every growth), and what it grows is used: the
/// standard library's allocator grows it by the page or two an allocation asks.
#[wasm_bindgen_test]
fn memory_grows_four_mib_at_a_time() {
    use core::arch::wasm32::memory_size;
    const PAGE: usize = 64 * 1024;
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut growths = Vec::new();
    let start = memory_size(0);
    let mut pages = start;
    while growths.len() < 3 {
        kept.push(vec![1u8; 16 * 1024]);
        let now = memory_size(0);
        if now != pages {
            growths.push(now - pages);
            pages = now;
        }
    }
    assert!(growths.iter().all(|&g| g >= 64), "grew by {growths:?} pages");
    let kept_bytes: usize = kept.iter().map(|v| v.capacity()).sum();
    let grown_bytes = (pages - start) * PAGE;
    assert!(grown_bytes <= kept_bytes + 2 * 64 * PAGE, "grew {grown_bytes} bytes for {kept_bytes} kept");
}
