//! Group rules of SPEC §3 "Groups, pacing and the cooling cap" (the Groups paragraph), one
//! test per sentence: what a group name is (non-blank, at most 64 UTF-8 bytes, compared byte
//! for byte), `register(kind, value, { group })` setting, moving (revision + 1 and
//! `RESOURCE_REGROUPED` only when the group differs) and leaving alone (key absent) a group,
//! `RESOURCE_REGISTERED` carrying it, `acquire(context, { groups })` (1 to 16 distinct entries,
//! tried in order, `null` naming the ungrouped, unknown names without candidates, escalation
//! past groups with no candidate and past groups whose candidates are all held, the pick among
//! held ones when no group is usable, one draw only when the chosen group has two or more
//! candidates, one `ACQUISITION_REJECTED` when nothing is found, a bad draw changing nothing),
//! the group carried by leases (at grant and renewal), views and the probe list,
//! `resources({ group })`, `nextChangeAt(context, { groups })`, and snapshots carrying groups.
//!
//! Every expected pick is computed by hand in the comments: weights `(score − min) + 1` over
//! the chosen group's candidates in canonical order (PROXY, ACCOUNT, SESSION; then value
//! bytes), pick the first whose running sum exceeds `u × total`.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{EventType, FailureType, Filter, Kind, Lease, Outcome, ViewState};

use FailureType::{Blocked, Timeout};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

/// `dc`: d1, d2; `res`: r1, r2; ungrouped: u1 — all PROXY, events drained.
fn tiers(patch: &str) -> Harness {
    let mut h = Harness::with_patch(patch);
    h.reg_in("d1", Some("dc"));
    h.reg_in("d2", Some("dc"));
    h.reg_in("r1", Some("res"));
    h.reg_in("r2", Some("res"));
    h.reg_in("u1", None);
    h.events();
    h
}

/// Grouped acquire with one scripted draw that must be used; releases; the value picked.
fn pick_in(h: &mut Harness, ctx: &str, groups: &[Option<&str>], u: f64) -> Lease {
    assert_eq!(h.draws.remaining(), 0);
    h.draws.push(u);
    let l = h.acquire_in(ctx, groups).expect("a candidate");
    assert_eq!(h.draws.remaining(), 0, "exactly one draw");
    assert!(h.pool.release(&l).unwrap());
    l
}

/// Grouped acquire that must not draw (one candidate); releases.
fn only_in(h: &mut Harness, ctx: &str, groups: &[Option<&str>]) -> Lease {
    assert_eq!(h.draws.remaining(), 0);
    let l = h.acquire_in(ctx, groups).expect("one candidate");
    assert!(h.pool.release(&l).unwrap());
    l
}

fn value(l: &Lease) -> &str {
    &l.value
}

// ---------------------------------------------------------------------------------------------
// What a group is

#[test]
fn a_group_is_a_non_blank_name_of_at_most_64_utf8_bytes() {
    let mut h = Harness::new();
    let g64 = "g".repeat(64);
    let e32 = "é".repeat(32); // 64 bytes
    assert!(h.reg_in("a", Some(&g64)));
    assert!(h.reg_in("b", Some(&e32)));
    assert!(h.reg_in("c", Some("dc ")), "a name with a space in it is not blank");
    h.events();
    let snap = h.snapshot();
    let g65 = "g".repeat(65);
    let e32x = format!("{e32}x");
    for bad in ["", " ", "\t\n", "\u{3000}", g65.as_str(), e32x.as_str()] {
        for v in ["new", "a"] {
            let err = h.pool.register_in(Kind::Proxy, v, Some(Some(bad))).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT", "group {bad:?} for {v}");
        }
    }
    assert_eq!(h.events(), vec![], "a failed call changes nothing");
    assert_eq!(h.snapshot(), snap);
    assert_eq!(h.view("a").group.as_deref(), Some(g64.as_str()));
    assert_eq!(h.view("b").group.as_deref(), Some(e32.as_str()));
}

#[test]
fn group_names_are_compared_byte_for_byte() {
    let mut h = Harness::new();
    h.reg_in("a", Some("dc"));
    h.reg_in("b", Some("DC"));
    h.reg_in("c", Some("é")); // NFC
    h.reg_in("d", Some("e\u{301}")); // NFD: looks the same, other bytes
    h.reg_in("e", Some("dc "));
    for (g, v) in [("dc", "a"), ("DC", "b"), ("é", "c"), ("e\u{301}", "d"), ("dc ", "e")] {
        let l = only_in(&mut h, "x", &[Some(g)]);
        assert_eq!((value(&l), l.group.as_deref()), (v, Some(g)));
    }
    h.events();
    assert_eq!(h.acquire_in("x", &[Some("Dc")]), None);
}

// ---------------------------------------------------------------------------------------------
// register(kind, value, { group })

