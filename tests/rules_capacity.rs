//! Capacity rules of SPEC §3 "Capacity, waiting and finishing a step (snapshot version 3)", one
//! test per sentence the engine owns: `maxLeases` (1–1,024, default 1 = the exclusive lease),
//! set at registration and changed by a re-registration that differs (`RESOURCE_RECONFIGURED`,
//! one revision step; the same value or none changes nothing); a resource a candidate only
//! while it holds fewer live leases than `maxLeases`, every other rule unchanged; a token per
//! lease, `renew` and `release` acting on one; lowering `maxLeases` below the live leases
//! ending none and granting none until fewer remain; a half-open trial one lease at a time in
//! its context (other contexts still lease the resource up to capacity), for `acquire`,
//! grouped acquires and `acquireResource` (which also leases a probe-due cell one at a time);
//! selection weights that ignore capacity; `ResourceView.maxLeases` / `.leases` (oldest first)
//! / `.lease` (the oldest) and `stats().leased`; expiry, deregistration and blocks of a resource
//! holding several leases; `nextChangeAt` answering for capacity and for the one-trial rule;
//! snapshots carrying `maxLeases` only when it is not 1.
//!
//! Of waiting, only what the engine does for it: `try_acquire` grants as `acquire` does, and
//! when it grants nothing it emits no `ACQUISITION_REJECTED` and changes nothing (no revision
//! step).

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{BlockSpec, EventType, FailureType, Filter, Kind, Lease, Registration, ViewState};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

/// `coolAfter` 1 and a 1 s TIMEOUT cooldown: one TIMEOUT cools a cell for 1 s, then it is due
/// for recovery (a half-open trial: every cause is half-open by default).
const QUICK_COOL: &str = r#"{"coolAfter":1,"cooldownBaseMs":{"TIMEOUT":1000}}"#;

fn max_leases(max: u32) -> Registration<'static> {
    Registration { group: None, max_leases: Some(max) }
}

fn tokens(ls: &[Lease]) -> Vec<u64> {
    ls.iter().map(|l| l.token).collect()
}

/// The live leases' tokens of `PROXY/value`, oldest first, as the dashboard shows them.
fn live(h: &mut Harness, value: &str) -> Vec<u64> {
    tokens(&h.view(value).leases)
}

// ---------------------------------------------------------------------------------------------
// maxLeases: range, default, registration, reconfiguration

#[test]
fn max_leases_defaults_to_1_which_is_the_exclusive_lease() {
    let mut h = Harness::new();
    h.reg("p");
    assert_eq!(h.view("p").max_leases, 1);
    let l = h.acquire("a").expect("free");
    h.events();
    for ctx in ["a", "b"] {
        assert_eq!(h.acquire(ctx), None, "{ctx}: the one lease is taken");
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", ctx).unwrap(), None, "{ctx}");
    }
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED", "ACQUISITION_REJECTED"]);
    assert!(h.pool.release(&l).unwrap());
    assert!(h.acquire("b").is_some(), "free again");
    assert!(!h.snapshot().contains("maxLeases"), "1 is not written");
}

#[test]
fn max_leases_is_an_integer_from_1_to_1024() {
    let mut h = Harness::new();
    assert!(h.reg_max("one", 1));
    assert!(h.reg_max("top", 1024));
    assert_eq!(h.view("one").max_leases, 1);
    assert_eq!(h.view("top").max_leases, 1024);
    // 1,024 leases at once on one resource, the 1,025th refused.
    h.pool.block(Kind::Proxy, "one", BlockSpec::Permanent).unwrap();
    for i in 0..1024 {
        let l = h.pool.acquire_resource(Kind::Proxy, "top", &format!("c{}", i % 7)).unwrap();
        assert!(l.is_some(), "lease {i}");
    }
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "top", "c0").unwrap(), None);
    assert_eq!(h.acquire("c0"), None);
    assert_eq!(h.pool.stats().unwrap().leased, 1024);
}

