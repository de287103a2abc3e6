//! `finish` rules of SPEC §3 "Capacity, waiting and finishing a step" (Finishing a step), one
//! test per sentence the engine owns: in one call, report the outcome on the lease's
//! (resource × context) cell — also when the lease has lapsed — release the lease for its
//! current holder only, and with `next` lease the next one (in `next.context`, default the
//! lease's own; from `next.groups` in order; `quiet`: no `ACQUISITION_REJECTED`); exactly one
//! revision step, events in the order report, `LEASE_RELEASED`, `RESOURCE_LEASED` (after any
//! expiry due at the reading). At most once per lease: a repeated finish is `LEASE_FINISHED`
//! and reports nothing, for `leaseTtlMs` after the first (then it is forgotten and a finish
//! reports again). A lease whose resource was deregistered drops its outcome and still answers
//! `next`; a token the pool never issued is `INVALID_ARGUMENT`; a bad argument is reported
//! before anything else; a report refused for `maxCells` changes nothing (the lease stays held
//! and the token is not spent).

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{EventType, FailureType, Kind, Lease, Next, Outcome, Registration, ViewState};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

const SAME: Next = Next { context: None, groups: None, quiet: false };

fn ok() -> Outcome {
    Outcome::success()
}

fn timeout() -> Outcome {
    Outcome::failure(FailureType::Timeout)
}

fn finish(h: &mut Harness, l: &Lease, o: Outcome, next: Option<&Next>) -> Option<Lease> {
    h.pool.finish(l, o, next).unwrap()
}

/// `PROXY/p` and `PROXY/q` registered, a lease on `p` in `a` (token 1), events drained.
fn leased_p(patch: &str) -> (Harness, Lease) {
    let mut h = Harness::with_patch(patch);
    h.reg("p");
    h.reg("q");
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    h.events();
    (h, l)
}

fn kinds(h: &mut Harness) -> Vec<(&'static str, Option<String>, Option<u64>)> {
    h.events().iter().map(|e| (e.ty.as_str(), e.context.as_ref().map(|c| c.to_string()), e.token)).collect()
}

// ---------------------------------------------------------------------------------------------
// Report and release in one call

#[test]
fn finish_reports_on_the_lease_cell_and_releases_the_lease() {
    let (mut h, l) = leased_p("{}");
    let rev = h.revision();
    h.at(1_000.0);
    assert_eq!(finish(&mut h, &l, Outcome::Success { latency_ms: Some(120.0) }, None), None);
    let ev = h.events();
    assert_eq!(ev.len(), 1, "a success on a fresh cell changes no state: the release alone");
    assert_eq!((ev[0].ty, ev[0].token, ev[0].at), (EventType::LeaseReleased, Some(1), T + 1_000));
    assert_eq!(ev[0].context.as_deref(), Some("a"));
    let c = h.cell("p", "a");
    assert_eq!((c.score, c.consecutive_successes, c.updated_at), (5.0, 1, T + 1_000));
    assert_eq!(c.p50_latency_ms, Some(120.0));
    assert!(h.view("p").leases.is_empty(), "released");
    assert_eq!(h.revision(), rev + 1, "one revision step");
    assert!(!h.pool.release(&l).unwrap(), "released already");
}

#[test]
fn a_finish_that_cools_the_cell_emits_the_report_event_before_the_release() {
    let (mut h, l) = leased_p(r#"{"coolAfter":1}"#);
    finish(&mut h, &l, timeout(), None);
    let ev = h.events();
    let got: Vec<_> = ev.iter().map(|e| e.ty.as_str()).collect();
    assert_eq!(got, ["RESOURCE_COOLED", "LEASE_RELEASED"]);
    assert_eq!(ev[0].until, Some(T + 60_000));
    assert_eq!(ev[1].seq, ev[0].seq + 1);
    assert_eq!(h.cell("p", "a").state, ViewState::Cooling);
}

#[test]
fn the_report_applies_even_when_the_lease_has_lapsed() {
    let (mut h, l) = leased_p("{}");
    h.at(30_000.0); // the lease ends here
    let rev = h.revision();
    assert_eq!(finish(&mut h, &l, timeout(), None), None);
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].ty, ev[0].at), (EventType::LeaseExpired, T + 30_000), "no LEASE_RELEASED");
    let c = h.cell("p", "a");
    assert_eq!((c.consecutive_failures, c.score, c.updated_at), (1, -5.0, T + 30_000), "the outcome is real");
    assert_eq!(h.revision(), rev + 1, "the expiry and the report: one step");
}