#[test]
fn register_sets_the_group_and_resource_registered_carries_it() {
    let mut h = Harness::new();
    assert!(h.pool.register_in(Kind::Proxy, "a", Some(Some("dc"))).unwrap());
    assert!(h.pool.register_in(Kind::Proxy, "b", Some(None)).unwrap());
    assert!(h.pool.register_in(Kind::Proxy, "c", None).unwrap());
    assert!(h.pool.register(Kind::Account, "d").unwrap());
    let ev = h.events();
    assert!(ev.iter().all(|e| e.ty == EventType::ResourceRegistered && e.at == T));
    let groups: Vec<Option<Option<&str>>> =
        ev.iter().map(|e| e.group.as_ref().map(|g| g.as_deref())).collect();
    assert_eq!(groups, vec![Some(Some("dc")), Some(None), Some(None), Some(None)], "null when none");
    let views = h.pool.resources(&Filter::default()).unwrap();
    let got: Vec<(&str, Option<&str>)> = views.iter().map(|r| (&*r.value, r.group.as_deref())).collect();
    assert_eq!(got, vec![("a", Some("dc")), ("b", None), ("c", None), ("d", None)]);
}

#[test]
fn a_different_group_moves_a_known_resource_with_one_revision_step_and_one_event() {
    let mut h = Harness::new();
    h.reg_in("a", Some("dc"));
    h.events();
    for (to, step) in [(Some("res"), 1), (None, 2), (Some("dc"), 3)] {
        let rev = h.revision();
        h.at(step as f64 * 1000.0);
        assert!(!h.reg_in("a", to), "register returns true only for a new resource");
        let ev = h.events();
        assert_eq!(ev.len(), 1, "{ev:?}");
        let e = &ev[0];
        assert_eq!(e.ty, EventType::ResourceRegrouped);
        assert_eq!(e.ty.as_str(), "RESOURCE_REGROUPED");
        assert_eq!(e.at, T + step * 1000);
        assert_eq!(e.resource.as_ref().map(|(k, v)| (*k, &**v)), Some((Kind::Proxy, "a")));
        assert_eq!(e.group.as_ref().map(|g| g.as_deref()), Some(to), "the new group (null when none)");
        assert_eq!((e.context.as_deref(), e.cause, e.until, e.token), (None, None, None, None));
        assert_eq!(h.revision(), rev + 1);
        assert_eq!(h.view("a").group.as_deref(), to);
    }
}

#[test]
fn the_same_group_or_no_group_key_changes_nothing() {
    let mut h = Harness::new();
    h.reg_in("a", Some("dc"));
    h.reg_in("b", None);
    h.events();
    let snap = h.snapshot();
    let rev = h.revision();
    assert!(!h.reg_in("a", Some("dc")));
    assert!(!h.pool.register_in(Kind::Proxy, "a", None).unwrap(), "key absent");
    assert!(!h.pool.register(Kind::Proxy, "a").unwrap());
    assert!(!h.reg_in("b", None), "null to null");
    assert!(!h.pool.register(Kind::Proxy, "b").unwrap());
    assert_eq!(h.events(), vec![]);
    assert_eq!(h.revision(), rev);
    assert_eq!(h.snapshot(), snap);
    assert_eq!(h.view("a").group.as_deref(), Some("dc"), "leaving the key out never changes it");
}

// ---------------------------------------------------------------------------------------------
// acquire(context, { groups }): the list

#[test]
fn a_groups_list_holds_1_to_16_distinct_names_or_null() {
    let mut h = Harness::new();
    h.reg_in("a", Some("dc"));
    h.events();
    let snap = h.snapshot();
    let names: Vec<String> = (0..17).map(|i| format!("g{i}")).collect();
    let n17: Vec<Option<&str>> = names.iter().map(|s| Some(s.as_str())).collect();
    let g65 = "g".repeat(65);
    let bad: Vec<Vec<Option<&str>>> = vec![
        vec![],
        n17.clone(),
        vec![Some("dc"), Some("dc")],
        vec![None, Some("dc"), None],
        vec![Some("")],
        vec![Some(" \t")],
        vec![Some(&g65)],
        vec![Some("dc"), Some(" ")],
    ];
    for groups in &bad {
        let err = h.pool.acquire_in("c", groups).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "acquire {groups:?}");
        let err = h.pool.next_change_at_in("c", groups).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "nextChangeAt {groups:?}");
    }
    assert_eq!(h.events(), vec![]);
    assert_eq!(h.snapshot(), snap, "failed calls change nothing");
    // 16 entries: 14 unknown names, null (nobody) and dc (a).
    let mut n16: Vec<Option<&str>> = n17[..14].to_vec();
    n16.extend([None, Some("dc")]);
    assert_eq!(value(&only_in(&mut h, "c", &n16)), "a");
}