#[test]
fn a_max_leases_out_of_range_is_invalid_argument_and_changes_nothing() {
    let mut h = Harness::with_patch(r#"{"maxResources":1}"#);
    h.reg_max("p", 3);
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    for bad in [0, 1025, u32::MAX] {
        for v in ["p", "new"] {
            let e = h.pool.register_with(Kind::Proxy, v, max_leases(bad)).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT", "maxLeases {bad} for {v}");
            assert!(e.to_string().contains("maxLeases"), "{e}");
        }
        // A bad argument is reported before the limit a new resource would pass.
        let both = Registration { group: Some(Some("g")), max_leases: Some(bad) };
        assert_eq!(h.pool.register_with(Kind::Account, "x", both).unwrap_err().code(), "INVALID_ARGUMENT");
    }
    assert_eq!(h.view("p").max_leases, 3);
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
}

#[test]
fn register_sets_max_leases_of_a_new_resource() {
    let mut h = Harness::new();
    let rev = h.revision();
    assert!(h.reg_max("p", 3));
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].ty, EventType::ResourceRegistered, "a new resource is registered, not reconfigured");
    assert_eq!(ev[0].max_leases, None);
    assert_eq!(h.revision(), rev + 1);
    assert_eq!(h.view("p").max_leases, 3);
}

#[test]
fn a_differing_max_leases_reconfigures_a_known_resource_with_one_event_and_one_revision_step() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.events();
    h.at(1_000.0);
    let rev = h.revision();
    assert!(!h.reg_max("p", 5), "register answers true only for a new resource");
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].ty, EventType::ResourceReconfigured);
    assert_eq!(ev[0].ty.as_str(), "RESOURCE_RECONFIGURED");
    assert_eq!(ev[0].resource, Some((Kind::Proxy, "p".into())));
    assert_eq!(ev[0].max_leases, Some(5));
    assert_eq!(ev[0].at, T + 1_000);
    assert_eq!((ev[0].context.clone(), ev[0].group.clone(), ev[0].token), (None, None, None));
    assert_eq!(h.revision(), rev + 1);
    assert_eq!(h.view("p").max_leases, 5);
}

#[test]
fn the_same_max_leases_or_none_changes_nothing() {
    let mut h = Harness::new();
    h.reg_max("p", 5);
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    assert!(!h.reg_max("p", 5));
    assert!(!h.pool.register(Kind::Proxy, "p").unwrap());
    assert!(!h.pool.register_with(Kind::Proxy, "p", Registration::default()).unwrap());
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
    // A group change alone leaves maxLeases as it is.
    assert!(!h.reg_in("p", Some("dc")));
    assert_eq!(h.event_types(), ["RESOURCE_REGROUPED"]);
    assert_eq!(h.view("p").max_leases, 5);
}

#[test]
fn regrouping_and_reconfiguring_at_once_is_two_events_and_one_revision_step() {
    let mut h = Harness::new();
    h.reg_max("p", 2);
    h.events();
    let rev = h.revision();
    let both = Registration { group: Some(Some("dc")), max_leases: Some(4) };
    assert!(!h.pool.register_with(Kind::Proxy, "p", both).unwrap());
    let ev = h.events();
    let types: Vec<_> = ev.iter().map(|e| e.ty.as_str()).collect();
    assert_eq!(types, ["RESOURCE_REGROUPED", "RESOURCE_RECONFIGURED"]);
    assert_eq!(ev[1].max_leases, Some(4));
    assert_eq!(h.revision(), rev + 1);
}

// ---------------------------------------------------------------------------------------------
// A candidate only while it holds fewer than maxLeases

#[test]
fn a_resource_is_a_candidate_only_while_it_holds_fewer_live_leases_than_max_leases() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.events();
    // One candidate each time: no draw.
    let l1 = h.acquire("a").expect("0 of 3");
    let l2 = h.acquire("b").expect("1 of 3");
    let l3 = h.acquire("a").expect("2 of 3, the same context again");
    assert!([&l1, &l2, &l3].iter().all(|l| &*l.value == "p"));
    assert_eq!(tokens(&[l1.clone(), l2, l3]), [1, 2, 3]);
    h.events();
    assert_eq!(h.acquire("c"), None, "3 of 3");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED"], "acquireResource refuses without an event");
    h.at(1_000.0);
    assert!(h.pool.release(&l1).unwrap());
    let l4 = h.acquire("c").expect("2 of 3 again");
    assert_eq!(l4.token, 4);
    // A lease that expires frees its place too.
    assert_eq!(h.acquire("c"), None);
    h.at(30_000.0);
    assert_eq!(live(&mut h, "p"), [4], "leases 2 and 3 expired, 4 (granted at 1 s) is live");
    assert!(h.acquire("d").is_some());
    assert!(h.acquire("d").is_some());
    assert_eq!(h.acquire("d"), None);
}

