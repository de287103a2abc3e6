//! Cooling-cap rules of SPEC §3 "Groups, pacing and the cooling cap" (the Cooling cap
//! paragraph), §4 (`COOLDOWN_SUPPRESSED`) and §6 (`"held": true`), one test per sentence:
//! `maxCoolingPercent` (default 100: no cap), `allowed = max(1, ⌊p × registered ÷ 100⌋)` in
//! integer arithmetic with `registered` counting every registered resource, `cooling` counting
//! the context's cells whose stored state is `COOLING` with `now < cooldownUntil` (blocked
//! resources included), suppression at `cooling ≥ allowed` (equal: suppressed; one below:
//! cools), what a suppression keeps (state, `cooldownUntil`, `cooldownCause`) and what it moves
//! (score, window; `consecutiveFailures` restored), the later real cooldown at the step it would
//! have reached, held cells (set by a suppression; cleared by a success, blocked or not, or a
//! real cooldown; still candidates), the count after deregistrations and config changes, and
//! held cells in snapshots (round trip, version rules).
//!
//! Cooldowns by hand: `base(t) × 2^min(consecutiveFailures − 1, 6)`, TIMEOUT base 60 s.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{ConfigPatch, EventType, FailureType, Filter, Kind, PoolEvent, ViewState};

use FailureType::{Blocked, ConnectionReset, Timeout};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;
const SEC: u64 = 1000;

/// A pool with `n` PROXY resources r00, r01, … and the config `patch`; events drained.
fn pool_of(n: usize, patch: &str) -> Harness {
    let mut h = Harness::with_patch(patch);
    for i in 0..n {
        h.reg(&name(i));
    }
    h.events();
    h
}

fn name(i: usize) -> String {
    format!("r{i:02}")
}

fn types(ev: &[PoolEvent]) -> Vec<EventType> {
    ev.iter().map(|e| e.ty).collect()
}

fn set_config(h: &mut Harness, json: &str) -> bool {
    h.pool.set_config(&ConfigPatch::from_json(json).unwrap()).unwrap()
}

/// Fails `value` in `ctx` (TIMEOUT) and says whether it cooled (`true`) or was suppressed
/// (`false`); any other outcome fails the test.
fn cools(h: &mut Harness, value: &str, ctx: &str) -> bool {
    h.fail(value, ctx, Timeout);
    cooled(h, value, ctx)
}

/// `cools` in c with failure type `t`.
fn cools_with(h: &mut Harness, value: &str, t: FailureType) -> bool {
    h.fail(value, "c", t);
    cooled(h, value, "c")
}

