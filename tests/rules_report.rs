//! Report rules of SPEC §3 (failure and success reports), one test per rule:
//! the failure table (penalty and cooldown base of each of the five types), `successReward`,
//! score clamping at ±100, the `coolAfter` threshold, the backoff curve up to and past
//! `maxBackoffExponent` (6, 0 and 2), late failures during a cooldown, successes while still
//! cooling, COOLING → RECOVERING → HEALTHY (`recoverAfter` 2, 3 and 1), failures during
//! probation, outcomes on blocklisted resources, `cooldownUntil`/`cooldownCause` kept after
//! recovery, nearest-rank latency percentiles over the window, a clock stepping backwards and
//! fractional clock milliseconds.
//!
//! Every expected number is computed by hand from the SPEC (default config: successReward 5,
//! coolAfter 2, recoverAfter 2, maxBackoffExponent 6, windowSize 10; penalties BLOCKED 30,
//! TLS_HANDSHAKE 15, CONNECTION_RESET 10, TIMEOUT 5, SLOW 2; cooldown bases 3600 s, 300 s,
//! 120 s, 60 s, 30 s).

mod common;

use common::{Harness, T0};
use repute::{BlockSpec, EventType, FailureType, Kind, Outcome, PoolEvent, ViewState};

/// T0 as an integer instant (what the engine stamps).
const T: u64 = 1_700_000_000_000;
const SEC: u64 = 1_000;
const MIN: u64 = 60 * SEC;
const HOUR: u64 = 60 * MIN;

use FailureType::{Blocked, ConnectionReset, Slow, Timeout, TlsHandshake};

/// (type, penalty, cooldown base in ms) — the SPEC §3 table, typed in by hand.
const TABLE: [(FailureType, f64, u64); 5] = [
    (Blocked, 30.0, 3600 * SEC),
    (TlsHandshake, 15.0, 300 * SEC),
    (ConnectionReset, 10.0, 120 * SEC),
    (Timeout, 5.0, 60 * SEC),
    (Slow, 2.0, 30 * SEC),
];

fn set_abs(h: &Harness, instant: u64) {
    h.clock.set(instant as f64);
}

fn with_reg(patch: &str) -> Harness {
    let mut h = Harness::with_patch(patch);
    h.reg("p");
    h.events();
    h
}

fn of_type(events: &[PoolEvent], ty: EventType) -> Vec<PoolEvent> {
    events.iter().filter(|e| e.ty == ty).cloned().collect()
}

fn report_latency(h: &mut Harness, failure: Option<FailureType>, latency: Option<f64>) {
    let outcome = match failure {
        None => Outcome::Success { latency_ms: latency },
        Some(failure) => Outcome::Failure { failure, latency_ms: latency },
    };
    h.pool.report(Kind::Proxy, "p", "c", outcome).unwrap();
}

/// The cell of `p` in `c` as stored in the snapshot (window included).
fn snap_cell(h: &mut Harness) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"] == "p" && c["context"] == "c")
        .cloned()
        .expect("cell in snapshot")
}

// ---------------------------------------------------------------------------------------------
// The failure table

#[test]
fn each_failure_type_costs_its_penalty_and_one_failure_does_not_cool() {
    for (t, penalty, _) in TABLE {
        let mut h = with_reg("{}");
        h.fail("p", "c", t);
        let c = h.cell("p", "c");
        assert_eq!(c.score, -penalty, "{t}");
        assert_eq!(c.consecutive_failures, 1, "{t}");
        assert_eq!(c.consecutive_successes, 0, "{t}");
        assert_eq!(c.state, ViewState::Healthy, "{t}: one failure is below coolAfter 2");
        assert_eq!(c.cooldown_until, None, "{t}");
        assert_eq!(c.cooldown_cause, None, "{t}");
        assert!(of_type(&h.events(), EventType::ResourceCooled).is_empty(), "{t}");
    }
}