#[test]
fn every_other_rule_still_applies_to_a_resource_with_room() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1,"minGapMs":5000}"#);
    h.reg_max("p", 3);
    let _held = h.acquire("z").unwrap();
    // Cooling in `a`: not a candidate there, still one elsewhere.
    h.fail("p", "a", FailureType::Timeout);
    // Paced in `b` (reported 0 ms ago, gap 5 s): not a candidate there.
    h.ok("p", "b");
    h.events();
    assert_eq!(h.acquire("a"), None, "cooling in a");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap(), None);
    assert_eq!(h.acquire("b"), None, "paced in b");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "b").unwrap(), None);
    let c = h.acquire("c").expect("room and nothing against it in c");
    // Blocked: never leased, whatever the room.
    h.block_secs("p", 60.0);
    assert_eq!(h.acquire("d"), None);
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "d").unwrap(), None);
    assert!(h.pool.release(&c).unwrap());
    assert_eq!(h.acquire("d"), None, "room again, still blocked");
    h.pool.unblock(Kind::Proxy, "p").unwrap();
    assert!(h.acquire("d").is_some());
}

#[test]
fn raising_max_leases_makes_room_at_once() {
    let mut h = Harness::new();
    h.reg("p");
    h.acquire("a").unwrap();
    assert_eq!(h.acquire("b"), None);
    h.reg_max("p", 2);
    assert!(h.acquire("b").is_some(), "room for a second lease");
    assert_eq!(h.acquire("c"), None);
}

// ---------------------------------------------------------------------------------------------
// One token per lease; renew and release act on one

#[test]
fn each_lease_has_its_own_token_and_renew_and_release_act_on_that_one() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    let l1 = h.acquire("a").unwrap();
    let l2 = h.acquire("b").unwrap();
    let l3 = h.acquire("a").unwrap();
    assert_eq!(tokens(&[l1.clone(), l2.clone(), l3.clone()]), [1, 2, 3]);
    h.events();

    h.at(10_000.0);
    let r2 = h.pool.renew(&l2).unwrap().expect("its holder");
    assert_eq!((r2.token, r2.expires_at), (2, T + 40_000));
    let view = h.view("p");
    let ends: Vec<u64> = view.leases.iter().map(|l| l.expires_at).collect();
    assert_eq!(ends, [T + 30_000, T + 40_000, T + 30_000], "only lease 2 moved");

    assert!(h.pool.release(&l1).unwrap());
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!((ev[0].ty, ev[0].token), (EventType::LeaseReleased, Some(1)));
    assert_eq!(ev[0].context.as_deref(), Some("a"));
    assert_eq!(live(&mut h, "p"), [2, 3]);
    assert!(!h.pool.release(&l1).unwrap(), "released already");
    assert_eq!(h.pool.renew(&l1).unwrap(), None);
    // Another lease's token under the wrong context is nobody's lease.
    let forged = Lease { token: l3.token, ..l2.clone() };
    assert!(!h.pool.release(&forged).unwrap());
    assert_eq!(h.pool.renew(&forged).unwrap(), None);
    assert!(h.events().is_empty());
    assert_eq!(live(&mut h, "p"), [2, 3]);

    // Lease 3 lapses at its own end; renewed lease 2 does not.
    h.at(30_000.0);
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].ty, ev[0].token, ev[0].at), (EventType::LeaseExpired, Some(3), T + 30_000));
    assert_eq!(h.pool.renew(&l3).unwrap(), None, "lapsed");
    assert!(!h.pool.release(&l3).unwrap(), "lapsed");
    assert!(h.pool.release(&l2).unwrap());
    assert_eq!(live(&mut h, "p"), Vec::<u64>::new());
}

#[test]
fn lowering_max_leases_below_the_live_leases_ends_none_and_grants_none_until_fewer_remain() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    let ls: Vec<Lease> = ["a", "b", "c"].iter().map(|c| h.acquire(c).unwrap()).collect();
    h.events();
    h.reg_max("p", 1);
    assert_eq!(h.event_types(), ["RESOURCE_RECONFIGURED"], "no lease ends");
    assert_eq!(live(&mut h, "p"), [1, 2, 3]);
    assert_eq!(h.pool.stats().unwrap().leased, 3);
    // The leases still work for their holders.
    h.at(1_000.0);
    assert!(h.pool.renew(&ls[2]).unwrap().is_some());
    h.events();
    assert_eq!(h.acquire("d"), None, "3 held, max 1");
    assert!(h.pool.release(&ls[0]).unwrap());
    assert_eq!(h.acquire("d"), None, "2 held, max 1");
    assert!(h.pool.release(&ls[1]).unwrap());
    assert_eq!(h.acquire("d"), None, "1 held, max 1");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "d").unwrap(), None);
    assert!(h.pool.release(&ls[2]).unwrap());
    let l = h.acquire("d").expect("0 held, max 1");
    assert_eq!(l.token, 4);
    assert_eq!(h.acquire("e"), None);
}