#[test]
fn the_release_applies_only_for_the_current_holder() {
    let (mut h, old) = leased_p("{}");
    h.reg_max("q", 1);
    h.pool.block(Kind::Proxy, "q", repute::BlockSpec::Permanent).unwrap();
    h.at(30_000.0);
    let new = h.acquire("a").expect("p, free again");
    assert_eq!((&*new.value, new.token), ("p", 2));
    h.events();
    finish(&mut h, &old, ok(), None);
    assert!(h.events().is_empty(), "no release of someone else's lease");
    assert_eq!(h.cell("p", "a").consecutive_successes, 1, "the report applied");
    assert_eq!(h.view("p").leases, vec![new.clone()], "the new holder keeps its lease");
    assert!(h.pool.release(&new).unwrap());
}

// ---------------------------------------------------------------------------------------------
// next

#[test]
fn next_leases_in_the_same_context_by_default_with_one_revision_step() {
    let (mut h, l) = leased_p("{}");
    // After the report and the release, candidates in a: p (score 5) and q (fresh, 0).
    // Weights (5 − 0) + 1 = 6 and 1, total 7; u = 0.5 → target 3.5 → p (running 6).
    h.draws.push(0.5);
    let rev = h.revision();
    h.at(1_000.0);
    let next = finish(&mut h, &l, ok(), Some(&SAME)).expect("a next lease");
    assert_eq!(h.draws.remaining(), 0, "one draw");
    assert_eq!((&*next.value, &*next.context, next.token), ("p", "a", 2));
    assert_eq!((next.leased_at, next.expires_at), (T + 1_000, T + 31_000));
    let ev = h.events();
    let got: Vec<_> = ev.iter().map(|e| (e.ty.as_str(), e.token, e.at)).collect();
    assert_eq!(got, [("LEASE_RELEASED", Some(1), T + 1_000), ("RESOURCE_LEASED", Some(2), T + 1_000)]);
    assert_eq!(ev[1].until, Some(T + 31_000));
    assert_eq!(h.revision(), rev + 1, "report, release and acquire: one revision step");
    assert_eq!(h.view("p").leases, vec![next]);
}

#[test]
fn the_report_and_release_apply_before_the_next_acquire() {
    // coolAfter 1: the TIMEOUT cools p in a, so the next lease in a is q (the one candidate).
    let (mut h, l) = leased_p(r#"{"coolAfter":1}"#);
    let next = finish(&mut h, &l, timeout(), Some(&SAME)).expect("q");
    assert_eq!(&*next.value, "q");
    assert_eq!(
        kinds(&mut h),
        [
            ("RESOURCE_COOLED", Some("a".into()), None),
            ("LEASE_RELEASED", Some("a".into()), Some(1)),
            ("RESOURCE_LEASED", Some("a".into()), Some(2)),
        ]
    );
    // With one resource of capacity 1, the lease just released is the next one.
    let mut h = Harness::new();
    h.reg("solo");
    let l = h.acquire("a").unwrap();
    let next = finish(&mut h, &l, ok(), Some(&SAME)).expect("solo again");
    assert_eq!((&*next.value, next.token), ("solo", 2));
}

#[test]
fn expiries_due_at_the_reading_come_before_the_finish_events() {
    let (mut h, l) = leased_p(r#"{"coolAfter":1}"#);
    h.at(30_000.0);
    let next = finish(&mut h, &l, timeout(), Some(&SAME)).expect("q");
    assert_eq!(&*next.value, "q");
    assert_eq!(
        kinds(&mut h),
        [
            ("LEASE_EXPIRED", None, Some(1)),
            ("RESOURCE_COOLED", Some("a".into()), None),
            ("RESOURCE_LEASED", Some("a".into()), Some(2)),
        ]
    );
}

#[test]
fn next_may_name_another_context_and_groups_and_defaults_to_the_finished_lease_context() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1}"#);
    h.reg_in("d1", Some("dc"));
    h.reg_in("r1", Some("res"));
    let (res, both) = ([Some("res")], [Some("res"), Some("dc")]);
    let l = h.acquire_in("a", &res).unwrap();
    assert_eq!(&*l.value, "r1");
    // The TIMEOUT cools r1 in a; in b it is healthy, the one candidate of res there.
    let n1 =
        finish(&mut h, &l, timeout(), Some(&Next { context: Some("b"), groups: Some(&res), quiet: false }));
    let n1 = n1.expect("r1 in b");
    assert_eq!((&*n1.value, &*n1.context, n1.group.as_deref()), ("r1", "b", Some("res")));
    // In a, res has no candidate (r1 cools there): the next listed group.
    let n2 = finish(&mut h, &n1, ok(), Some(&Next { context: Some("a"), groups: Some(&both), quiet: false }));
    let n2 = n2.expect("d1 in a");
    assert_eq!((&*n2.value, &*n2.context), ("d1", "a"));
    h.events();
    // No context given: n2's own, a, where res has none.
    assert_eq!(
        finish(&mut h, &n2, ok(), Some(&Next { context: None, groups: Some(&res), quiet: false })),
        None
    );
    assert_eq!(
        kinds(&mut h),
        [("LEASE_RELEASED", Some("a".into()), Some(3)), ("ACQUISITION_REJECTED", Some("a".into()), None)]
    );
}