#[test]
fn two_failures_of_each_type_cool_for_base_times_two() {
    for (t, penalty, base) in TABLE {
        let mut h = with_reg("{}");
        h.fail("p", "c", t);
        h.at(1_000.0);
        h.fail("p", "c", t);
        // 2 consecutive failures: base × 2^min(2 − 1, 6) = base × 2, from the second report.
        let until = T + 1_000 + base * 2;
        let c = h.cell("p", "c");
        assert_eq!(c.score, -2.0 * penalty, "{t}");
        assert_eq!(c.consecutive_failures, 2, "{t}");
        assert_eq!(c.state, ViewState::Cooling, "{t}");
        assert_eq!(c.cooldown_until, Some(until), "{t}");
        assert_eq!(c.cooldown_cause, Some(t), "{t}");
        let cooled = of_type(&h.events(), EventType::ResourceCooled);
        assert_eq!(cooled.len(), 1, "{t}");
        let e = &cooled[0];
        assert_eq!(e.cause, Some(t), "{t}");
        assert_eq!(e.until, Some(until), "{t}");
        assert_eq!(e.at, T + 1_000, "{t}");
        assert_eq!(e.context.as_deref(), Some("c"), "{t}");
        assert_eq!(e.resource, Some((Kind::Proxy, "p".into())), "{t}");
    }
}

#[test]
fn the_failure_that_cools_sets_cause_and_base() {
    // TIMEOUT then BLOCKED: the second one cools, so the cause is BLOCKED and the base 3600 s.
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Blocked);
    let c = h.cell("p", "c");
    assert_eq!(c.score, -35.0);
    assert_eq!(c.cooldown_cause, Some(Blocked));
    assert_eq!(c.cooldown_until, Some(T + 2 * HOUR));
}

#[test]
fn configured_penalties_and_bases_are_used() {
    let mut h = with_reg(r#"{"penalties":{"SLOW":7.5},"cooldownBaseMs":{"SLOW":1000}}"#);
    h.fail("p", "c", Slow);
    h.fail("p", "c", Slow);
    let c = h.cell("p", "c");
    assert_eq!(c.score, -15.0);
    assert_eq!(c.cooldown_until, Some(T + 2_000));
}

// ---------------------------------------------------------------------------------------------
// Reward and clamping

#[test]
fn success_adds_success_reward_and_counts_the_streak() {
    let mut h = with_reg("{}");
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.score, 5.0);
    assert_eq!(c.consecutive_successes, 1);
    assert_eq!(c.consecutive_failures, 0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.score, 10.0);
    assert_eq!(c.consecutive_successes, 2);

    let mut h = with_reg(r#"{"successReward":7.5}"#);
    h.ok("p", "c");
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").score, 15.0);

    // A success after a failure: score moves up from the penalised value, failures reset.
    let mut h = with_reg("{}");
    h.fail("p", "c", ConnectionReset);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.score, -5.0);
    assert_eq!(c.consecutive_failures, 0);
    assert_eq!(c.consecutive_successes, 1);
    // ... and a failure resets the success streak.
    h.fail("p", "c", Slow);
    let c = h.cell("p", "c");
    assert_eq!(c.consecutive_successes, 0);
    assert_eq!(c.consecutive_failures, 1);
    assert_eq!(c.score, -7.0);
}

#[test]
fn score_is_clamped_at_100() {
    let mut h = with_reg("{}");
    for _ in 0..21 {
        h.ok("p", "c"); // 21 × 5 = 105
    }
    assert_eq!(h.cell("p", "c").score, 100.0);
    // The clamped value is what is stored: one TIMEOUT gives 95, not 100.
    h.fail("p", "c", Timeout);
    assert_eq!(h.cell("p", "c").score, 95.0);
}