// ---------------------------------------------------------------------------------------------
// A half-open trial: one lease at a time in its context

/// `PROXY/p` with `maxLeases` 3, due for recovery in `a` from T + 1 s (cooled there by one
/// TIMEOUT at T), the clock at T + 1 s, events drained.
fn trial_due() -> Harness {
    let mut h = Harness::with_patch(QUICK_COOL);
    h.reg_max("p", 3);
    h.fail("p", "a", FailureType::Timeout);
    assert_eq!(h.cell("p", "a").cooldown_until, Some(T + 1_000));
    h.at(1_000.0);
    h.events();
    h
}

#[test]
fn a_half_open_trial_is_one_lease_at_a_time_in_its_context_while_other_contexts_fill_the_rest() {
    let mut h = trial_due();
    let trial = h.acquire("a").expect("the half-open trial");
    h.events();
    assert_eq!(h.acquire("a"), None, "one trial at a time");
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED"]);
    // The resource still serves other contexts, up to its capacity.
    let b = h.acquire("b").expect("room, and p is healthy in b");
    let _c = h.acquire("c").expect("the third lease");
    assert_eq!(h.acquire("d"), None, "3 of 3");
    assert!(h.pool.release(&b).unwrap());
    assert_eq!(h.acquire("a"), None, "room again, but the trial is still held in a");
    assert!(h.acquire("b").is_some());
    // The trial released without a report: the cell is still due, and a new trial may start.
    assert!(h.pool.release(&trial).unwrap());
    let again = h.acquire("a").expect("a new trial");
    assert!(again.token > trial.token);
    assert_eq!(h.cell("p", "a").state, ViewState::Cooling, "still a trial: nothing reported");
}

#[test]
fn a_grouped_acquire_keeps_the_one_trial_rule() {
    let mut h = Harness::with_patch(QUICK_COOL);
    h.pool
        .register_with(Kind::Proxy, "p", Registration { group: Some(Some("dc")), max_leases: Some(3) })
        .unwrap();
    h.fail("p", "a", FailureType::Timeout);
    h.at(1_000.0);
    assert!(h.acquire_in("a", &[Some("dc")]).is_some(), "the trial");
    assert_eq!(h.acquire_in("a", &[Some("dc")]), None);
    assert_eq!(h.acquire_in("a", &[None, Some("dc")]), None);
    assert!(h.acquire_in("b", &[Some("dc")]).is_some(), "another context");
}

#[test]
fn a_trial_that_succeeds_is_no_longer_one_at_a_time() {
    let mut h = trial_due();
    let trial = h.acquire("a").unwrap();
    assert_eq!(h.acquire("a"), None);
    h.ok("p", "a");
    assert_eq!(h.cell("p", "a").state, ViewState::Recovering, "probation: streak 1 of recoverAfter 2");
    let second = h.acquire("a").expect("RECOVERING is a candidate like HEALTHY, whatever is held");
    assert!(h.acquire("a").is_some(), "and a third");
    assert!(second.token > trial.token);
    assert_eq!(h.acquire("a"), None, "3 of 3");
}

#[test]
fn leases_held_in_the_context_before_the_cooldown_ended_hold_off_the_trial() {
    let mut h = Harness::with_patch(QUICK_COOL);
    h.reg_max("p", 3);
    let a1 = h.acquire("a").unwrap();
    let a2 = h.acquire("a").unwrap();
    // One of the two holders reports a TIMEOUT: p cools in a for 1 s, both leases stay held.
    h.fail("p", "a", FailureType::Timeout);
    h.at(1_000.0);
    assert_eq!(h.acquire("a"), None, "due for recovery, but two leases are held in a");
    assert!(h.acquire("b").is_some(), "the third lease, in b");
    assert!(h.pool.release(&a1).unwrap());
    assert_eq!(h.acquire("a"), None, "one lease still held in a");
    assert!(h.pool.release(&a2).unwrap());
    assert!(h.acquire("a").is_some(), "no lease in a: the trial");
    assert_eq!(h.acquire("a"), None);
}