#[test]
fn groups_are_tried_in_order() {
    let mut h = tiers("{}");
    // dc first: d1, d2 fresh (weights 1, 1; total 2). u 0 → target 0 → d1.
    let l = pick_in(&mut h, "c", &[Some("dc"), Some("res")], 0.0);
    assert_eq!((value(&l), l.group.as_deref()), ("d1", Some("dc")));
    // u 0.5 → target 1 → d1's running sum 1 does not exceed it → d2.
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("dc"), Some("res")], 0.5)), "d2");
    // res first: r1, r2; u 0.5 → r2.
    let l = pick_in(&mut h, "c", &[Some("res"), Some("dc")], 0.5);
    assert_eq!((value(&l), l.group.as_deref()), ("r2", Some("res")));
    // null first: u1 alone, no draw.
    let l = only_in(&mut h, "c", &[None, Some("dc")]);
    assert_eq!((value(&l), l.group.as_deref()), ("u1", None));
}

#[test]
fn a_group_without_a_candidate_here_is_passed_over_in_this_context_only() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    h.fail("d1", "c", Timeout); // cooling in c until +60 s
    h.block_secs("d2", 3600.0);
    h.events();
    // dc has no candidate in c → res: r1, r2, one draw; u 0 → r1.
    let l1 = {
        h.draws.push(0.0);
        h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap()
    };
    assert_eq!((value(&l1), l1.group.as_deref()), ("r1", Some("res")));
    // r1 leased: res has r2 alone (no draw).
    let l2 = h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap();
    assert_eq!(value(&l2), "r2");
    // Nothing left in dc or res: the ungrouped, listed third.
    let l3 = h.acquire_in("c", &[Some("dc"), Some("res"), None]).unwrap();
    assert_eq!(value(&l3), "u1");
    // In another context d1 is fresh: dc is usable there (d2 is blocked everywhere).
    let l4 = h.acquire_in("e", &[Some("dc"), Some("res")]).unwrap();
    assert_eq!((value(&l4), l4.group.as_deref()), ("d1", Some("dc")));
}

#[test]
fn acquires_return_to_a_group_as_it_recovers() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    h.fail("d1", "c", Timeout); // 60 s
    h.fail("d2", "c", Timeout);
    let both = [Some("dc"), Some("res")];
    assert_eq!(pick_in(&mut h, "c", &both, 0.0).group.as_deref(), Some("res"));
    h.at(59_999.0);
    assert_eq!(pick_in(&mut h, "c", &both, 0.99).group.as_deref(), Some("res"));
    // At +60 s both cooldowns are over: half-open trials, dc is usable again. Scores -5 each:
    // weights 1, 1; u 0.99 → target 1.98 → d2.
    h.at(60_000.0);
    let l = pick_in(&mut h, "c", &both, 0.99);
    assert_eq!((value(&l), l.group.as_deref()), ("d2", Some("dc")));
    // d2's trial fails again (cools for 120 s); d1 alone is left in dc (no draw).
    h.fail("d2", "c", Timeout);
    assert_eq!(value(&only_in(&mut h, "c", &both)), "d1");
}