#[test]
fn a_next_with_no_candidate_answers_none_with_one_rejection_and_none_when_quiet() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1}"#);
    h.reg("solo");
    let l = h.acquire("a").unwrap();
    h.events();
    let rev = h.revision();
    assert_eq!(finish(&mut h, &l, timeout(), Some(&SAME)), None, "solo cools in a");
    assert_eq!(
        kinds(&mut h),
        [
            ("RESOURCE_COOLED", Some("a".into()), None),
            ("LEASE_RELEASED", Some("a".into()), Some(1)),
            ("ACQUISITION_REJECTED", Some("a".into()), None),
        ]
    );
    assert_eq!(h.revision(), rev + 1);

    let l = h.acquire("b").unwrap();
    h.events();
    let quiet = Next { quiet: true, ..SAME };
    assert_eq!(finish(&mut h, &l, timeout(), Some(&quiet)), None, "solo cools in b too");
    assert_eq!(
        kinds(&mut h),
        [("RESOURCE_COOLED", Some("b".into()), None), ("LEASE_RELEASED", Some("b".into()), Some(2))],
        "quiet: no ACQUISITION_REJECTED"
    );
    // Quiet or not, a next lease that can be granted is granted.
    let l = h.acquire("c").unwrap();
    let n = finish(&mut h, &l, ok(), Some(&Next { context: Some("c"), quiet: true, ..SAME }));
    assert_eq!(n.map(|n| n.token), Some(4));
}

#[test]
fn a_quiet_finish_that_changes_nothing_durable_takes_no_revision_step() {
    // The resource was deregistered: nothing to report, nothing to release, nothing granted.
    let (mut h, l) = leased_p("{}");
    h.pool.deregister(Kind::Proxy, "p").unwrap();
    h.pool.block(Kind::Proxy, "q", repute::BlockSpec::Permanent).unwrap();
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    let quiet = Next { quiet: true, ..SAME };
    assert_eq!(finish(&mut h, &l, ok(), Some(&quiet)), None);
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
}

// ---------------------------------------------------------------------------------------------
// At most once per lease