#[test]
fn score_is_clamped_at_minus_100() {
    let mut h = with_reg("{}");
    for _ in 0..4 {
        h.fail("p", "c", Blocked); // 4 × 30 = 120
    }
    assert_eq!(h.cell("p", "c").score, -100.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").score, -95.0);
}

// ---------------------------------------------------------------------------------------------
// coolAfter and the backoff curve

#[test]
fn cool_after_threshold() {
    // coolAfter 3: two failures stay HEALTHY, the third cools at base × 2^(3 − 1) = 240 s.
    let mut h = with_reg(r#"{"coolAfter":3}"#);
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    assert_eq!(h.cell("p", "c").state, ViewState::Healthy);
    assert!(of_type(&h.events(), EventType::ResourceCooled).is_empty());
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(T + 240 * SEC));

    // coolAfter 1: the first failure cools, at base × 2^0.
    let mut h = with_reg(r#"{"coolAfter":1}"#);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(T + 60 * SEC));
}

/// Cools `p` with two failures of `t` at T, then fails it again at each cooldown's end (a
/// failed half-open trial) and returns every cooldown's length, in ms.
fn cooldown_lengths(h: &mut Harness, t: FailureType, trials: usize) -> Vec<u64> {
    set_abs(h, T);
    h.fail("p", "c", t);
    h.fail("p", "c", t);
    let mut start = T;
    let mut out = Vec::new();
    for i in 0..=trials {
        let c = h.cell("p", "c");
        assert_eq!(c.state, ViewState::Cooling);
        assert_eq!(c.consecutive_failures as usize, 2 + i);
        let until = c.cooldown_until.unwrap();
        let cooled = of_type(&h.events(), EventType::ResourceCooled);
        assert_eq!(cooled.len(), 1, "one RESOURCE_COOLED per cooldown");
        assert_eq!(cooled[0].until, Some(until));
        out.push(until - start);
        if i < trials {
            // The cooldown is over exactly at `until` (exclusive expiry); the trial fails.
            set_abs(h, until);
            h.fail("p", "c", t);
            start = until;
        }
    }
    out
}

#[test]
fn backoff_curve_doubles_and_stops_at_64x() {
    let mut h = with_reg("{}");
    // consecutive failures 2, 3, ..., 10 → factor 2, 4, 8, 16, 32, 64, 64, 64, 64.
    let factors = [2, 4, 8, 16, 32, 64, 64, 64, 64];
    let want: Vec<u64> = factors.iter().map(|f| f * 60 * SEC).collect();
    assert_eq!(cooldown_lengths(&mut h, Timeout, 8), want);
}

#[test]
fn a_resource_blocked_again_and_again_waits_2h_4h_8h_up_to_64h() {
    let mut h = with_reg("{}");
    let hours = [2, 4, 8, 16, 32, 64, 64, 64];
    let want: Vec<u64> = hours.iter().map(|x| x * HOUR).collect();
    assert_eq!(cooldown_lengths(&mut h, Blocked, 7), want);
}

#[test]
fn backoff_with_max_exponent_0_never_grows() {
    let mut h = with_reg(r#"{"maxBackoffExponent":0}"#);
    assert_eq!(cooldown_lengths(&mut h, Timeout, 3), vec![60 * SEC; 4]);
}

#[test]
fn backoff_with_max_exponent_2_stops_at_4x() {
    let mut h = with_reg(r#"{"maxBackoffExponent":2}"#);
    let want: Vec<u64> = [2, 4, 4, 4, 4].iter().map(|f| f * 60 * SEC).collect();
    assert_eq!(cooldown_lengths(&mut h, Timeout, 4), want);
}

// ---------------------------------------------------------------------------------------------
// Late results during a cooldown

#[test]
fn late_failures_do_not_restart_extend_or_rewrite_the_cooldown() {
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.at(1_000.0);
    h.fail("p", "c", Timeout);
    let until = T + 1_000 + 120 * SEC;
    assert_eq!(of_type(&h.events(), EventType::ResourceCooled).len(), 1);

    // A late BLOCKED (bigger penalty, bigger base) inside the cooldown.
    h.at(60_000.0);
    h.fail("p", "c", Blocked);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(until), "not restarted nor extended");
    assert_eq!(c.cooldown_cause, Some(Timeout), "cause not rewritten");
    assert_eq!(c.consecutive_failures, 3, "late failures still count");
    assert_eq!(c.score, -40.0, "the penalty still applies");
    assert_eq!(c.updated_at, T + 60_000);
    // One more, one millisecond before the end.
    set_abs(&h, until - 1);
    h.fail("p", "c", ConnectionReset);
    let c = h.cell("p", "c");
    assert_eq!(c.cooldown_until, Some(until));
    assert_eq!(c.cooldown_cause, Some(Timeout));
    assert_eq!(c.consecutive_failures, 4);
    assert_eq!(c.score, -50.0);
    assert!(h.events().is_empty(), "no second RESOURCE_COOLED (nor any event) for late failures");
    assert_eq!(snap_cell(&mut h)["window"].as_array().unwrap().len(), 4);

    // The trial after expiry fails: it cools at the step of 5 consecutive failures (2^4 = 16×).
    set_abs(&h, until);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.consecutive_failures, 5);
    assert_eq!(c.cooldown_until, Some(until + 16 * 60 * SEC));
    assert_eq!(c.cooldown_cause, Some(Timeout));
    let cooled = of_type(&h.events(), EventType::ResourceCooled);
    assert_eq!(cooled.len(), 1);
    assert_eq!(cooled[0].until, Some(until + 16 * 60 * SEC));
}

#[test]
fn a_late_failure_of_another_type_after_expiry_sets_the_new_cause() {
    let mut h = with_reg("{}");
    h.fail("p", "c", Slow);
    h.fail("p", "c", Slow); // 60 s
    h.at(60_000.0);
    h.fail("p", "c", TlsHandshake); // 3 consecutive: 300 s × 4
    let c = h.cell("p", "c");
    assert_eq!(c.cooldown_cause, Some(TlsHandshake));
    assert_eq!(c.cooldown_until, Some(T + 60_000 + 1_200 * SEC));
}

#[test]
fn success_while_cooling_moves_score_and_resets_failures_but_not_state() {
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    let until = T + 120 * SEC;
    h.events();

    h.at(10_000.0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.score, -5.0);
    assert_eq!(c.consecutive_failures, 0);
    assert_eq!(c.consecutive_successes, 1);
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(until));
    assert_eq!(c.cooldown_cause, Some(Timeout));
    // A second one reaches recoverAfter 2 but changes no state either.
    h.at(20_000.0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.consecutive_successes, 2);
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(until));
    assert!(h.events().is_empty());

    // After expiry, probation starts at streak 1 — the early successes do not count.
    set_abs(&h, until);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!(c.consecutive_successes, 1);
    assert_eq!(c.score, 5.0);
    assert!(of_type(&h.events(), EventType::ResourceRecovered).is_empty());
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Healthy);
    assert_eq!(c.consecutive_successes, 2);
    let recovered = of_type(&h.events(), EventType::ResourceRecovered);
    assert_eq!(recovered.len(), 1);
}