/// The cooling cap at 1 % of 4 resources allows max(1, ⌊4 / 100⌋) = 1 running cooldown per
/// context. `dc`: d1, d2, d3; `res`: r1. In c: d1 cools (TIMEOUT, 60 s); d2 (TIMEOUT, -5) and
/// d3 (BLOCKED, -30) are held instead.
fn held_dc() -> Harness {
    let mut h = Harness::with_patch(r#"{"coolAfter":1,"maxCoolingPercent":1}"#);
    for v in ["d1", "d2", "d3"] {
        h.reg_in(v, Some("dc"));
    }
    h.reg_in("r1", Some("res"));
    h.fail("d1", "c", Timeout);
    h.fail("d2", "c", Timeout);
    h.fail("d3", "c", Blocked);
    let types: Vec<_> = h.events().iter().skip(4).map(|e| e.ty).collect();
    assert_eq!(
        types,
        [EventType::ResourceCooled, EventType::CooldownSuppressed, EventType::CooldownSuppressed]
    );
    assert!(h.cell("d2", "c").held && h.cell("d3", "c").held);
    h
}

#[test]
fn a_group_whose_candidates_are_all_held_is_passed_over() {
    let mut h = held_dc();
    // dc's candidates d2, d3 are both held: not usable. res: r1, no draw.
    let l = only_in(&mut h, "c", &[Some("dc"), Some("res")]);
    assert_eq!((value(&l), l.group.as_deref()), ("r1", Some("res")));
    // Elsewhere nothing is held: dc is used.
    assert_eq!(pick_in(&mut h, "e", &[Some("dc"), Some("res")], 0.0).group.as_deref(), Some("dc"));
}

#[test]
fn when_no_listed_group_is_usable_the_pick_is_among_the_first_group_with_any_candidate() {
    let mut h = held_dc();
    let r1 = h.acquire_in("c", &[Some("res")]).unwrap();
    // res has no candidate; dc has only held ones: dc it is, d2 (-5) and d3 (-30): weights
    // 26, 1, total 27.
    for groups in [[Some("dc"), Some("res")], [Some("res"), Some("dc")]] {
        assert_eq!(value(&pick_in(&mut h, "c", &groups, 0.95)), "d2"); // target 25.65
        assert_eq!(value(&pick_in(&mut h, "c", &groups, 0.97)), "d3"); // target 26.19
    }
    // Two groups with held candidates only: the first listed one. Move d3 to "x" (it stays
    // held): dc has d2, x has d3.
    h.reg_in("d3", Some("x"));
    assert!(h.cell("d3", "c").held);
    assert_eq!(value(&only_in(&mut h, "c", &[Some("x"), Some("dc")])), "d3");
    assert_eq!(value(&only_in(&mut h, "c", &[Some("dc"), Some("x")])), "d2");
    assert!(h.pool.release(&r1).unwrap());
    h.pool.check_invariants().unwrap();
}

#[test]
fn held_candidates_stay_candidates_of_an_ungrouped_acquire() {
    let mut h = held_dc();
    // d2 (-5), d3 (-30), r1 (fresh, 0); d1 cooling. Weights 26, 1, 31; running 26, 27, 58.
    let pick = |h: &mut Harness, u: f64| {
        h.draws.push(u);
        let l = h.acquire("c").unwrap();
        assert_eq!(h.draws.remaining(), 0);
        h.pool.release(&l).unwrap();
        l.value.to_string()
    };
    assert_eq!(pick(&mut h, 0.0), "d2");
    assert_eq!(pick(&mut h, 0.45), "d3"); // target 26.1
    assert_eq!(pick(&mut h, 0.47), "r1"); // target 27.26
}

#[test]
fn a_usable_group_picks_among_all_its_candidates_held_ones_included() {
    let mut h = held_dc();
    h.ok("d2", "c"); // d2: 0, no longer held; dc is usable again
    assert!(!h.cell("d2", "c").held);
    // dc: d2 (0), d3 (-30, held): weights 31, 1, total 32.
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("dc"), Some("res")], 0.96)), "d2"); // 30.72
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("dc"), Some("res")], 0.97)), "d3"); // 31.04
}

#[test]
fn null_names_the_ungrouped_and_an_unknown_name_has_no_candidates() {
    let mut h = tiers("{}");
    assert_eq!(value(&only_in(&mut h, "c", &[None])), "u1");
    assert_eq!(value(&only_in(&mut h, "c", &[Some("nope"), None])), "u1");
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("nope"), Some("res")], 0.0)), "r1");
    h.events();
    assert_eq!(h.acquire_in("c", &[Some("nope")]), None);
    let ev = h.events();
    assert_eq!(ev.iter().map(|e| e.ty).collect::<Vec<_>>(), vec![EventType::AcquisitionRejected]);
    // A pool where every resource has a group: null has none.
    let mut g = Harness::new();
    g.reg_in("a", Some("dc"));
    assert_eq!(g.acquire_in("c", &[None]), None);
}

#[test]
fn no_candidate_in_any_listed_group_is_null_and_one_rejection() {
    let mut h = tiers("{}");
    h.block_secs("d1", 60.0);
    h.block_secs("d2", 60.0);
    let l = h.acquire_in("c", &[None]).unwrap(); // u1 leased
    h.events();
    let rev = h.revision();
    h.at(10.0);
    assert_eq!(h.acquire_in("c", &[Some("dc"), Some("nope"), None]), None);
    let ev = h.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    let e = &ev[0];
    assert_eq!((e.ty, e.at, e.context.as_deref()), (EventType::AcquisitionRejected, T + 10, Some("c")));
    assert_eq!(
        (&e.resource, &e.group, e.cause, e.token),
        (&None, &None, None, None),
        "names only the context"
    );
    assert_eq!(h.revision(), rev + 1, "the event is a durable change");
    assert!(h.pool.release(&l).unwrap());
}