fn cooled(h: &mut Harness, value: &str, ctx: &str) -> bool {
    let ev = h.events();
    match types(&ev).as_slice() {
        [EventType::ResourceCooled] => true,
        [EventType::CooldownSuppressed] => false,
        other => panic!("{value} in {ctx}: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// How many may cool

#[test]
fn the_default_100_percent_is_no_cap() {
    let mut h = pool_of(3, r#"{"coolAfter":1}"#);
    assert_eq!(h.pool.config().max_cooling_percent, 100);
    for i in 0..3 {
        assert!(cools(&mut h, &name(i), "c"), "allowed = 3: every resource may cool");
    }
}

#[test]
fn allowed_is_max_1_floor_p_times_registered_over_100() {
    // (maxCoolingPercent, registered, allowed by hand)
    let table = [
        (50, 4, 2),
        (50, 5, 2),  // ⌊2.5⌋
        (1, 10, 1),  // ⌊0.1⌋ = 0, floored to 1
        (1, 99, 1),  // ⌊0.99⌋ = 0 → 1
        (1, 100, 1), // ⌊1⌋
        (1, 200, 2), // ⌊2⌋
        (34, 3, 1),  // ⌊1.02⌋
        (67, 3, 2),  // ⌊2.01⌋
        (10, 25, 2), // ⌊2.5⌋
        (99, 1, 1),  // ⌊0.99⌋ → 1
        (100, 1, 1), // no cap: every one of one
        (33, 10, 3), // ⌊3.3⌋
    ];
    for (p, n, allowed) in table {
        let mut h = pool_of(n, &format!(r#"{{"coolAfter":1,"maxCoolingPercent":{p}}}"#));
        for i in 0..allowed {
            assert!(cools(&mut h, &name(i), "c"), "p {p}, {n} registered: cooling {i} < allowed {allowed}");
        }
        if allowed < n {
            assert!(
                !cools(&mut h, &name(allowed), "c"),
                "p {p}, {n} registered: cooling = allowed {allowed}"
            );
            let c = h.cell(&name(allowed), "c");
            assert!(c.held && c.state == ViewState::Healthy, "{c:?}");
        }
    }
}

#[test]
fn the_count_is_per_context() {
    let mut h = pool_of(4, r#"{"coolAfter":1,"maxCoolingPercent":25}"#); // allowed 1
    assert!(cools(&mut h, "r00", "c"));
    assert!(!cools(&mut h, "r01", "c"));
    assert!(cools(&mut h, "r01", "d"), "c's cooldown does not count in d");
    assert!(!cools(&mut h, "r00", "d"));
}

#[test]
fn only_cooldowns_still_running_count_and_their_end_is_exclusive() {
    let mut h = pool_of(2, r#"{"coolAfter":1,"maxCoolingPercent":50}"#); // allowed 1
    assert!(cools(&mut h, "r00", "c")); // until +60 s
    h.at(59_999.0);
    assert!(!cools(&mut h, "r01", "c"));
    // At +60 s r00 is still stored COOLING, but its cooldown is over: it no longer counts.
    h.at(60_000.0);
    assert_eq!(h.cell("r00", "c").state, ViewState::Cooling);
    assert!(cools(&mut h, "r01", "c"));
    // r00's half-open trial fails now: r01's cooldown (to +120 s) is running, so it is held.
    assert!(!cools(&mut h, "r00", "c"));
    assert_eq!(h.cell("r00", "c").state, ViewState::Cooling, "its stored state is kept");
    assert_eq!(h.cell("r00", "c").cooldown_until, Some(T + 60 * SEC));
}

#[test]
fn cooling_cells_of_blocked_resources_count() {
    let mut h = pool_of(2, r#"{"coolAfter":1,"maxCoolingPercent":50}"#); // allowed 1
    assert!(cools(&mut h, "r00", "c"));
    h.block_secs("r00", 3600.0);
    h.events();
    assert!(!cools(&mut h, "r01", "c"));
}

#[test]
fn registered_counts_every_registered_resource() {
    // 50 % of 4: allowed 2 — counting r02 (blocked), r03 (leased, never reported) too.
    let mut h = pool_of(4, r#"{"coolAfter":1,"maxCoolingPercent":50}"#);
    h.block_secs("r02", 3600.0);
    let l = h.pool.acquire_resource(Kind::Proxy, "r03", "x").unwrap().unwrap();
    h.events();
    assert!(cools(&mut h, "r00", "c"));
    assert!(cools(&mut h, "r01", "c"));
    h.pool.unblock(Kind::Proxy, "r02").unwrap();
    h.events();
    assert!(!cools(&mut h, "r02", "c"), "2 cooling = 2 allowed");
    // Two more registered: 50 % of 6 = 3.
    h.reg("r04");
    h.reg("r05");
    h.events();
    assert!(cools(&mut h, "r02", "c"));
    assert!(!cools(&mut h, "r03", "c"));
    h.pool.release(&l).unwrap();
}

// ---------------------------------------------------------------------------------------------
// What a suppression does

#[test]
fn a_suppression_keeps_the_state_and_restores_consecutive_failures() {
    // Default coolAfter 2; 50 % of 2 = 1. x cools; p has one failure (no step 4 yet).
    let mut h = Harness::with_patch(r#"{"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    h.fail("x", "c", Timeout);
    h.fail("x", "c", Timeout);
    h.fail("p", "c", Timeout); // p: -5, 1 failure
    h.events();
    let rev = h.revision();
    h.at(1000.0);
    h.fail("p", "c", Blocked); // would cool: suppressed
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    let e = &ev[0];
    assert_eq!((e.ty, e.ty.as_str(), e.at), (EventType::CooldownSuppressed, "COOLDOWN_SUPPRESSED", T + 1000));
    assert_eq!(e.resource.as_ref().map(|(k, v)| (*k, &**v)), Some((Kind::Proxy, "p")));
    assert_eq!((e.context.as_deref(), e.cause), (Some("c"), Some(Blocked)));
    assert_eq!((e.until, e.token, &e.group, e.permanent), (None, None, &None, false));
    assert_eq!(h.revision(), rev + 1);
    let c = h.cell("p", "c");
    assert_eq!(c.score, -35.0, "the score moved");
    assert_eq!(c.consecutive_failures, 1, "back to its value before this report");
    assert_eq!(c.consecutive_successes, 0);
    assert_eq!((c.state, c.cooldown_until, c.cooldown_cause), (ViewState::Healthy, None, None));
    assert!(c.held);
    assert_eq!(c.updated_at, T + 1000);
    let snap: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    let cell = snap["cells"].as_array().unwrap().iter().find(|c| c["value"] == "p").unwrap().clone();
    assert_eq!(cell["window"], serde_json::json!([["TIMEOUT", null], ["BLOCKED", null]]), "the window moved");
    assert_eq!(cell["held"], true);
}

#[test]
fn a_suppression_keeps_an_earlier_cooldown_and_a_recovering_state() {
    // recoverAfter 3: p cools (coolAfter 1, CONNECTION_RESET 120 s), recovers to RECOVERING with
    // a streak of 1; x then cools; p's failure is suppressed.
    let mut h = pool_of(2, r#"{"coolAfter":1,"recoverAfter":3,"maxCoolingPercent":50}"#);
    assert!(cools_with(&mut h, "r00", ConnectionReset));
    h.at(120_000.0);
    h.ok("r00", "c");
    assert!(cools(&mut h, "r01", "c"));
    let before = h.cell("r00", "c");
    assert_eq!((before.state, before.consecutive_successes), (ViewState::Recovering, 1));
    assert!(!cools(&mut h, "r00", "c"));
    let c = h.cell("r00", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!((c.cooldown_until, c.cooldown_cause), (Some(T + 120_000), Some(ConnectionReset)));
    assert_eq!(c.consecutive_failures, 0);
    assert_eq!(c.consecutive_successes, 0, "step 1 reset the streak");
    assert_eq!(c.score, -10.0 + 5.0 - 5.0);
    assert!(c.held);
}

#[test]
fn a_later_real_cooldown_is_at_the_step_it_would_have_reached() {
    // coolAfter 2; 50 % of 2 = 1. x cools at T for 60 s × 2 = 120 s.
    let mut h = Harness::with_patch(r#"{"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    h.fail("x", "c", Timeout);
    h.fail("x", "c", Timeout);
    h.fail("p", "c", Timeout); // p: 1 failure
    for at in [1000.0, 2000.0, 3000.0] {
        h.at(at);
        h.fail("p", "c", Timeout);
        assert_eq!(
            h.cell("p", "c").consecutive_failures,
            1,
            "each suppressed failure is charged to the site"
        );
    }
    h.events();
    // x's cooldown ends at +120 s: p cools at its second failure's step, 60 s × 2^1.
    h.at(120_000.0);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!((c.consecutive_failures, c.cooldown_until), (2, Some(T + 240_000)));
    assert!(!c.held, "a real cooldown ends held");
    let ev = h.events();
    assert_eq!(
        ev.iter().map(|e| (e.ty, e.until)).collect::<Vec<_>>(),
        [(EventType::ResourceCooled, Some(T + 240_000))]
    );
}

#[test]
fn a_failed_trial_under_the_cap_keeps_its_place_on_the_curve() {
    // coolAfter 1. p: cooled at 1 failure (60 s), trial failed at 2 (120 s, from +60 s to
    // +180 s). At +180 s x cools (60 s); p's trial fails: suppressed, still 2 failures. At
    // +240 s x's cooldown is over: p's next failure is its third, 60 s × 2^2 = 240 s.
    let mut h = Harness::with_patch(r#"{"coolAfter":1,"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    h.events();
    assert!(cools(&mut h, "p", "c"));
    h.at(60_000.0);
    assert!(cools(&mut h, "p", "c"));
    h.at(180_000.0);
    assert!(cools(&mut h, "x", "c"));
    assert!(!cools(&mut h, "p", "c"));
    let c = h.cell("p", "c");
    assert_eq!((c.consecutive_failures, c.cooldown_until, c.held), (2, Some(T + 180_000), true));
    h.at(240_000.0);
    assert!(cools(&mut h, "p", "c"));
    let c = h.cell("p", "c");
    assert_eq!((c.consecutive_failures, c.cooldown_until, c.held), (3, Some(T + 480_000), false));
}

#[test]
fn no_suppression_where_no_cooldown_would_start() {
    // 50 % of 2 = 1, x cooling. p blocked (step 2), p during its own cooldown (step 3, not
    // possible here as p cannot cool; see below), p below coolAfter: no event at all.
    let mut h = Harness::with_patch(r#"{"coolAfter":2,"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    h.fail("x", "c", Timeout);
    h.fail("x", "c", Timeout);
    h.events();
    h.fail("p", "c", Timeout); // below coolAfter
    assert_eq!(h.events(), vec![]);
    assert!(!h.cell("p", "c").held);
    h.block_secs("p", 60.0);
    h.events();
    h.fail("p", "c", Timeout); // blocked: step 2 stops first
    assert_eq!(h.events(), vec![]);
    assert!(!h.cell("p", "c").held);
    assert_eq!(h.cell("p", "c").consecutive_failures, 2, "evidence keeps counting");
    // A late failure during x's own running cooldown: step 3 stops first.
    h.fail("x", "c", Blocked);
    assert_eq!(h.events(), vec![]);
    assert!(!h.cell("x", "c").held);
}

// ---------------------------------------------------------------------------------------------
// Held cells

/// 50 % of 2 = 1: x cools in c, p is held.
fn held_p() -> Harness {
    let mut h = pool_of(0, r#"{"coolAfter":1,"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    h.events();
    assert!(cools(&mut h, "x", "c"));
    assert!(!cools(&mut h, "p", "c"));
    assert!(h.cell("p", "c").held);
    h
}

#[test]
fn a_held_cell_stays_a_candidate() {
    let mut h = held_p();
    let l = h.acquire("c").unwrap(); // x is cooling: p alone, no draw
    assert_eq!(&*l.value, "p");
    assert!(h.pool.release(&l).unwrap());
    assert_eq!(
        h.pool.resources(&Filter { state: Some(ViewState::Healthy), ..Filter::default() }).unwrap().len(),
        1
    );
}

#[test]
fn a_success_ends_held() {
    let mut h = held_p();
    h.ok("p", "c");
    assert!(!h.cell("p", "c").held);
    assert_eq!(h.events(), vec![], "no event of its own");
}

#[test]
fn a_success_while_blocked_ends_held_too() {
    let mut h = held_p();
    h.block_secs("p", 60.0);
    // A failure while blocked changes no state: still held.
    h.fail("p", "c", Timeout);
    assert!(h.cell("p", "c").held);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert!(!c.held);
    assert_eq!(c.state, ViewState::Blocklisted);
}

#[test]
fn a_real_cooldown_ends_held() {
    let mut h = held_p();
    h.at(60_000.0); // x's cooldown is over
    assert!(cools(&mut h, "p", "c"));
    let c = h.cell("p", "c");
    assert!(!c.held);
    assert_eq!((c.state, c.cooldown_until), (ViewState::Cooling, Some(T + 120_000)));
}

#[test]
fn held_is_per_cell() {
    let mut h = held_p();
    h.ok("p", "d");
    assert!(h.cell("p", "c").held);
    assert!(!h.cell("p", "d").held);
}

// ---------------------------------------------------------------------------------------------
// Deregistration and config changes

#[test]
fn after_deregistrations_the_count_may_stay_above_allowed_and_no_report_adds_to_it() {
    // 50 % of 4 = 2: r00, r01 cool.
    let mut h = pool_of(4, r#"{"coolAfter":1,"maxCoolingPercent":50}"#);
    assert!(cools(&mut h, "r00", "c"));
    assert!(cools(&mut h, "r01", "c"));
    h.reg("r04");
    h.reg("r05");
    h.events();
    // 50 % of 6 = 3 would allow one more; remove r04, r05 and r03: 50 % of 3 = 1, 2 cooling.
    for v in ["r04", "r05", "r03"] {
        h.pool.deregister(Kind::Proxy, v).unwrap();
    }
    h.events();
    assert!(!cools(&mut h, "r02", "c"));
    assert_eq!(h.pool.stats().unwrap().cells_by_state[1], 2, "nothing ended the running cooldowns");
    // Removing a cooling resource lowers the count: 1 cooling of 1 allowed (⌊50 % × 2⌋).
    h.pool.deregister(Kind::Proxy, "r00").unwrap();
    h.events();
    assert!(!cools(&mut h, "r02", "c"));
    h.pool.deregister(Kind::Proxy, "r01").unwrap();
    h.events();
    assert!(cools(&mut h, "r02", "c"));
    h.pool.check_invariants().unwrap();
}

#[test]
fn a_cap_change_applies_from_the_next_report() {
    let mut h = pool_of(4, r#"{"coolAfter":1,"maxCoolingPercent":25}"#); // allowed 1
    assert!(cools(&mut h, "r00", "c"));
    assert!(!cools(&mut h, "r01", "c"));
    assert!(set_config(&mut h, r#"{"maxCoolingPercent":100}"#));
    h.events();
    assert!(cools(&mut h, "r01", "c"));
    // Back to 25 %: 2 cooling > 1 allowed. Both cooldowns keep running; nothing more cools.
    assert!(set_config(&mut h, r#"{"maxCoolingPercent":25}"#));
    h.events();
    assert!(h.pool.resources(&Filter::default()).unwrap()[1].cells[0].cooldown_until.is_some());
    assert!(!cools(&mut h, "r02", "c"));
    assert_eq!(h.pool.stats().unwrap().cells_by_state[1], 2);
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn held_cells_and_the_count_survive_a_snapshot_round_trip_byte_for_byte() {
    let mut h = held_p();
    h.at(1000.0);
    let snap = h.snapshot();
    assert!(snap.contains(r#""held":true"#), "{snap}");
    assert_eq!(snap.matches(r#""held""#).count(), 1, "only while held");
    assert!(snap.contains(r#""maxCoolingPercent":50}"#));
    let clock = ManualClock::new(T0 + 1000.0);
    let mut r = ClockedPool::restore(&snap, None, clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(r.snapshot().unwrap(), snap);
    r.check_invariants().unwrap();
    // The restored pool counts x's running cooldown: p is held again, no cooldown starts.
    r.report(Kind::Proxy, "p", "c", repute::Outcome::failure(Timeout)).unwrap();
    let types: Vec<_> = r.drain_events().unwrap().iter().map(|e| e.ty).collect();
    assert_eq!(types, [EventType::CooldownSuppressed]);
    // Its end is still filed: at +60 s p may cool.
    clock.set(T0 + 60_000.0);
    r.report(Kind::Proxy, "p", "c", repute::Outcome::failure(Timeout)).unwrap();
    let types: Vec<_> = r.drain_events().unwrap().iter().map(|e| e.ty).collect();
    assert_eq!(types, [EventType::ResourceCooled]);
}

#[test]
fn held_in_a_snapshot_follows_the_version_rules() {
    // coolAfter 2 (held p keeps 1 failure, so without "held" its cell is still valid).
    let mut h = Harness::with_patch(r#"{"maxCoolingPercent":50}"#);
    h.reg("x");
    h.reg("p");
    for v in ["x", "x", "p", "p"] {
        h.fail(v, "c", Timeout);
    }
    assert!(h.cell("p", "c").held);
    let snap = h.snapshot();
    let restore = |s: &str| {
        ClockedPool::restore(s, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5)).map(|_| ())
    };
    let code = |s: &str| restore(s).unwrap_err().code();
    assert!(restore(&snap).is_ok());
    assert_eq!(code(&snap.replace(r#""held":true"#, r#""held":false"#)), "INVALID_SNAPSHOT");
    assert_eq!(code(&snap.replace(r#""held":true"#, r#""held":null"#)), "INVALID_SNAPSHOT");
    assert_eq!(code(&snap.replace(r#""held":true"#, r#""held":"true""#)), "INVALID_SNAPSHOT");
    assert_eq!(code(&snap.replace(r#""held":true"#, r#""held":1"#)), "INVALID_SNAPSHOT");
    // Version 2 must carry all three new config fields.
    for field in [r#""minGapMs":0,"#, r#""minGapMsByContext":{},"#] {
        assert_eq!(code(&snap.replace(field, "")), "INVALID_SNAPSHOT", "without {field}");
    }
    assert_eq!(code(&snap.replace(r#","maxCoolingPercent":50"#, "")), "INVALID_SNAPSHOT");
    // Version 1: no held cells, no version 2 config fields.
    let v1 = snap
        .replace(r#""version":3"#, r#""version":1"#)
        .replace(r#","minGapMs":0,"minGapMsByContext":{},"maxCoolingPercent":50"#, "");
    assert_eq!(code(&v1), "INVALID_SNAPSHOT", "a version 1 snapshot with a held cell");
    let v1_plain = v1.replace(r#","held":true"#, "");
    let mut r = ClockedPool::restore(&v1_plain, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5))
        .unwrap();
    assert_eq!(r.config().max_cooling_percent, 100, "version 1: the default");
    assert!(r.resources(&Filter::default()).unwrap().iter().all(|v| v.cells.iter().all(|c| !c.held)));
    let v1_cap =
        v1_plain.replace(r#""eventBufferSize":65536"#, r#""eventBufferSize":65536,"maxCoolingPercent":50"#);
    assert_ne!(v1_cap, v1_plain);
    assert_eq!(code(&v1_cap), "INVALID_SNAPSHOT", "a version 2 config field in version 1");
}

/// Regression: with `coolAfter` 1 a suppressed failure sets `consecutiveFailures` back to 0
/// while step 1 zeroed the success streak — both counters are 0 on a held cell, whose newest
/// outcome is a failure. Restore refused that snapshot ("exactly one of consecutiveFailures
/// and consecutiveSuccesses must be non-zero"), so a pool could not reload its own state.
#[test]
fn a_held_cell_with_both_streaks_at_zero_restores() {
    let mut h = held_p(); // p: HEALTHY, held, 0 failures, 0 successes
    // q (3 registered: 50 % allows 1) cools in d to +120 s, has a success before that ends
    // (0 failures, streak 1), and its trial at +120 s fails while x's new cooldown in d holds
    // the cap: COOLING, held, 0 and 0.
    h.reg("q");
    h.events();
    assert!(cools(&mut h, "q", "d"));
    h.ok("q", "d");
    h.at(120_000.0);
    assert!(cools(&mut h, "x", "d"));
    assert!(!cools(&mut h, "q", "d"));
    let (p, q) = (h.cell("p", "c"), h.cell("q", "d"));
    assert_eq!((p.consecutive_failures, p.consecutive_successes, p.held), (0, 0, true));
    assert_eq!(
        (q.state, q.consecutive_failures, q.consecutive_successes, q.held),
        (ViewState::Cooling, 0, 0, true)
    );
    let snap = h.snapshot();
    let mut r =
        ClockedPool::restore(&snap, None, ManualClock::new(T0 + 120_000.0), repute::Randomness::host(|| 0.5))
            .unwrap();
    assert_eq!(r.snapshot().unwrap(), snap);
    // Both streaks at 0 without being held is still no state the rules reach.
    let cut = snap.replacen(r#","held":true"#, "", 1);
    assert_ne!(cut, snap);
    let err =
        ClockedPool::restore(&cut, None, ManualClock::new(T0 + 120_000.0), repute::Randomness::host(|| 0.5))
            .unwrap_err();
    assert_eq!(err.code(), "INVALID_SNAPSHOT");
}