#[test]
fn success_then_failure_while_cooling_restarts_the_failure_count() {
    // A success resets consecutiveFailures, so a failed trial after expiry counts 1 (below
    // coolAfter 2): no new cooldown, the state stays COOLING (expired).
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.at(10_000.0);
    h.ok("p", "c");
    h.at(120_000.0);
    h.events();
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.consecutive_failures, 1);
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(T + 120 * SEC));
    assert!(of_type(&h.events(), EventType::ResourceCooled).is_empty());
    // The next one is the 2nd consecutive failure: base × 2.
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.cooldown_until, Some(T + 240 * SEC));
}

// ---------------------------------------------------------------------------------------------
// Recovery

#[test]
fn first_success_after_expiry_starts_probation_without_an_event() {
    let mut h = with_reg(r#"{"recoverAfter":3}"#);
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    // One millisecond before the end a success changes no state.
    h.at(119_999.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Cooling);
    h.events();
    h.at(120_000.0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!(c.consecutive_successes, 1);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering, "2 < recoverAfter 3");
    assert_eq!(c.consecutive_successes, 2);
    assert!(h.events().is_empty(), "probation has no event of its own");
    h.at(121_000.0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Healthy);
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::ResourceRecovered);
    assert_eq!(ev[0].at, T + 121_000);
    assert_eq!(ev[0].context.as_deref(), Some("c"));
    assert_eq!(ev[0].resource, Some((Kind::Proxy, "p".into())));
}