#[test]
fn one_draw_only_when_the_chosen_group_has_two_or_more_candidates() {
    let mut h = tiers("{}");
    h.reg_in("r3", Some("res"));
    // The ungrouped (one candidate) is chosen: no draw although res, listed after, has three.
    assert_eq!(value(&only_in(&mut h, "c", &[None, Some("res")])), "u1");
    // dc chosen with two candidates: exactly one draw even when more groups are listed.
    h.draws.push(0.0);
    h.draws.push(0.0);
    let l = h.acquire_in("c", &[Some("dc"), Some("res"), None]).unwrap();
    assert_eq!(h.draws.remaining(), 1);
    // Now dc has one candidate left: no draw.
    let l2 = h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap();
    assert_eq!(h.draws.remaining(), 1);
    assert_eq!((value(&l), value(&l2)), ("d1", "d2"));
    // dc has none: res, three candidates, one draw (the one left); u 0 → r1.
    assert_eq!(value(&h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap()), "r1");
    assert_eq!(h.draws.remaining(), 0);
    // No candidate in the listed groups: no draw.
    assert_eq!(h.acquire_in("c", &[Some("dc")]), None);
}

/// The history of `a_bad_draw_with_groups_changes_nothing`: d1 leased by name at T0 (its lease
/// ends at T0 + 30 s), d2 free.
fn leased_d1() -> Harness {
    let mut h = tiers("{}");
    h.pool.acquire_resource(Kind::Proxy, "d1", "c").unwrap().unwrap();
    h.events();
    h
}

#[test]
fn a_bad_draw_with_groups_changes_nothing() {
    let (mut a, mut b) = (leased_d1(), leased_d1());
    // At +30 s d1's lease ends: with it dc has two candidates, so the acquire needs a draw —
    // and the draw is bad. Nothing may change, not even the lease's end.
    for h in [&mut a, &mut b] {
        h.at(30_000.0);
    }
    for bad in [1.0, -0.25, f64::NAN, f64::INFINITY] {
        a.draws.push(bad);
        let err = a.pool.acquire_in("c", &[Some("dc"), Some("res")]).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "draw {bad}");
        assert_eq!(a.draws.remaining(), 0);
    }
    let (ea, eb) = (a.events(), b.events());
    assert_eq!(ea, eb);
    assert_eq!(
        ea.iter().map(|e| (e.ty, e.at)).collect::<Vec<_>>(),
        vec![(EventType::LeaseExpired, T + 30_000)]
    );
    assert_eq!(a.snapshot(), b.snapshot());
    assert_eq!(a.pool.stats().unwrap(), b.pool.stats().unwrap());
    // And the next good draw gives both the same lease.
    for h in [&mut a, &mut b] {
        h.draws.push(0.75);
    }
    let (la, lb) = (a.acquire_in("c", &[Some("dc")]), b.acquire_in("c", &[Some("dc")]));
    assert_eq!(la, lb);
    assert_eq!(value(&la.unwrap()), "d2");
}