#[test]
fn acquire_resource_follows_capacity_and_the_one_trial_rule() {
    let mut h = trial_due();
    let by_name = |h: &mut Harness, ctx: &str| h.pool.acquire_resource(Kind::Proxy, "p", ctx).unwrap();
    assert!(by_name(&mut h, "a").is_some(), "the trial, by name");
    h.events();
    assert_eq!(by_name(&mut h, "a"), None, "one trial at a time");
    assert_eq!(h.acquire("a"), None, "nor by selection");
    assert!(by_name(&mut h, "b").is_some());
    assert!(by_name(&mut h, "c").is_some());
    assert_eq!(by_name(&mut h, "d"), None, "3 of 3");
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED", "RESOURCE_LEASED", "RESOURCE_LEASED"]);
}

#[test]
fn a_probe_due_cell_is_leased_by_name_one_at_a_time_and_leaves_the_probe_list_meanwhile() {
    // TIMEOUT is not half-open here: p's cell in a is probe-due once its cooldown ends.
    let mut h = Harness::with_patch(
        r#"{"coolAfter":1,"cooldownBaseMs":{"TIMEOUT":1000},"halfOpenCauses":["BLOCKED"]}"#,
    );
    h.reg_max("p", 3);
    h.fail("p", "a", FailureType::Timeout);
    h.at(1_000.0);
    let due = h.pool.due_for_recovery_probe().unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!((&*due[0].value, &*due[0].context), ("p", "a"));
    assert_eq!(h.acquire("a"), None, "probe-only: never picked by selection");
    let other = h.acquire("b").expect("healthy in b");
    assert_eq!(h.pool.due_for_recovery_probe().unwrap().len(), 1, "a lease in b leaves the probe due in a");
    let probe = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().expect("the prober's lease");
    assert!(h.pool.due_for_recovery_probe().unwrap().is_empty(), "being probed");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap(), None, "one probe at a time");
    assert!(h.pool.release(&other).unwrap());
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap(), None, "room, still one probe");
    assert!(h.pool.release(&probe).unwrap());
    assert_eq!(h.pool.due_for_recovery_probe().unwrap().len(), 1, "due again");
    assert!(h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().is_some());
}

// ---------------------------------------------------------------------------------------------
// Weights, views, stats

#[test]
fn selection_weights_ignore_capacity_and_the_leases_held() {
    // p: maxLeases 4 with one lease held (room for 3); q: maxLeases 1, free (room for 1). Both
    // fresh in x (score 0): weights (0 − 0) + 1 = 1 each, total 2, p first in canonical order.
    // u = 0.49: target 0.98, running sum 1 > 0.98 → p. u = 0.5: target 1.0, 1 is not > 1 → q.
    // (Weighting by room, 3 : 1, would pick p for 0.5 too.)
    let mut h = Harness::new();
    h.reg_max("p", 4);
    h.reg("q");
    h.pool.acquire_resource(Kind::Proxy, "p", "elsewhere").unwrap().unwrap();
    for (u, want) in [(0.49, "p"), (0.5, "q"), (0.0, "p"), (0.999, "q")] {
        h.draws.push(u);
        let l = h.acquire("x").unwrap();
        assert_eq!(h.draws.remaining(), 0, "one draw");
        assert_eq!(&*l.value, want, "u = {u}");
        assert!(h.pool.release(&l).unwrap());
    }
}

#[test]
fn views_show_max_leases_and_the_live_leases_oldest_first_with_lease_the_oldest() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.reg("q");
    let v = h.view("p");
    assert_eq!((v.max_leases, v.lease.clone(), v.leases.len()), (3, None, 0));
    let l1 = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    h.at(1_000.0);
    let l2 = h.pool.acquire_resource(Kind::Proxy, "p", "b").unwrap().unwrap();
    h.at(2_000.0);
    let l3 = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    let v = h.view("p");
    assert_eq!(v.leases, vec![l1.clone(), l2.clone(), l3.clone()]);
    assert_eq!(v.lease, Some(l1.clone()), "the oldest");
    let detail = h.pool.resource(Kind::Proxy, "p").unwrap();
    assert_eq!(detail.view.leases, v.leases);
    assert_eq!(detail.view.max_leases, 3);
    // A renewal does not make a lease younger: the order is the grant order.
    h.at(3_000.0);
    let r1 = h.pool.renew(&l1).unwrap().unwrap();
    assert_eq!(h.view("p").leases, vec![r1.clone(), l2.clone(), l3.clone()]);
    assert!(h.pool.release(&r1).unwrap());
    let v = h.view("p");
    assert_eq!((v.lease, v.leases), (Some(l2.clone()), vec![l2, l3.clone()]));
    // q's view: maxLeases 1, nothing held.
    let vq = h.view("q");
    assert_eq!((vq.max_leases, vq.leases.len()), (1, 0));
    // Every lease lapsed: none shown.
    h.at(32_000.0);
    let v = h.view("p");
    assert_eq!((v.lease, v.leases.len()), (None, 0));
    let _ = l3;
}

