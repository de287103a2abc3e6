//! `setConfig` on a running pool (issue 11, `PUT /api/config`): a partial config applied over
//! the one in force (nested maps key by key), validated by the engine with the field named,
//! limits below what the pool holds refused with `CAPACITY_EXCEEDED`, nothing changed on any
//! error, one revision step and one `CONFIG_CHANGED` event on success and none for a config
//! equal to the one in force; what a new value means for state already held (windows cut to
//! the newest outcomes, cooling cells re-filed between half-open and probe-only, the event
//! buffer's bound, running cooldowns kept); and `resource()`, one resource's cells with their
//! windows.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::wasm::views_json;
use repute::{ConfigPatch, Error, EventType, FailureType, Kind, Outcome};

fn ok_in(ms: f64) -> Outcome {
    Outcome::Success { latency_ms: Some(ms) }
}

fn patch(json: &str) -> ConfigPatch {
    ConfigPatch::from_json(json).unwrap()
}

/// The pool's whole durable state and its counters, to show that a refused call changed nothing.
fn state(h: &mut Harness) -> (String, u64, u64) {
    let s = h.pool.stats().unwrap();
    (h.snapshot(), s.next_event_seq, s.revision)
}

#[test]
fn a_patch_changes_only_its_fields_with_one_revision_step_and_one_event() {
    let mut h = Harness::new();
    h.reg("p1");
    h.events();
    let before = h.pool.config().clone();
    let revision = h.pool.stats().unwrap().revision;
    h.advance(5.0);
    assert!(h.pool.set_config(&patch(r#"{"leaseTtlMs": 60000, "penalties": {"SLOW": 1}}"#)).unwrap());
    let after = h.pool.config().clone();
    assert_eq!(after.lease_ttl_ms, 60_000);
    assert_eq!(after.penalties[FailureType::Slow], 1.0);
    assert_eq!(
        after.penalties[FailureType::Blocked],
        before.penalties[FailureType::Blocked],
        "nested maps merge key by key"
    );
    let mut rest = after.clone();
    rest.lease_ttl_ms = before.lease_ttl_ms;
    rest.penalties = before.penalties;
    assert_eq!(rest, before, "no other field moved");
    assert_eq!(h.pool.stats().unwrap().revision, revision + 1);
    let events = h.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].ty, EventType::ConfigChanged);
    assert_eq!(
        views_json::events(&events),
        format!(r#"[{{"seq":2,"type":"CONFIG_CHANGED","at":{}}}]"#, T0 as u64 + 5)
    );
    assert!(h.snapshot().contains(r#""leaseTtlMs":60000"#), "the snapshot carries the new config");
    // The new lease TTL applies to the next lease.
    let lease = h.pool.acquire_resource(Kind::Proxy, "p1", "c").unwrap().unwrap();
    assert_eq!(lease.expires_at - lease.leased_at, 60_000);
}

#[test]
fn the_config_in_force_again_changes_nothing() {
    let mut h = Harness::new();
    h.reg("p1");
    let before = state(&mut h);
    assert!(!h.pool.set_config(&patch("{}")).unwrap());
    assert!(!h.pool.set_config(&patch(r#"{"coolAfter": 2, "penalties": {"BLOCKED": 30}}"#)).unwrap());
    assert_eq!(state(&mut h), before, "no event, no revision step");
}

#[test]
fn an_invalid_field_is_named_and_nothing_changes() {
    let mut h = Harness::new();
    h.reg("p1");
    h.fail("p1", "c", FailureType::Timeout);
    let before = state(&mut h);
    let config = h.pool.config().clone();
    // One good field beside a bad one: not half-applied.
    let cases = [
        (r#"{"leaseTtlMs": 5000, "coolAfter": 0}"#, "coolAfter"),
        (r#"{"leaseTtlMs": 5000, "penalties": {"SLOW": -1}}"#, "penalties.SLOW"),
        (r#"{"halfOpenCauses": ["BLOCKED", "BLOCKED"]}"#, "halfOpenCauses[1]"),
        (r#"{"windowSize": 1.5}"#, "windowSize"),
        (r#"{"maxCells": 0}"#, "maxCells"),
    ];
    for (json, field) in cases {
        let err = h.pool.set_config(&patch(json)).unwrap_err();
        assert_eq!(err.code(), "INVALID_CONFIG", "{json}");
        assert!(err.detail().starts_with(field), "{json}: {err}");
        assert_eq!(state(&mut h), before, "{json}");
        assert_eq!(h.pool.config(), &config);
    }
    // Unknown keys and wrong types are refused when the patch is read.
    for json in [r#"{"leaseTTL": 1}"#, r#"{"coolAfter": "2"}"#, r#"{"coolAfter": null}"#] {
        assert_eq!(ConfigPatch::from_json(json).unwrap_err().code(), "INVALID_CONFIG", "{json}");
    }
}

#[test]
fn limits_below_what_the_pool_holds_are_refused_and_nothing_changes() {
    let mut h = Harness::new();
    for v in ["p1", "p2", "p3"] {
        h.reg(v);
    }
    h.ok("p1", "a");
    h.ok("p1", "b");
    let before = state(&mut h);
    let err = h.pool.set_config(&patch(r#"{"maxResources": 2, "leaseTtlMs": 1000}"#)).unwrap_err();
    assert!(matches!(err, Error::CapacityExceeded(_)), "{err}");
    assert_eq!(err.detail(), "maxResources = 2 is below the 3 resources the pool holds");
    let err = h.pool.set_config(&patch(r#"{"maxCells": 1}"#)).unwrap_err();
    assert_eq!(err.detail(), "maxCells = 1 is below the 2 cells the pool holds");
    assert_eq!(state(&mut h), before);
    // Exactly what the pool holds is allowed, and then the limit holds for what comes next.
    assert!(h.pool.set_config(&patch(r#"{"maxResources": 3, "maxCells": 2}"#)).unwrap());
    assert_eq!(h.pool.register(Kind::Proxy, "p4").unwrap_err().code(), "CAPACITY_EXCEEDED");
    let err = h.pool.report(Kind::Proxy, "p2", "a", Outcome::success()).unwrap_err();
    assert_eq!(err.code(), "CAPACITY_EXCEEDED");
}

fn latencies(h: &mut Harness, value: &str, ctx: &str) -> Vec<f64> {
    let d = h.pool.resource(Kind::Proxy, value).unwrap();
    let i = d.view.cells.iter().position(|c| &*c.context == ctx).unwrap();
    d.windows[i].iter().map(|o| o.latency_ms().unwrap()).collect()
}

#[test]
fn a_smaller_window_keeps_the_newest_outcomes_and_a_larger_one_grows() {
    let mut h = Harness::new();
    h.reg("p1");
    for ms in 1..=10 {
        h.pool.report(Kind::Proxy, "p1", "c", ok_in(ms as f64 * 10.0)).unwrap();
    }
    assert!(h.pool.set_config(&patch(r#"{"windowSize": 3}"#)).unwrap());
    assert_eq!(latencies(&mut h, "p1", "c"), [80.0, 90.0, 100.0]);
    let cell = h.cell("p1", "c");
    assert_eq!(
        (cell.p50_latency_ms, cell.p95_latency_ms),
        (Some(90.0), Some(100.0)),
        "percentiles over the cut window"
    );
    assert!(h.pool.set_config(&patch(r#"{"windowSize": 12}"#)).unwrap());
    for ms in [110.0, 120.0, 130.0] {
        h.pool.report(Kind::Proxy, "p1", "c", ok_in(ms)).unwrap();
    }
    assert_eq!(latencies(&mut h, "p1", "c"), [80.0, 90.0, 100.0, 110.0, 120.0, 130.0]);
    h.pool.check_invariants().unwrap();
    // The snapshot restores under its own (new) windowSize.
    let snap = h.snapshot();
    let back = ClockedPool::restore(&snap, None, ManualClock::new(T0 + 1.0), repute::Randomness::seeded(1));
    assert_eq!(back.unwrap().config().window_size, 12);
}

#[test]
fn half_open_causes_refile_cooling_cells_both_ways() {
    let mut h = Harness::new();
    h.reg("p1");
    h.reg("p2");
    // p1 cools on BLOCKED in "c" (2 h: the second failure doubles the base); p2 on TIMEOUT (2 min).
    h.fail("p1", "c", FailureType::Blocked);
    h.fail("p1", "c", FailureType::Blocked);
    h.fail("p2", "c", FailureType::Timeout);
    h.fail("p2", "c", FailureType::Timeout);
    h.advance(120_000.0); // p2's cooldown is over; p1's runs on
    // Default: every cause is half-open, so p2 is a candidate and nobody is probe-due.
    assert!(h.pool.due_for_recovery_probe().unwrap().is_empty());
    let lease = h.acquire("c").expect("p2 is the only candidate");
    assert_eq!(&*lease.value, "p2");
    h.pool.release(&lease).unwrap();

    assert!(h.pool.set_config(&patch(r#"{"halfOpenCauses": ["BLOCKED"]}"#)).unwrap());
    h.pool.check_invariants().unwrap();
    let due: Vec<String> =
        h.pool.due_for_recovery_probe().unwrap().iter().map(|d| d.value.to_string()).collect();
    assert_eq!(due, ["p2"], "an expired TIMEOUT cooldown is now for the prober");
    assert_eq!(h.acquire("c"), None, "and no longer a candidate");
    assert_eq!(
        h.pool.next_change_at("c").unwrap(),
        Some(T0 as u64 + 7_200_000),
        "p1's half-open end is next"
    );

    assert!(h.pool.set_config(&patch(r#"{"halfOpenCauses": ["TIMEOUT"]}"#)).unwrap());
    h.pool.check_invariants().unwrap();
    assert!(h.pool.due_for_recovery_probe().unwrap().is_empty(), "p1 is still cooling");
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(h.clock.get() as u64), "p2 is a candidate again");
    h.at(7_200_000.0);
    let due: Vec<String> =
        h.pool.due_for_recovery_probe().unwrap().iter().map(|d| d.value.to_string()).collect();
    assert_eq!(due, ["p1"], "p1's BLOCKED cooldown, filed probe-only while it ran, is due for a probe");
    h.pool.check_invariants().unwrap();
}

#[test]
fn new_penalties_apply_from_the_next_report_and_running_cooldowns_are_kept() {
    let mut h = Harness::new();
    h.reg("p1");
    h.fail("p1", "c", FailureType::Timeout);
    h.fail("p1", "c", FailureType::Timeout);
    let cell = h.cell("p1", "c");
    assert_eq!((cell.score, cell.cooldown_until), (-10.0, Some(T0 as u64 + 120_000)));
    h.pool
        .set_config(&patch(r#"{"penalties": {"TIMEOUT": 20}, "cooldownBaseMs": {"TIMEOUT": 1000}}"#))
        .unwrap();
    assert_eq!(h.cell("p1", "c").cooldown_until, Some(T0 as u64 + 120_000), "the running cooldown is kept");
    h.fail("p1", "c", FailureType::Timeout);
    assert_eq!(h.cell("p1", "c").score, -30.0, "the new penalty");
}

#[test]
fn a_smaller_event_buffer_drops_the_oldest_pending_events_counted() {
    let mut h = Harness::new();
    for v in ["p1", "p2", "p3", "p4"] {
        h.reg(v);
    }
    assert!(h.pool.set_config(&patch(r#"{"eventBufferSize": 2}"#)).unwrap());
    // Four registrations were pending; two fit, then CONFIG_CHANGED pushes out one more.
    assert_eq!(h.pool.stats().unwrap().events_dropped, 3);
    assert_eq!(h.event_types(), ["RESOURCE_REGISTERED", "CONFIG_CHANGED"]);
}

#[test]
fn resource_detail_gives_every_cell_with_its_window_oldest_first() {
    let mut h = Harness::new();
    h.reg("p1");
    h.reg("never");
    h.pool.report(Kind::Proxy, "p1", "b", ok_in(12.5)).unwrap();
    h.fail("p1", "b", FailureType::Timeout);
    h.ok("p1", "a");
    let d = h.pool.resource(Kind::Proxy, "p1").unwrap();
    let contexts: Vec<&str> = d.view.cells.iter().map(|c| &*c.context).collect();
    assert_eq!(contexts, ["a", "b"], "context-name order");
    assert_eq!(d.view, h.view("p1"), "the same view as the dashboard");
    let text = views_json::resource_detail(&d);
    assert!(text.ends_with(r#""window":[["OK",12.5],["TIMEOUT",null]]}]}"#), "{text}");
    assert!(text.contains(r#""context":"a""#) && text.contains(r#""window":[["OK",null]]"#), "{text}");
    let fresh = h.pool.resource(Kind::Proxy, "never").unwrap();
    assert!(fresh.view.cells.is_empty() && fresh.windows.is_empty());
    assert_eq!(h.pool.resource(Kind::Account, "p1").unwrap_err().code(), "UNKNOWN_RESOURCE");
    assert_eq!(h.pool.resource(Kind::Proxy, " ").unwrap_err().code(), "INVALID_ARGUMENT");
}