#[test]
fn the_pick_is_the_spec_rule_over_the_chosen_groups_candidates_in_canonical_order() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1000}"#);
    for (kind, v) in [(Kind::Session, "s"), (Kind::Account, "a"), (Kind::Proxy, "p")] {
        h.pool.register_in(kind, v, Some(Some("dc"))).unwrap();
    }
    h.reg_in("low", Some("x"));
    let report = |h: &mut Harness, kind, v: &str, o: Outcome| h.pool.report(kind, v, "c", o).unwrap();
    report(&mut h, Kind::Proxy, "p", Outcome::success());
    report(&mut h, Kind::Proxy, "p", Outcome::success()); // p: 10
    report(&mut h, Kind::Session, "s", Outcome::failure(Timeout)); // s: -5; a: no cell (0)
    for _ in 0..4 {
        report(&mut h, Kind::Proxy, "low", Outcome::failure(Blocked)); // low: -100, in x
    }
    // dc in canonical order: PROXY p (10), ACCOUNT a (0), SESSION s (-5). min over dc only is
    // -5: weights 16, 6, 1; running sums 16, 22, 23.
    // (With low's -100 as the minimum, u 0.70 would give target 215.6 of 308 → s.)
    let dc = [Some("dc")];
    let picks = [(0.0, "p"), (0.69, "p"), (0.70, "a"), (0.955, "a"), (0.96, "s"), (0.999, "s")];
    for (u, want) in picks {
        let l = pick_in(&mut h, "c", &dc, u);
        assert_eq!(value(&l), want, "u = {u}: target {}", u * 23.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Leases, views, the probe list and resources({ group })

#[test]
fn a_lease_carries_the_group_at_grant_and_at_renewal() {
    let mut h = tiers("{}");
    h.draws.push(0.0);
    let l = h.acquire_in("c", &[Some("res")]).unwrap();
    assert_eq!((value(&l), l.group.as_deref()), ("r1", Some("res")));
    assert_eq!(h.view("r1").lease.unwrap().group.as_deref(), Some("res"));
    h.at(1000.0);
    h.reg_in("r1", Some("dc"));
    let renewed = h.pool.renew(&l).unwrap().unwrap();
    assert_eq!(renewed.group.as_deref(), Some("dc"), "the group it has when renewed");
    assert_eq!((renewed.token, renewed.expires_at), (l.token, T + 31_000));
    assert_eq!(h.view("r1").lease.unwrap().group.as_deref(), Some("dc"));
    // The holder is known by token, not by group: the old object still releases it.
    assert!(h.pool.release(&l).unwrap());
    // acquireResource and an ungrouped acquire carry the group too.
    let l = h.pool.acquire_resource(Kind::Proxy, "r1", "c").unwrap().unwrap();
    assert_eq!(l.group.as_deref(), Some("dc"));
    h.reg_in("r1", None);
    assert_eq!(h.pool.renew(&l).unwrap().unwrap().group, None);
    assert!(h.pool.release(&l).unwrap());
    h.draws.push(0.0);
    let l = h.acquire("c").unwrap(); // d1 first of five
    assert_eq!((value(&l), l.group.as_deref()), ("d1", Some("dc")));
}

#[test]
fn views_and_the_probe_list_carry_the_current_group() {
    let mut h = Harness::with_patch(r#"{"coolAfter":1,"halfOpenCauses":[]}"#);
    h.reg_in("d1", Some("dc"));
    h.fail("d1", "c", Timeout); // probe-only, until +60 s
    h.at(60_000.0);
    let due = h.pool.due_for_recovery_probe().unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        (&*due[0].value, due[0].group.as_deref(), due[0].cooldown_until),
        ("d1", Some("dc"), T + 60_000)
    );
    h.reg_in("d1", Some("res"));
    assert_eq!(h.pool.due_for_recovery_probe().unwrap()[0].group.as_deref(), Some("res"));
    assert_eq!(h.view("d1").group.as_deref(), Some("res"));
    h.reg_in("d1", None);
    assert_eq!(h.pool.due_for_recovery_probe().unwrap()[0].group, None);
    assert_eq!(h.view("d1").group, None);
}

#[test]
fn resources_keeps_only_the_named_group() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    h.pool.register_in(Kind::Account, "a", Some(Some("dc"))).unwrap();
    h.fail("d2", "c", Timeout);
    h.ok("r1", "c");
    let names = |h: &mut Harness, f: Filter| -> Vec<(Kind, String)> {
        h.pool.resources(&f).unwrap().iter().map(|r| (r.kind, r.value.to_string())).collect()
    };
    let group = |g: Option<&str>| Filter { group: Some(g.map(str::to_owned)), ..Filter::default() };
    let p = |v: &str| (Kind::Proxy, v.to_owned());
    assert_eq!(names(&mut h, group(Some("dc"))), vec![p("d1"), p("d2"), (Kind::Account, "a".into())]);
    assert_eq!(names(&mut h, group(Some("res"))), vec![p("r1"), p("r2")]);
    assert_eq!(names(&mut h, group(None)), vec![p("u1")], "null: the resources with none");
    assert_eq!(names(&mut h, group(Some("nope"))), vec![]);
    assert_eq!(names(&mut h, group(Some("DC"))), vec![]);
    assert_eq!(names(&mut h, Filter::default()).len(), 6);
    // With a state filter: dc's resources with a COOLING cell.
    let f = Filter { state: Some(ViewState::Cooling), ..group(Some("dc")) };
    assert_eq!(names(&mut h, f), vec![p("d2")]);
    let f = Filter { state: Some(ViewState::Cooling), ..group(Some("res")) };
    assert_eq!(names(&mut h, f), vec![]);
    // With a context filter: every dc resource, only its cells in c.
    let f = Filter { context: Some("c".into()), ..group(Some("res")) };
    let v = h.pool.resources(&f).unwrap();
    assert_eq!(v.iter().map(|r| r.cells.len()).collect::<Vec<_>>(), vec![1, 0]);
}

// ---------------------------------------------------------------------------------------------
// nextChangeAt(context, { groups })

#[test]
fn next_change_at_answers_for_the_listed_groups_only() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    let at = |h: &mut Harness, groups: &[Option<&str>]| h.pool.next_change_at_in("c", groups).unwrap();
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T), "now: a candidate now");
    // d1, d2 leased until +30 s; r1 blocked until +100 s; r2 leased at +10 s until +40 s.
    h.pool.acquire_resource(Kind::Proxy, "d1", "c").unwrap().unwrap();
    h.pool.acquire_resource(Kind::Proxy, "d2", "c").unwrap().unwrap();
    h.block_secs("r1", 100.0);
    h.at(10_000.0);
    h.pool.acquire_resource(Kind::Proxy, "r2", "c").unwrap().unwrap();
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T + 30_000));
    assert_eq!(at(&mut h, &[Some("res")]), Some(T + 40_000));
    assert_eq!(at(&mut h, &[Some("res"), Some("dc")]), Some(T + 30_000), "the earliest over the list");
    assert_eq!(at(&mut h, &[Some("nope")]), None, "an unknown name has no resources");
    assert_eq!(at(&mut h, &[Some("nope"), Some("res")]), Some(T + 40_000));
    // The ungrouped u1 is free: a candidate now, but only where the list names it.
    assert_eq!(at(&mut h, &[Some("dc"), None]), Some(T + 10_000));
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 10_000));
    // d1 cools here (a half-open TIMEOUT, 60 s from +10 s): its instant is the later of its
    // lease end and its cooldown end, +70 s; d2's lease end (+30 s) stays the earliest.
    h.fail("d1", "c", Timeout);
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T + 30_000));
    h.at(30_000.0); // both dc leases end; d2 is a candidate
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T + 30_000));
    h.pool.acquire_resource(Kind::Proxy, "d2", "c").unwrap().unwrap(); // until +60 s
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T + 60_000));
    // A permanent block and a probe-only cooldown cannot end by time alone.
    h.pool.block(Kind::Proxy, "d2", repute::BlockSpec::Permanent).unwrap();
    assert_eq!(at(&mut h, &[Some("dc")]), Some(T + 70_000));
    h.pool.block(Kind::Proxy, "d1", repute::BlockSpec::Permanent).unwrap();
    assert_eq!(at(&mut h, &[Some("dc")]), None);
}

