//! Blocklist rules (SPEC §2 "Blocklist", §3 "Blocking", "Precise details"): a block beats
//! everything (never leased by `acquire` or `acquireResource`), temporary blocks expire by
//! themselves (exclusive expiry, `BLOCK_EXPIRED`, also after a restore), permanent blocks end only
//! with `unblock`, re-blocking replaces the entry, fractional seconds round to ms (at least 1 ms),
//! invalid seconds are `INVALID_ARGUMENT`, renew is refused while blocked but release works,
//! `unblock` returns true and emits `RESOURCE_UNBLOCKED` only when blocked, unregistered
//! resources are `UNKNOWN_RESOURCE`, the dashboard shows `BLOCKLISTED` while blocked and the
//! stored state after, and expired temporary entries are absent from snapshots.

mod common;

use common::{ClockedPool, Draws, Harness, ManualClock, T0};
use repute::registry::blocklist::Block;
use repute::{BlockSpec, Error, EventType, FailureType, Filter, Kind, ViewState};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

fn blocked(h: &mut Harness, value: &str) -> Option<Block> {
    h.view(value).blocked
}

fn snapshot_blocklist(h: &mut Harness) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    v["blocklist"].clone()
}

#[test]
fn a_blocked_resource_is_never_leased() {
    let mut h = Harness::new();
    h.reg("blocked");
    h.reg("free");
    // The blocked one has the best reputation: it still must never be picked.
    for _ in 0..10 {
        h.ok("blocked", "c");
    }
    h.pool.block(Kind::Proxy, "blocked", BlockSpec::Permanent).unwrap();
    for ctx in ["c", "other"] {
        for _ in 0..5 {
            // One candidate only: no random draw is requested (Draws would panic).
            let l = h.acquire(ctx).expect("free is a candidate");
            assert_eq!(&*l.value, "free");
            h.pool.release(&l).unwrap();
        }
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, "blocked", ctx).unwrap(), None);
    }
    // With the other one leased, nothing is left.
    let l = h.acquire("c").unwrap();
    assert_eq!(h.acquire("c"), None);
    h.pool.release(&l).unwrap();
}

#[test]
fn a_block_beats_an_expired_cooldown_and_a_lease_that_lapses() {
    let mut h = Harness::new();
    h.reg("p");
    // Half-open trial due (expired cooldown) — but blocked.
    h.fail("p", "c", FailureType::Timeout);
    h.fail("p", "c", FailureType::Timeout);
    let lease = h.pool.acquire_resource(Kind::Proxy, "p", "x").unwrap().unwrap();
    h.block_secs("p", 3600.0);
    h.at(120_000.0); // cooldown over, lease lapsed
    assert_eq!(h.acquire("c"), None);
    assert_eq!(h.acquire("x"), None);
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "x").unwrap(), None);
    assert!(!h.pool.release(&lease).unwrap());
    assert!(h.pool.due_for_recovery_probe().unwrap().is_empty());
}

#[test]
fn a_temporary_block_expires_by_itself_exclusively() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    let ev = h.events();
    let e = ev.last().unwrap();
    assert_eq!(e.ty, EventType::ResourceBlocklisted);
    assert_eq!(e.until, Some(T + 10_000));
    assert!(!e.permanent);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 10_000)));

    h.at(9_999.0);
    assert_eq!(h.acquire("c"), None);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 10_000)));
    h.events();
    h.at(10_000.0);
    assert_eq!(blocked(&mut h, "p"), None, "until is exclusive");
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::BlockExpired);
    assert_eq!(ev[0].at, T + 10_000);
    assert_eq!(ev[0].resource, Some((Kind::Proxy, "p".into())));
    assert!(h.acquire("c").is_some());
    assert_eq!(h.pool.stats().unwrap().blocked, 0);
}

#[test]
fn the_expiry_is_stamped_with_the_instant_it_took_effect() {
    // Nobody calls at T + 10 s; the next call (much later) reports the expiry at its instant.
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    h.events();
    h.at(500_000.0);
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::BlockExpired);
    assert_eq!(ev[0].at, T + 10_000);
}