#[test]
fn a_repeated_finish_is_lease_finished_and_reports_nothing() {
    let (mut h, l) = leased_p("{}");
    // After the report, p has score −5 in a and q 0: weights 1 and 6, total 7; u = 0.5 →
    // target 3.5 → q (running sums 1, 7).
    h.draws.push(0.5);
    let next = finish(&mut h, &l, timeout(), Some(&SAME)).expect("a next lease");
    assert_eq!(&*next.value, "q");
    h.events();
    let cell = h.cell("p", "a");
    let (snap, rev) = (h.snapshot(), h.revision());
    for n in [None, Some(&SAME)] {
        let e = h.pool.finish(&l, timeout(), n).unwrap_err();
        assert_eq!(e.code(), "LEASE_FINISHED", "{e}");
        assert!(matches!(e, repute::Error::LeaseFinished(_)));
    }
    // By the grant: not held any more, so left to the call by name (nothing done).
    let id = l.id.expect("granted");
    assert_eq!(h.pool.finish_lease(id, l.token, ok(), None).unwrap(), None);
    assert_eq!(h.cell("p", "a"), cell, "reported once");
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev), "no lease granted, no step");
    // The next lease is untouched and finishes once too.
    finish(&mut h, &next, ok(), None);
    assert_eq!(h.pool.finish(&next, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
}

#[test]
fn a_lapsed_lease_finishes_once_too() {
    let (mut h, l) = leased_p("{}");
    h.at(40_000.0);
    finish(&mut h, &l, timeout(), None);
    assert_eq!(h.pool.finish(&l, timeout(), None).unwrap_err().code(), "LEASE_FINISHED");
    assert_eq!(h.cell("p", "a").consecutive_failures, 1);
}

/// Regression: a finished token used to be forgotten only when a later finish pruned the
/// memory, so whether a repeat after `leaseTtlMs` reported again depended on other leases'
/// finishes in between.
#[test]
fn finished_tokens_are_remembered_for_lease_ttl_ms_then_forgotten() {
    let (mut h, l) = leased_p(r#"{"leaseTtlMs":5000}"#);
    h.at(1_000.0);
    finish(&mut h, &l, timeout(), None);
    h.at(5_999.0); // 1 ms short of leaseTtlMs after the finish
    assert_eq!(h.pool.finish(&l, timeout(), None).unwrap_err().code(), "LEASE_FINISHED");
    assert_eq!(h.cell("p", "a").consecutive_failures, 1);
    h.at(6_000.0);
    h.events();
    assert_eq!(finish(&mut h, &l, timeout(), None), None, "forgotten: reported again");
    assert_eq!(h.cell("p", "a").consecutive_failures, 2);
    assert_eq!(h.event_types(), ["RESOURCE_COOLED"], "the second failure reaches coolAfter 2");
    // Finished again at 6 s, it is remembered from then on, through other finishes.
    let q = h.pool.acquire_resource(Kind::Proxy, "q", "a").unwrap().unwrap();
    h.at(6_001.0);
    finish(&mut h, &q, ok(), None);
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
    h.at(10_999.0);
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
    h.at(11_000.0);
    assert!(h.pool.finish(&l, ok(), None).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Leases whose resource went, tokens never issued, errors

#[test]
fn a_lease_whose_resource_was_deregistered_drops_its_outcome_and_still_answers_next() {
    let (mut h, l) = leased_p("{}");
    h.pool.deregister(Kind::Proxy, "p").unwrap();
    h.events();
    let rev = h.revision();
    let next = finish(&mut h, &l, timeout(), Some(&SAME)).expect("q, the one resource left");
    assert_eq!((&*next.value, next.token), ("q", 2));
    assert_eq!(h.event_types(), ["RESOURCE_LEASED"], "no report, no release");
    assert_eq!(h.revision(), rev + 1);
    assert_eq!(h.pool.stats().unwrap().cells, 0);
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED", "finished once");
    // By the grant: the lease's resource deregistered, it is left to the call by name.
    let qid = next.id.expect("granted");
    h.pool.deregister(Kind::Proxy, "q").unwrap();
    h.events();
    assert_eq!(h.pool.finish_lease(qid, next.token, timeout(), None).unwrap(), None);
    assert!(h.events().is_empty());
    assert_eq!(h.pool.stats().unwrap().cells, 0);
}

#[test]
fn a_lease_of_an_earlier_registration_of_the_same_key_reports_nothing_on_the_new_one() {
    // p leased, deregistered and registered again: the old lease names the key, not this
    // registration, so its finish drops the outcome — by name as by id.
    let (mut h, l) = leased_p("{}");
    let old_id = l.id.expect("granted");
    h.pool.deregister(Kind::Proxy, "p").unwrap();
    h.reg("p");
    h.events();
    assert_eq!(finish(&mut h, &l, timeout(), None), None);
    assert!(h.events().is_empty(), "nothing reported, nothing released");
    assert_eq!(h.pool.stats().unwrap().cells, 0, "the new registration has no cell");
    // A lease on the new registration does report.
    let fresh = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().expect("p is free");
    assert_eq!(finish(&mut h, &fresh, timeout(), None), None);
    assert_eq!(h.cell("p", "a").consecutive_failures, 1);
    // By a stale id nothing (the earlier registration's id names nothing now).
    let again = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().expect("p is free");
    assert_ne!(again.id, Some(old_id));
    assert_eq!(h.pool.finish_lease(old_id, again.token, timeout(), None).unwrap(), None);
    assert_eq!(h.cell("p", "a").consecutive_failures, 1, "the stale id reported nothing");
}

#[test]
fn a_token_never_issued_is_invalid_argument_and_changes_nothing() {
    let (mut h, l) = leased_p("{}");
    let (snap, rev) = (h.snapshot(), h.revision());
    for token in [0, 2, u64::MAX] {
        let forged = Lease { token, ..l.clone() };
        let e = h.pool.finish(&forged, ok(), Some(&SAME)).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "token {token}: {e}");
        let id = l.id.expect("granted");
        assert_eq!(h.pool.finish_lease(id, token, ok(), None).unwrap(), None, "no lease {token} held");
    }
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
    assert!(h.pool.finish(&l, ok(), None).is_ok(), "the real lease still finishes");
}

#[test]
fn a_bad_argument_is_reported_first() {
    let (mut h, l) = leased_p(r#"{"maxCells":1}"#);
    finish(&mut h, &l, ok(), None); // the one cell: p in a
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    let blank = Next { context: Some(" "), ..SAME };
    let empty: [Option<&str>; 0] = [];
    let no_groups = Next { groups: Some(&empty), ..SAME };
    let twice = [None, None];
    let dup = Next { groups: Some(&twice), ..SAME };
    // A repeated finish (LEASE_FINISHED) with a bad argument besides.
    for bad in [&blank, &no_groups, &dup] {
        assert_eq!(h.pool.finish(&l, ok(), Some(bad)).unwrap_err().code(), "INVALID_ARGUMENT", "{bad:?}");
    }
    let bad_latency = Outcome::Success { latency_ms: Some(-1.0) };
    assert_eq!(h.pool.finish(&l, bad_latency, None).unwrap_err().code(), "INVALID_ARGUMENT");
    let nan = Outcome::Failure { failure: FailureType::Slow, latency_ms: Some(f64::NAN) };
    assert_eq!(h.pool.finish(&l, nan, None).unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(h.pool.pool.finish(f64::NAN, &l, ok(), None).unwrap_err().code(), "INVALID_ARGUMENT");
    // A lease of an unregistered resource (dropped, not UNKNOWN_RESOURCE) with a bad value or
    // context, or a token never issued.
    let bad_value = Lease { value: " ".into(), ..l.clone() };
    assert_eq!(h.pool.finish(&bad_value, ok(), None).unwrap_err().code(), "INVALID_ARGUMENT");
    let bad_context = Lease { context: "".into(), ..l.clone() };
    assert_eq!(h.pool.finish(&bad_context, ok(), None).unwrap_err().code(), "INVALID_ARGUMENT");
    let gone = Lease { value: "gone".into(), token: 99, ..l.clone() };
    assert_eq!(h.pool.finish(&gone, ok(), None).unwrap_err().code(), "INVALID_ARGUMENT");
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev), "the failed calls changed nothing");
    // A bad argument comes before the limit: a new cell (q in a) past maxCells.
    let q = h.pool.acquire_resource(Kind::Proxy, "q", "a").unwrap().unwrap();
    h.events();
    let (snap2, rev2) = (h.snapshot(), h.revision());
    assert_eq!(h.pool.finish(&q, ok(), Some(&blank)).unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(h.pool.finish(&q, ok(), None).unwrap_err().code(), "CAPACITY_EXCEEDED");
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap2, rev2));
}

#[test]
fn a_finish_refused_for_max_cells_changes_nothing_and_can_be_retried() {
    let mut h = Harness::with_patch(r#"{"maxCells":1}"#);
    h.reg("p");
    h.ok("p", "x"); // the one cell
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    let e = h.pool.finish(&l, ok(), Some(&SAME)).unwrap_err();
    assert_eq!(e.code(), "CAPACITY_EXCEEDED", "{e}");
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
    assert_eq!(h.view("p").leases, vec![l.clone()], "still held");
    // The token was not spent: with room, the same finish goes through.
    let patch = repute::ConfigPatch::from_json(r#"{"maxCells":2}"#).unwrap();
    h.pool.set_config(&patch).unwrap();
    h.events();
    let next = finish(&mut h, &l, ok(), Some(&SAME)).expect("p again");
    assert_eq!(next.token, 2);
    assert_eq!(h.event_types(), ["LEASE_RELEASED", "RESOURCE_LEASED"]);
    assert_eq!(h.cell("p", "a").consecutive_successes, 1);
}

#[test]
fn a_lease_finished_already_is_not_refused_for_max_cells() {
    // The repeat reports nothing, so it creates no cell: LEASE_FINISHED, not CAPACITY_EXCEEDED.
    let (mut h, l) = leased_p(r#"{"maxCells":1}"#);
    h.pool.deregister(Kind::Proxy, "p").unwrap();
    finish(&mut h, &l, ok(), None); // dropped: p went
    h.reg("p");
    h.ok("q", "x"); // the one cell
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
}

#[test]
fn a_bad_draw_for_next_leaves_the_report_and_release_applied() {
    // Documented in steps.rs: the draw is known to be needed only once the release is applied.
    let (mut h, l) = leased_p("{}");
    h.draws.push(1.0); // outside [0, 1): p and q are both candidates after the release
    let e = h.pool.finish(&l, ok(), Some(&SAME)).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert_eq!(h.event_types(), ["LEASE_RELEASED"]);
    assert_eq!(h.cell("p", "a").consecutive_successes, 1);
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED", "reported once");
    assert_eq!(h.pool.stats().unwrap().fencing_high_water, 1, "no lease granted");
}

// ---------------------------------------------------------------------------------------------
// finish with capacity and trials, by id, across a restore

#[test]
fn finishing_a_half_open_trial_lets_the_next_trial_or_lease_in() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1,"cooldownBaseMs":{"TIMEOUT":1000}}"#);
    h.pool.register_with(Kind::Proxy, "p", Registration { group: None, max_leases: Some(3) }).unwrap();
    h.fail("p", "a", FailureType::Timeout);
    h.at(1_000.0);
    let trial = h.acquire("a").expect("the trial");
    assert_eq!(h.acquire("a"), None, "one trial at a time");
    // A failed trial cools again, at the next step: 1 s × 2^(2 − 1) = 2 s.
    assert_eq!(finish(&mut h, &trial, timeout(), Some(&SAME)), None);
    assert_eq!(h.cell("p", "a").cooldown_until, Some(T + 3_000));
    h.at(3_000.0);
    let trial = h.acquire("a").expect("the next trial");
    // A successful trial starts probation: RECOVERING, a candidate for every lease there.
    let next = finish(&mut h, &trial, ok(), Some(&SAME)).expect("p, recovering");
    assert_eq!(h.cell("p", "a").state, ViewState::Recovering);
    assert!(h.acquire("a").is_some(), "a second lease in a");
    assert!(h.acquire("a").is_some(), "a third");
    assert_eq!(h.acquire("a"), None, "3 of 3");
    assert_eq!(h.view("p").leases.len(), 3);
    let _ = next;
}

#[test]
fn finish_by_the_grant_is_finish() {
    let (mut h, l) = leased_p(r#"{"coolAfter":1}"#);
    let id = l.id.expect("granted");
    let next = h.pool.finish_lease(id, l.token, timeout(), Some(&SAME)).unwrap().expect("held").expect("q");
    assert_eq!(&*next.value, "q");
    assert_eq!(h.event_types(), ["RESOURCE_COOLED", "LEASE_RELEASED", "RESOURCE_LEASED"]);
    assert_eq!(h.pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
}

#[test]
fn a_lease_from_before_a_restore_reports_and_releases_nothing() {
    let (mut h, l) = leased_p("{}");
    let snap = h.snapshot();
    let mut pool =
        ClockedPool::restore(&snap, None, ManualClock::new(T0 + 1_000.0), repute::Randomness::host(|| 0.0))
            .unwrap();
    assert_eq!(pool.finish(&l, timeout(), None).unwrap(), None);
    let views = pool.resource(Kind::Proxy, "p").unwrap().view;
    assert_eq!(views.cells[0].consecutive_failures, 1, "the outcome is real");
    let ev = pool.drain_events().unwrap();
    assert!(ev.is_empty(), "nothing to release: {ev:?}");
    assert_eq!(pool.finish(&l, ok(), None).unwrap_err().code(), "LEASE_FINISHED");
}