// ---------------------------------------------------------------------------------------------
// Groups that empty, move and come back

#[test]
fn a_group_emptied_by_deregistration_or_a_move_has_no_candidates_and_a_name_can_come_back() {
    let mut h = Harness::new();
    h.reg_in("a", Some("g1"));
    h.ok("a", "c");
    assert_eq!(value(&only_in(&mut h, "c", &[Some("g1")])), "a");
    h.pool.deregister(Kind::Proxy, "a").unwrap();
    h.pool.check_invariants().unwrap();
    assert_eq!(h.acquire_in("c", &[Some("g1")]), None);
    h.reg_in("b", Some("g2"));
    h.ok("b", "c");
    assert_eq!(value(&only_in(&mut h, "c", &[Some("g2")])), "b");
    assert_eq!(h.acquire_in("c", &[Some("g1")]), None);
    h.reg_in("a", Some("g1"));
    assert_eq!(value(&only_in(&mut h, "c", &[Some("g1")])), "a");
    assert_eq!(value(&only_in(&mut h, "c", &[Some("g2")])), "b");
    h.reg_in("a", Some("g3"));
    h.pool.check_invariants().unwrap();
    assert_eq!(h.acquire_in("c", &[Some("g1")]), None);
    assert_eq!(value(&only_in(&mut h, "c", &[Some("g1"), Some("g3")])), "a");
    h.pool.check_invariants().unwrap();
}