#[test]
fn recovering_becomes_healthy_at_recover_after_2() {
    let mut h = with_reg("{}");
    h.fail("p", "c", Slow);
    h.fail("p", "c", Slow); // 60 s
    h.at(60_000.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Recovering);
    h.events();
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Healthy);
    assert_eq!(h.event_types(), vec!["RESOURCE_RECOVERED"]);
}

#[test]
fn recover_after_1_goes_straight_to_healthy() {
    let mut h = with_reg(r#"{"recoverAfter":1}"#);
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.events();
    h.at(120_000.0);
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Healthy);
    assert_eq!(c.consecutive_successes, 1);
    assert_eq!(h.event_types(), vec!["RESOURCE_RECOVERED"]);
}

#[test]
fn failure_during_probation_resets_the_streak_and_cools_again_at_cool_after() {
    let mut h = with_reg("{}");
    // First cooldown at 2 failures (120 s), failed trial at 3 (240 s): the curve has climbed.
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.at(120_000.0);
    h.fail("p", "c", Timeout);
    assert_eq!(h.cell("p", "c").cooldown_until, Some(T + 360 * SEC));
    h.at(360_000.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Recovering);
    h.events();

    // One failure in probation: streak reset, below coolAfter, still RECOVERING (selectable).
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!(c.consecutive_successes, 0);
    assert_eq!(c.consecutive_failures, 1);
    assert!(h.events().is_empty());
    let lease = h.acquire("c").expect("RECOVERING is selectable");
    h.pool.release(&lease).unwrap();
    h.events();

    // The second: cools again, the curve restarted (2 consecutive failures → 2×, not 16×).
    h.at(361_000.0);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(T + 361_000 + 120 * SEC));
    assert_eq!(h.event_types(), vec!["RESOURCE_COOLED"]);
}

#[test]
fn a_success_in_probation_after_a_failure_restarts_the_streak_at_1() {
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.at(120_000.0);
    h.ok("p", "c"); // RECOVERING, streak 1
    h.fail("p", "c", Slow); // streak 0
    h.ok("p", "c"); // streak 1: not yet recoverAfter 2
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!(c.consecutive_successes, 1);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Healthy);
}

#[test]
fn cooldown_until_and_cause_are_kept_after_recovery() {
    let mut h = with_reg("{}");
    h.fail("p", "c", ConnectionReset);
    h.fail("p", "c", ConnectionReset);
    let until = T + 240 * SEC;
    set_abs(&h, until);
    h.ok("p", "c");
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Healthy);
    assert_eq!(c.cooldown_until, Some(until));
    assert_eq!(c.cooldown_cause, Some(ConnectionReset));
    let s = snap_cell(&mut h);
    assert_eq!(s["cooldownUntil"], until);
    assert_eq!(s["cooldownCause"], "CONNECTION_RESET");
    assert_eq!(s["state"], "HEALTHY");
}

// ---------------------------------------------------------------------------------------------
// Blocklisted resources