#[test]
fn a_temporary_block_expires_after_a_restore() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    let json = h.snapshot();
    let clock = ManualClock::new(T0);
    let mut pool = ClockedPool::restore(&json, None, clock.clone(), Draws::default().source()).unwrap();
    clock.set(T0 + 9_999.0);
    assert_eq!(pool.acquire("c").unwrap(), None);
    pool.drain_events().unwrap();
    clock.set(T0 + 10_000.0);
    let lease = pool.acquire("c").unwrap();
    assert!(lease.is_some(), "the block ended at T + 10 s");
    let types: Vec<_> = pool.drain_events().unwrap().iter().map(|e| e.ty.as_str()).collect();
    assert_eq!(types, vec!["BLOCK_EXPIRED", "RESOURCE_LEASED"]);
    let snap: serde_json::Value = serde_json::from_str(&pool.snapshot().unwrap()).unwrap();
    assert_eq!(snap["blocklist"], serde_json::json!([]));
}

#[test]
fn a_permanent_block_ends_only_with_unblock() {
    let mut h = Harness::new();
    h.reg("p");
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    let ev = h.events();
    let e = ev.last().unwrap();
    assert_eq!(e.ty, EventType::ResourceBlocklisted);
    assert!(e.permanent);
    assert_eq!(e.until, None);
    // Ten years later.
    h.at(10.0 * 365.0 * 86_400_000.0);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Permanent));
    assert_eq!(h.acquire("c"), None);
    h.events();
    assert!(h.pool.unblock(Kind::Proxy, "p").unwrap());
    assert_eq!(h.event_types(), vec!["RESOURCE_UNBLOCKED"]);
    assert_eq!(blocked(&mut h, "p"), None);
    assert!(h.acquire("c").is_some());
}

#[test]
fn reblocking_replaces_the_entry() {
    // Long then short: the short one wins; the old expiry has no effect.
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 100.0);
    h.block_secs("p", 10.0);
    let ev = h.events();
    assert_eq!(ev.last().unwrap().until, Some(T + 10_000));
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 10_000)));
    h.at(10_000.0);
    assert_eq!(blocked(&mut h, "p"), None);
    assert_eq!(h.event_types(), vec!["BLOCK_EXPIRED"]);
    h.at(100_000.0);
    assert!(h.events().is_empty(), "no expiry for the replaced entry");

    // Short then long: still blocked after the short one's end.
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    h.at(5_000.0);
    h.block_secs("p", 100.0); // until T + 105 s
    h.events();
    h.at(10_000.0);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 105_000)));
    assert!(h.events().is_empty());
    h.at(105_000.0);
    assert_eq!(blocked(&mut h, "p"), None);
    assert_eq!(h.event_types(), vec!["BLOCK_EXPIRED"]);

    // Permanent then temporary: expires.
    let mut h = Harness::new();
    h.reg("p");
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    h.block_secs("p", 1.0);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 1_000)));
    h.at(1_000.0);
    assert_eq!(blocked(&mut h, "p"), None);

    // Temporary then permanent: never expires.
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 1.0);
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    let ev = h.events();
    assert!(ev.last().unwrap().permanent);
    h.at(1_000.0);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Permanent));
    assert!(!h.event_types().contains(&"BLOCK_EXPIRED"));
    // The snapshot holds one entry, the permanent one.
    assert_eq!(
        snapshot_blocklist(&mut h),
        serde_json::json!([{"kind":"PROXY","value":"p","permanent":true}])
    );
}

#[test]
fn fractional_seconds_round_to_milliseconds_with_at_least_1() {
    // (seconds, ms): round(seconds × 1000), at least 1.
    let cases = [
        (2.5004, 2_500),
        (1.0016, 1_002),
        (0.0026, 3),
        (0.0014, 1),
        (0.0006, 1),
        (0.0001, 1),
        (1e-9, 1),
        (86_400.0, 86_400_000),
    ];
    for (secs, ms) in cases {
        let mut h = Harness::new();
        h.reg("p");
        h.block_secs("p", secs);
        assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + ms)), "{secs} s");
        let ev = h.events();
        assert_eq!(ev.last().unwrap().until, Some(T + ms), "{secs} s");
        h.clock.set((T + ms - 1) as f64);
        assert!(blocked(&mut h, "p").is_some(), "{secs} s");
        h.clock.set((T + ms) as f64);
        assert!(blocked(&mut h, "p").is_none(), "{secs} s");
    }
}