#[test]
fn a_moved_resource_takes_its_cells_to_its_new_group() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    h.ok("d1", "c");
    h.ok("d1", "c"); // d1: 10
    // Build both groups' indexes for c first.
    pick_in(&mut h, "c", &[Some("dc")], 0.0);
    pick_in(&mut h, "c", &[Some("res")], 0.0);
    h.reg_in("d1", Some("res"));
    h.pool.check_invariants().unwrap();
    assert_eq!(value(&only_in(&mut h, "c", &[Some("dc")])), "d2");
    // res: d1 (10), r1 (0), r2 (0): weights 11, 1, 1, running 11, 12, 13.
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("res")], 0.8)), "d1"); // target 10.4
    assert_eq!(value(&pick_in(&mut h, "c", &[Some("res")], 0.9)), "r1"); // target 11.7
    // A cooling resource moved out of dc leaves dc empty here.
    h.fail("d2", "c", Timeout);
    h.reg_in("d2", Some("res"));
    h.events();
    assert_eq!(h.acquire_in("c", &[Some("dc")]), None);
    assert_eq!(value(&only_in(&mut h, "c", &[Some("dc"), None])), "u1");
    h.pool.check_invariants().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn groups_survive_a_snapshot_round_trip_byte_for_byte() {
    let mut h = tiers(r#"{"coolAfter":1}"#);
    h.pool.register_in(Kind::Account, "a", Some(Some("é"))).unwrap();
    h.fail("d1", "c", Timeout);
    h.ok("r1", "c");
    let snap = h.snapshot();
    assert!(snap.contains(r#"{"kind":"PROXY","value":"d1","group":"dc"}"#), "{snap}");
    assert!(snap.contains(r#"{"kind":"PROXY","value":"u1"}"#), "no group: no key");
    let draws = common::Draws::default();
    let clock = ManualClock::new(T0);
    let mut r = ClockedPool::restore(&snap, None, clock, draws.source()).unwrap();
    assert_eq!(r.snapshot().unwrap(), snap);
    r.check_invariants().unwrap();
    // The restored pool picks by group as the original does (res: r1 at 5, r2 at 0, one draw;
    // the others have one candidate each).
    let lists = [(vec![Some("dc"), Some("res")], false), (vec![Some("res")], true), (vec![Some("é")], false)];
    for (groups, draw) in lists.into_iter().chain([(vec![None], false)]) {
        if draw {
            h.draws.push(0.9);
            draws.push(0.9);
        }
        let (a, b) = (h.acquire_in("c", &groups), r.acquire_in("c", &groups).unwrap());
        assert_eq!(a, b);
        assert!(a.is_some());
        assert_eq!((h.draws.remaining(), draws.remaining()), (0, 0));
    }
    assert_eq!(r.snapshot().unwrap(), h.snapshot());
}

#[test]
fn a_group_in_a_snapshot_follows_the_version_rules() {
    let mut h = Harness::new();
    h.reg_in("a", Some("dc"));
    h.reg_in("b", None);
    let snap = h.snapshot();
    let restore = |s: &str| {
        ClockedPool::restore(s, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5)).map(|_| ())
    };
    assert!(restore(&snap).is_ok());
    let code = |s: &str| restore(s).unwrap_err().code();
    // "group": null is refused (absent means none).
    assert_eq!(code(&snap.replace(r#""group":"dc""#, r#""group":null"#)), "INVALID_SNAPSHOT");
    // Not a valid group name.
    assert_eq!(code(&snap.replace(r#""group":"dc""#, r#""group":" ""#)), "INVALID_SNAPSHOT");
    let g65 = format!(r#""group":"{}""#, "g".repeat(65));
    assert_eq!(code(&snap.replace(r#""group":"dc""#, &g65)), "INVALID_SNAPSHOT");
    assert_eq!(code(&snap.replace(r#""group":"dc""#, r#""group":7"#)), "INVALID_SNAPSHOT");
    // Version 1: the three config fields go; with them it restores (no groups at all) ...
    let v1 = snap
        .replace(r#""version":3"#, r#""version":1"#)
        .replace(r#","minGapMs":0,"minGapMsByContext":{},"maxCoolingPercent":100"#, "");
    assert_ne!(v1, snap);
    assert_eq!(code(&v1), "INVALID_SNAPSHOT", "a version 1 snapshot with a group");
    let v1_plain = v1.replace(r#","group":"dc""#, "");
    let mut r = ClockedPool::restore(&v1_plain, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5))
        .unwrap();
    assert!(r.resources(&Filter::default()).unwrap().iter().all(|v| v.group.is_none()));
}

/// Regression: a resource registered into a group after a grouped acquire built that group's
/// index for a context, then reported on there for the first time. The new cell was stored
/// before the group's index caught up with the registration, which then took the cell for one
/// it already held: its counts went wrong (a tail of 2^32 − 1) and the next grouped acquire
/// panicked on an overflow.
#[test]
fn a_first_report_of_a_newly_registered_group_member_keeps_the_group_index_exact() {
    let mut h = Harness::new();
    h.reg_in("a", Some("g"));
    h.ok("a", "c");
    only_in(&mut h, "c", &[Some("g")]); // builds c's index of g
    h.reg_in("b", Some("g"));
    h.ok("b", "c");
    h.pool.check_invariants().unwrap();
    // a and b at 5: weights 1, 1; u 0.5 → target 1 → b; then a alone; then nothing.
    h.draws.push(0.5);
    let b = h.acquire_in("c", &[Some("g")]).unwrap();
    let a = h.acquire_in("c", &[Some("g")]).unwrap();
    assert_eq!((value(&b), value(&a)), ("b", "a"));
    assert_eq!(h.acquire_in("c", &[Some("g")]), None);
}

/// Regression: after a restore (the pool's usual start), a worker's boot-time `register` moves
/// a resource into a group nobody had yet. The new group's order started from the beginning
/// of the availability log, which after a restore holds no entry for the resources restored:
/// the moved resource stayed unavailable there, and `acquire(context, { groups: [g] })` found
/// no candidate although the resource was free.
#[test]
fn a_resource_moved_into_a_new_group_after_a_restore_is_a_candidate_there() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let snap = h.snapshot();
    let mut r =
        ClockedPool::restore(&snap, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5)).unwrap();
    assert!(!r.register_in(Kind::Proxy, "a", Some(Some("dc"))).unwrap());
    r.check_invariants().unwrap();
    let l = r.acquire_in("c", &[Some("dc")]).unwrap().expect("a is free and in dc");
    assert_eq!((&*l.value, l.group.as_deref()), ("a", Some("dc")));
    assert_eq!(r.acquire_in("c", &[Some("dc")]).unwrap(), None);
    let l = r.acquire_in("c", &[None]).unwrap().expect("b is free and ungrouped");
    assert_eq!(&*l.value, "b");
}