#[test]
fn stats_leased_counts_live_leases() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.reg("q");
    let p1 = h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    h.at(1_000.0);
    h.pool.acquire_resource(Kind::Proxy, "p", "b").unwrap().unwrap();
    h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().unwrap();
    h.pool.acquire_resource(Kind::Proxy, "q", "a").unwrap().unwrap();
    let s = h.pool.stats().unwrap();
    assert_eq!(s.leased, 4, "three on p, one on q");
    assert_eq!(s.available, 0, "p full, q full");
    assert!(h.pool.release(&p1).unwrap());
    let s = h.pool.stats().unwrap();
    assert_eq!((s.leased, s.available), (3, 1));
    h.at(31_000.0);
    assert_eq!(h.pool.stats().unwrap().leased, 0);
}

// ---------------------------------------------------------------------------------------------
// Expiry, deregistration and blocks with several leases

#[test]
fn the_expiry_of_one_of_several_leases_emits_its_own_lease_expired() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.acquire("a").unwrap();
    h.at(1_000.0);
    h.acquire("b").unwrap();
    h.at(2_000.0);
    let l3 = h.acquire("a").unwrap();
    h.events();
    h.at(31_500.0);
    let ev = h.events();
    let got: Vec<_> = ev.iter().map(|e| (e.ty, e.token, e.at)).collect();
    assert_eq!(
        got,
        [(EventType::LeaseExpired, Some(1), T + 30_000), (EventType::LeaseExpired, Some(2), T + 31_000)]
    );
    assert!(ev.iter().all(|e| e.resource == Some((Kind::Proxy, "p".into()))));
    assert_eq!(live(&mut h, "p"), [3]);
    assert!(h.pool.renew(&l3).unwrap().is_some(), "the third is untouched");
}

#[test]
fn deregistering_ends_every_lease_with_no_lease_events() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    let ls: Vec<Lease> = ["a", "b", "a"].iter().map(|c| h.acquire(c).unwrap()).collect();
    h.events();
    assert!(h.pool.deregister(Kind::Proxy, "p").unwrap());
    assert_eq!(h.event_types(), ["RESOURCE_DEREGISTERED"]);
    assert_eq!(h.pool.stats().unwrap().leased, 0);
    h.at(30_000.0);
    assert!(h.events().is_empty(), "a removed lease's end passes silently");
    for l in &ls {
        assert!(!h.pool.release(l).unwrap());
    }
    // Registered again: a new resource, with the default capacity.
    h.reg("p");
    assert_eq!(h.view("p").max_leases, 1);
}

#[test]
fn a_block_refuses_renewals_of_every_lease_and_grants_none_while_releases_still_work() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    let l1 = h.acquire("a").unwrap();
    let l2 = h.acquire("b").unwrap();
    h.block_secs("p", 60.0);
    h.events();
    assert_eq!(h.acquire("c"), None, "room, but blocked");
    assert_eq!(h.pool.renew(&l1).unwrap(), None);
    assert_eq!(h.pool.renew(&l2).unwrap(), None);
    assert!(h.pool.release(&l1).unwrap());
    h.at(30_000.0);
    let ev = h.events();
    let got: Vec<_> = ev.iter().map(|e| (e.ty.as_str(), e.token)).collect();
    assert_eq!(
        got,
        [("ACQUISITION_REJECTED", None), ("LEASE_RELEASED", Some(1)), ("LEASE_EXPIRED", Some(2))]
    );
    assert_eq!(h.acquire("c"), None, "no lease, still blocked");
    h.at(60_000.0);
    assert!(h.acquire("c").is_some(), "the block ended");
}