#[test]
fn outcomes_on_a_blocklisted_resource_move_evidence_but_not_state() {
    let mut h = with_reg("{}");
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    h.events();
    h.fail("p", "c", Blocked);
    h.fail("p", "c", Blocked);
    h.fail("p", "c", Blocked);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Blocklisted);
    assert_eq!(c.score, -90.0);
    assert_eq!(c.consecutive_failures, 3);
    assert_eq!(c.cooldown_until, None);
    assert_eq!(c.cooldown_cause, None);
    assert!(h.events().is_empty(), "no RESOURCE_COOLED while blocklisted");
    let s = snap_cell(&mut h);
    assert_eq!(s["state"], "HEALTHY");
    assert_eq!(s["window"].as_array().unwrap().len(), 3);

    assert!(h.pool.unblock(Kind::Proxy, "p").unwrap());
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Healthy);
    // Evidence kept: the next failure is the 4th consecutive one and cools at 2^3.
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Cooling);
    assert_eq!(c.cooldown_until, Some(T + 8 * 60 * SEC));
}

#[test]
fn successes_on_a_blocklisted_resource_do_not_start_or_end_probation() {
    // An expired cooldown stays COOLING while blocked.
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.at(120_000.0);
    h.block_secs("p", 3600.0);
    h.events();
    h.ok("p", "c");
    h.ok("p", "c");
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!(c.score, 5.0);
    assert_eq!(c.consecutive_successes, 3);
    assert_eq!(c.consecutive_failures, 0);
    assert!(h.events().is_empty());
    assert_eq!(snap_cell(&mut h)["state"], "COOLING");
    assert!(h.pool.unblock(Kind::Proxy, "p").unwrap());
    assert_eq!(h.cell("p", "c").state, ViewState::Cooling);

    // A RECOVERING cell does not become HEALTHY while blocked, and no RESOURCE_RECOVERED.
    let mut h = with_reg("{}");
    h.fail("p", "c", Timeout);
    h.fail("p", "c", Timeout);
    h.at(120_000.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Recovering);
    h.block_secs("p", 10.0);
    h.events();
    h.ok("p", "c");
    h.ok("p", "c");
    assert!(h.events().is_empty());
    assert_eq!(snap_cell(&mut h)["state"], "RECOVERING");
    h.pool.unblock(Kind::Proxy, "p").unwrap();
    let c = h.cell("p", "c");
    assert_eq!(c.state, ViewState::Recovering);
    assert_eq!(c.consecutive_successes, 3);
}

// ---------------------------------------------------------------------------------------------
// Latency percentiles and the window

#[test]
fn latency_percentiles_are_nearest_rank() {
    let mut h = with_reg("{}");
    // No latency anywhere: both null.
    h.ok("p", "c");
    let c = h.cell("p", "c");
    assert_eq!((c.p50_latency_ms, c.p95_latency_ms), (None, None));

    // [10, 20] (plus the latency-less success): nearest rank p50 = ceil(0.5 × 2) = 1st = 10
    // (an interpolating percentile would say 15); p95 = ceil(1.9) = 2nd = 20.
    report_latency(&mut h, None, Some(20.0));
    report_latency(&mut h, Some(Slow), Some(10.0));
    let c = h.cell("p", "c");
    assert_eq!(c.p50_latency_ms, Some(10.0));
    assert_eq!(c.p95_latency_ms, Some(20.0));

    // [10, 20, 12.5]: sorted 10, 12.5, 20 → p50 = ceil(1.5) = 2nd = 12.5, p95 = 3rd = 20.
    report_latency(&mut h, None, Some(12.5));
    let c = h.cell("p", "c");
    assert_eq!(c.p50_latency_ms, Some(12.5));
    assert_eq!(c.p95_latency_ms, Some(20.0));
}