#[test]
fn non_positive_nan_or_infinite_seconds_are_invalid_arguments() {
    let mut h = Harness::new();
    h.reg("p");
    h.events();
    let snap = h.snapshot();
    let rev = h.pool.stats().unwrap().revision;
    for secs in [0.0, -0.0, -1.0, -0.0001, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = h.pool.block(Kind::Proxy, "p", BlockSpec::Seconds(secs)).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{secs}: {e:?}");
    }
    assert_eq!(h.snapshot(), snap);
    assert_eq!(h.pool.stats().unwrap().revision, rev);
    assert!(h.events().is_empty());
    assert_eq!(blocked(&mut h, "p"), None);
}

#[test]
fn renew_is_refused_while_blocked_but_release_still_works() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.block_secs("p", 3600.0);
    h.at(10_000.0);
    assert_eq!(h.pool.renew(&lease).unwrap(), None);
    // The refused renew did not end the lease: it is still there until its TTL.
    assert_eq!(h.view("p").lease.map(|l| l.token), Some(lease.token));
    h.events();
    assert!(h.pool.release(&lease).unwrap());
    assert_eq!(h.event_types(), vec!["LEASE_RELEASED"]);
    assert!(h.view("p").lease.is_none());
    assert_eq!(h.acquire("c"), None, "still blocked");

    // Without a release the lease lapses at its TTL.
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    h.at(20_000.0);
    assert_eq!(h.pool.renew(&lease).unwrap(), None);
    h.events();
    h.at(30_000.0);
    assert_eq!(h.event_types(), vec!["LEASE_EXPIRED"]);
    assert!(h.view("p").lease.is_none());
}

#[test]
fn unblock_returns_true_and_emits_only_when_blocked() {
    let mut h = Harness::new();
    h.reg("p");
    h.events();
    assert!(!h.pool.unblock(Kind::Proxy, "p").unwrap());
    assert!(h.events().is_empty());

    h.block_secs("p", 10.0);
    h.events();
    h.at(3_000.0);
    assert!(h.pool.unblock(Kind::Proxy, "p").unwrap());
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::ResourceUnblocked);
    assert_eq!(ev[0].at, T + 3_000);
    assert_eq!(ev[0].resource, Some((Kind::Proxy, "p".into())));
    assert!(!h.pool.unblock(Kind::Proxy, "p").unwrap(), "twice");
    assert!(h.events().is_empty());
    // The unblocked entry's old expiry does nothing later.
    h.at(10_000.0);
    assert!(h.events().is_empty());

    // An expired temporary block is no longer a block.
    h.block_secs("p", 1.0); // until T + 11 s
    h.at(11_000.0);
    h.events();
    assert!(!h.pool.unblock(Kind::Proxy, "p").unwrap());
    assert!(h.events().is_empty());
}

#[test]
fn block_and_unblock_on_an_unregistered_resource_are_unknown_resource() {
    let mut h = Harness::new();
    h.reg("p");
    for spec in [BlockSpec::Permanent, BlockSpec::Seconds(5.0)] {
        let e = h.pool.block(Kind::Proxy, "nope", spec).unwrap_err();
        assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
        let e = h.pool.block(Kind::Session, "p", spec).unwrap_err();
        assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
    }
    let e = h.pool.unblock(Kind::Proxy, "nope").unwrap_err();
    assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
    let e = h.pool.unblock(Kind::Account, "p").unwrap_err();
    assert_eq!(e.code(), "UNKNOWN_RESOURCE");
}