#[test]
fn a_grouped_acquire_counts_capacity() {
    let mut h = Harness::new();
    h.pool
        .register_with(Kind::Proxy, "d1", Registration { group: Some(Some("dc")), max_leases: Some(2) })
        .unwrap();
    h.reg_in("r1", Some("res"));
    let tiers = [Some("dc"), Some("res")];
    let a = h.acquire_in("x", &tiers).unwrap();
    let b = h.acquire_in("y", &tiers).unwrap();
    assert_eq!((&*a.value, &*b.value), ("d1", "d1"), "dc has room for two");
    let c = h.acquire_in("x", &tiers).unwrap();
    assert_eq!(&*c.value, "r1", "dc is full: the next tier");
    h.events();
    assert_eq!(h.acquire_in("x", &tiers), None);
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED"]);
    assert!(h.pool.release(&a).unwrap());
    assert_eq!(&*h.acquire_in("z", &tiers).unwrap().value, "d1");
}

// ---------------------------------------------------------------------------------------------
// nextChangeAt

#[test]
fn next_change_at_answers_when_a_full_resource_has_room_again() {
    // p: leases granted at T, T + 5 s, T + 10 s end at T + 30 s, 35 s, 40 s.
    let mut h = Harness::new();
    h.reg_max("p", 3);
    for (at, ctx) in [(0.0, "a"), (5_000.0, "b"), (10_000.0, "c")] {
        h.at(at);
        h.acquire(ctx).unwrap();
    }
    h.at(11_000.0);
    assert_eq!(h.pool.next_change_at("x").unwrap(), Some(T + 30_000), "3 of 3: the first end");
    assert_eq!(h.pool.next_change_at_in("x", &[None]).unwrap(), Some(T + 30_000));
    h.reg_max("p", 2);
    assert_eq!(h.pool.next_change_at("x").unwrap(), Some(T + 35_000), "3 held, max 2: two must end");
    h.reg_max("p", 1);
    assert_eq!(h.pool.next_change_at("x").unwrap(), Some(T + 40_000), "3 held, max 1: all three");
    assert_eq!(h.pool.next_change_at_in("x", &[None]).unwrap(), Some(T + 40_000));
    // The answers hold: nothing before, a lease at the instant.
    h.at(39_999.0);
    assert_eq!(h.acquire("x"), None);
    h.at(40_000.0);
    assert!(h.acquire("x").is_some());
    h.reg_max("p", 3);
    h.at(40_001.0);
    assert_eq!(h.pool.next_change_at("x").unwrap(), Some(T + 40_001), "room: a candidate now");
}

#[test]
fn next_change_at_answers_for_the_one_trial_rule() {
    let mut h = trial_due(); // T + 1 s
    let trial = h.acquire("a").unwrap(); // ends T + 31 s
    h.at(2_000.0);
    h.acquire("b").unwrap(); // ends T + 32 s
    assert_eq!(h.pool.next_change_at("b").unwrap(), Some(T + 2_000), "room: a candidate in b now");
    assert_eq!(h.pool.next_change_at("a").unwrap(), Some(T + 31_000), "room, but the trial is held");
    assert_eq!(h.pool.next_change_at_in("a", &[None]).unwrap(), Some(T + 31_000));
    h.at(3_000.0);
    h.acquire("c").unwrap(); // ends T + 33 s: full
    h.at(5_000.0);
    h.pool.renew(&trial).unwrap().unwrap(); // the trial now ends T + 35 s
    // In b: room when the first lease ends (b's own, at 32 s). In a: room then, but the trial
    // is held until 35 s.
    assert_eq!(h.pool.next_change_at("b").unwrap(), Some(T + 32_000));
    assert_eq!(h.pool.next_change_at("a").unwrap(), Some(T + 35_000));
    assert_eq!(h.pool.next_change_at_in("a", &[None]).unwrap(), Some(T + 35_000));
    h.at(34_999.0);
    assert!(h.acquire("b").is_some(), "room since 32 s");
    h.at(33_000.0); // the clock never goes back: still 34 999
    assert_eq!(h.acquire("a"), None, "the trial is still held");
    h.at(35_000.0);
    assert!(h.acquire("a").is_some(), "the trial lapsed: a new one");
}

// ---------------------------------------------------------------------------------------------
// try_acquire: what a waiting host retries