#[test]
fn percentiles_cover_only_the_last_window_size_outcomes() {
    let mut h = with_reg("{}");
    for ms in 1..=12 {
        report_latency(&mut h, None, Some(f64::from(ms)));
    }
    // Window (10): latencies 3..=12. p50 = 5th = 7; p95 = ceil(9.5) = 10th = 12.
    let c = h.cell("p", "c");
    assert_eq!(c.p50_latency_ms, Some(7.0));
    assert_eq!(c.p95_latency_ms, Some(12.0));
    let w = snap_cell(&mut h)["window"].as_array().unwrap().clone();
    assert_eq!(w.len(), 10);
    assert_eq!(w[0], serde_json::json!(["OK", 3]));
    assert_eq!(w[9], serde_json::json!(["OK", 12]));

    // windowSize 20, latencies 20..=1 (descending): p50 = 10th = 10, p95 = ceil(19) = 19th = 19.
    let mut h = with_reg(r#"{"windowSize":20}"#);
    for ms in (1..=20).rev() {
        report_latency(&mut h, None, Some(f64::from(ms)));
    }
    let c = h.cell("p", "c");
    assert_eq!(c.p50_latency_ms, Some(10.0));
    assert_eq!(c.p95_latency_ms, Some(19.0));

    // windowSize 2: the only latency falls out of the window → null again.
    let mut h = with_reg(r#"{"windowSize":2}"#);
    report_latency(&mut h, None, Some(100.0));
    report_latency(&mut h, Some(Timeout), None);
    assert_eq!(h.cell("p", "c").p50_latency_ms, Some(100.0));
    report_latency(&mut h, None, None);
    let c = h.cell("p", "c");
    assert_eq!((c.p50_latency_ms, c.p95_latency_ms), (None, None));
    let w = snap_cell(&mut h)["window"].clone();
    assert_eq!(w, serde_json::json!([["TIMEOUT", null], ["OK", null]]));
}

#[test]
fn failures_with_latency_count_in_the_percentiles() {
    let mut h = with_reg(r#"{"coolAfter":1000}"#);
    report_latency(&mut h, Some(Timeout), Some(5000.0));
    report_latency(&mut h, None, Some(100.0));
    report_latency(&mut h, Some(Slow), Some(900.0));
    report_latency(&mut h, None, Some(200.0));
    // Sorted 100, 200, 900, 5000: p50 = 2nd = 200, p95 = ceil(3.8) = 4th = 5000.
    let c = h.cell("p", "c");
    assert_eq!(c.p50_latency_ms, Some(200.0));
    assert_eq!(c.p95_latency_ms, Some(5000.0));
}

// ---------------------------------------------------------------------------------------------
// Time

#[test]
fn a_clock_stepping_backwards_is_treated_as_the_latest_reading() {
    let mut h = with_reg("{}");
    h.at(10_000.0);
    h.fail("p", "c", Timeout);
    assert_eq!(h.cell("p", "c").updated_at, T + 10_000);

    h.at(5_000.0);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.updated_at, T + 10_000, "stamped with max(now, last)");
    assert_eq!(c.cooldown_until, Some(T + 10_000 + 120 * SEC), "the cooldown runs from the later time");
    let cooled = of_type(&h.events(), EventType::ResourceCooled);
    assert_eq!(cooled[0].at, T + 10_000);

    // Had the cooldown run from the earlier reading it would be over at T + 125 s; it is not.
    h.at(126_000.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Cooling);
    h.at(130_000.0);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Recovering);
}

#[test]
fn fractional_clock_milliseconds_are_floored() {
    let mut h = with_reg("{}");
    h.clock.set(T0 + 1_234.9);
    h.fail("p", "c", Timeout);
    assert_eq!(h.cell("p", "c").updated_at, T + 1_234);
    h.clock.set(T0 + 2_000.999);
    h.fail("p", "c", Timeout);
    let c = h.cell("p", "c");
    assert_eq!(c.updated_at, T + 2_000);
    assert_eq!(c.cooldown_until, Some(T + 2_000 + 120 * SEC));
    // 0.9 ms before the end floors to until − 1: still cooling.
    h.clock.set((T + 2_000 + 120 * SEC) as f64 - 0.1);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").state, ViewState::Cooling);
}