#[test]
fn the_dashboard_shows_blocklisted_while_blocked_and_the_stored_state_after() {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.ok("p", "a"); // HEALTHY
    h.fail("p", "b", FailureType::Timeout);
    h.fail("p", "b", FailureType::Timeout); // COOLING
    h.at(120_000.0);
    h.fail("p", "r", FailureType::Slow);
    h.fail("p", "r", FailureType::Slow); // COOLING until T + 180 s
    h.at(180_000.0);
    h.ok("p", "r"); // RECOVERING
    h.ok("q", "a");

    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    let v = h.view("p");
    assert_eq!(v.blocked, Some(Block::Permanent));
    assert!(v.cells.iter().all(|c| c.state == ViewState::Blocklisted));
    assert_eq!(v.cells.len(), 3);
    assert_eq!(h.cell("q", "a").state, ViewState::Healthy, "q is not blocked");

    let only_blocked = h
        .pool
        .resources(&Filter { context: None, state: Some(ViewState::Blocklisted), group: None })
        .unwrap();
    let names: Vec<&str> = only_blocked.iter().map(|r| &*r.value).collect();
    assert_eq!(names, vec!["p"]);

    assert!(h.pool.unblock(Kind::Proxy, "p").unwrap());
    assert_eq!(h.cell("p", "a").state, ViewState::Healthy);
    assert_eq!(h.cell("p", "b").state, ViewState::Cooling);
    assert_eq!(h.cell("p", "r").state, ViewState::Recovering);
    assert_eq!(h.view("p").blocked, None);
}

#[test]
fn a_blocked_resource_without_cells_is_listed_as_blocked() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 60.0);
    let v = h.view("p");
    assert_eq!(v.blocked, Some(Block::Until(T + 60_000)));
    assert!(v.cells.is_empty());
    assert_eq!(h.pool.stats().unwrap().blocked, 1);
}

#[test]
fn expired_temporary_entries_are_absent_from_the_snapshot() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.reg("c");
    h.block_secs("a", 10.0);
    h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
    h.block_secs("c", 20.0);
    assert_eq!(
        snapshot_blocklist(&mut h),
        serde_json::json!([
            {"kind":"PROXY","value":"a","until": T + 10_000},
            {"kind":"PROXY","value":"b","permanent":true},
            {"kind":"PROXY","value":"c","until": T + 20_000},
        ])
    );
    h.at(10_000.0);
    assert_eq!(
        snapshot_blocklist(&mut h),
        serde_json::json!([
            {"kind":"PROXY","value":"b","permanent":true},
            {"kind":"PROXY","value":"c","until": T + 20_000},
        ])
    );
    h.at(25_000.0);
    assert_eq!(
        snapshot_blocklist(&mut h),
        serde_json::json!([{"kind":"PROXY","value":"b","permanent":true}])
    );
}

#[test]
fn blocking_is_resource_wide_not_per_kind_value_confusion() {
    // PROXY/x blocked does not block ACCOUNT/x.
    let mut h = Harness::new();
    h.pool.register(Kind::Proxy, "x").unwrap();
    h.pool.register(Kind::Account, "x").unwrap();
    h.pool.block(Kind::Proxy, "x", BlockSpec::Permanent).unwrap();
    let l = h.acquire("c").expect("ACCOUNT/x is free");
    assert_eq!((l.kind, &*l.value), (Kind::Account, "x"));
}

#[test]
fn a_block_does_not_outlive_deregistration() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    assert!(h.pool.deregister(Kind::Proxy, "p").unwrap());
    h.reg("p");
    assert_eq!(blocked(&mut h, "p"), None, "a new registration starts unblocked");
    assert!(h.acquire("c").is_some());
    h.events();
    h.at(10_000.0);
    assert!(!h.event_types().contains(&"BLOCK_EXPIRED"), "the removed block's expiry is gone with it");
    // A new block on the new registration is not ended by the old entry's instant.
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    h.pool.deregister(Kind::Proxy, "p").unwrap();
    h.reg("p");
    h.block_secs("p", 20.0);
    h.at(10_000.0);
    assert_eq!(blocked(&mut h, "p"), Some(Block::Until(T + 20_000)));
}

#[test]
fn block_unblock_block_to_the_same_instant_expires_once() {
    let mut h = Harness::new();
    h.reg("p");
    h.block_secs("p", 10.0);
    h.pool.unblock(Kind::Proxy, "p").unwrap();
    h.block_secs("p", 10.0); // the same until, T + 10 s
    h.events();
    h.at(10_000.0);
    assert_eq!(h.event_types(), vec!["BLOCK_EXPIRED"]);
    assert_eq!(blocked(&mut h, "p"), None);
}