#[test]
fn try_acquire_grants_as_acquire_does() {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.events();
    let rev = h.revision();
    h.draws.push(0.5); // two fresh candidates of weight 1: target 1.0 → q
    let l = h.pool.try_acquire("a", None).unwrap().expect("a candidate");
    assert_eq!(h.draws.remaining(), 0, "one draw");
    assert_eq!((&*l.value, l.token, &*l.context), ("q", 1, "a"));
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!((ev[0].ty, ev[0].token), (EventType::ResourceLeased, Some(1)));
    assert_eq!(h.revision(), rev + 1);
    let g = h.pool.try_acquire("a", Some(&[Some("none"), None])).unwrap().expect("p, in the null group");
    assert_eq!(&*g.value, "p");
    assert_eq!(h.pool.try_acquire("b", None).unwrap(), None, "both leased");
}

#[test]
fn try_acquire_that_grants_nothing_emits_no_rejection_and_changes_nothing() {
    let mut h = Harness::new();
    h.reg("p");
    h.acquire("a").unwrap();
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    assert_eq!(h.pool.try_acquire("a", None).unwrap(), None);
    assert_eq!(h.pool.try_acquire("b", Some(&[None])).unwrap(), None);
    assert_eq!(h.pool.try_acquire("c", Some(&[Some("nobody")])).unwrap(), None);
    assert!(h.events().is_empty(), "no ACQUISITION_REJECTED");
    assert_eq!((h.snapshot(), h.revision()), (snap, rev), "no revision step");
    // The ordinary acquire does reject.
    assert_eq!(h.acquire("a"), None);
    assert_eq!(h.event_types(), ["ACQUISITION_REJECTED"]);
}

#[test]
fn try_acquire_applies_time_passing_like_any_call() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    h.events();
    let rev = h.revision();
    h.at(10_000.0);
    let l = h.pool.try_acquire("a", None).unwrap().expect("the block ended at this reading");
    assert_eq!(h.event_types(), ["BLOCK_EXPIRED", "RESOURCE_LEASED"]);
    assert_eq!(h.revision(), rev + 1);
    // Nothing granted (blocked), but the lease ends at the reading: its event and the
    // revision step of time passing, no rejection.
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    h.events();
    let rev = h.revision();
    h.at(10_000.0 + 30_000.0);
    assert_eq!(h.pool.try_acquire("a", None).unwrap(), None);
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].ty, ev[0].token), (EventType::LeaseExpired, Some(l.token)));
    assert_eq!(h.revision(), rev + 1);
}

#[test]
fn try_acquire_checks_its_arguments_and_a_bad_draw_changes_nothing() {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.events();
    let (snap, rev) = (h.snapshot(), h.revision());
    assert_eq!(h.pool.try_acquire(" ", None).unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(h.pool.try_acquire("a", Some(&[])).unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(h.pool.try_acquire("a", Some(&[None, None])).unwrap_err().code(), "INVALID_ARGUMENT");
    h.draws.push(1.0); // outside [0, 1)
    assert_eq!(h.pool.try_acquire("a", None).unwrap_err().code(), "INVALID_ARGUMENT");
    assert!(h.events().is_empty());
    assert_eq!((h.snapshot(), h.revision()), (snap, rev));
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn a_snapshot_carries_max_leases_only_when_it_is_not_1_and_a_restore_keeps_it_without_leases() {
    let mut h = Harness::new();
    h.reg_max("p", 3);
    h.reg("q");
    h.reg_max("r", 4);
    h.reg_max("r", 1); // back to 1: written as nothing
    h.pool.acquire_resource(Kind::Proxy, "p", "a").unwrap().unwrap();
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "b").unwrap().unwrap();
    let snap = h.snapshot();
    assert!(snap.contains(r#""version":3,"#), "{snap}");
    assert!(
        snap.contains(
            r#""registered":[{"kind":"PROXY","value":"p","maxLeases":3},{"kind":"PROXY","value":"q"},{"kind":"PROXY","value":"r"}]"#
        ),
        "{snap}"
    );
    let clock = ManualClock::new(T0);
    let mut pool = ClockedPool::restore(&snap, None, clock, repute::Randomness::host(|| 0.0)).unwrap();
    let views = pool.resources(&Filter::default()).unwrap();
    let caps: Vec<(String, u32, usize)> =
        views.iter().map(|v| (v.value.to_string(), v.max_leases, v.leases.len())).collect();
    assert_eq!(caps, [("p".into(), 3, 0), ("q".into(), 1, 0), ("r".into(), 1, 0)]);
    assert!(!pool.release(&l).unwrap(), "leases are not restored");
    for _ in 0..3 {
        assert!(pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().is_some());
    }
    assert_eq!(pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    assert_eq!(pool.snapshot().unwrap().matches("maxLeases").count(), 1);
}
