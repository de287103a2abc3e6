//! Lease rules (SPEC §2 "Lease", §3 "Renew / release", "Precise details" on
//! `acquireResource`): exclusivity across contexts, `leaseTtlMs` (default 30 s), exclusive expiry
//! and `LEASE_EXPIRED`, renew (now + ttl, same token), renew/release by a stale holder, double
//! release, strictly increasing fencing tokens (also across snapshot → restore, where leases are
//! dropped), `acquireResource` grants and refusals, `ACQUISITION_REJECTED` naming only the
//! context, `acquire` never creating a cell, and the resource handles hosts cache (valid until
//! a deregistration).

mod common;

use common::{ClockedPool, Draws, Harness, ManualClock, T0};
use repute::{BlockSpec, ConfigPatch, Error, EventType, FailureType, Filter, Kind, Lease, Next};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

fn leased(h: &mut Harness, value: &str) -> Option<Lease> {
    h.view(value).lease
}

fn expect_events(h: &mut Harness, want: &[&str]) {
    assert_eq!(h.event_types(), want);
}

#[test]
fn a_lease_is_exclusive_across_contexts() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("checkout-us").expect("fresh resource");
    assert_eq!(&*lease.value, "p");
    assert_eq!(&*lease.context, "checkout-us");
    assert_eq!(lease.kind, Kind::Proxy);
    for ctx in ["checkout-us", "search-eu", "other"] {
        assert_eq!(h.acquire(ctx), None, "{ctx}");
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", ctx).unwrap(), None, "{ctx}");
    }
    // Another resource is still leasable while p is held.
    h.reg("q");
    let other = h.acquire("search-eu").expect("q is free");
    assert_eq!(&*other.value, "q");
    // The dashboard shows the lease as granted.
    assert_eq!(leased(&mut h, "p"), Some(lease));
}

#[test]
fn lease_ttl_defaults_to_30_s_and_is_configurable() {
    let mut h = Harness::new();
    h.reg("p");
    h.at(5_000.0);
    let lease = h.acquire("c").unwrap();
    assert_eq!(lease.leased_at, T + 5_000);
    assert_eq!(lease.expires_at, T + 5_000 + 30_000);

    let mut h = Harness::with_patch(r#"{"leaseTtlMs":1234}"#);
    h.reg("p");
    let lease = h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().unwrap();
    assert_eq!(lease.expires_at, T + 1_234);
}

#[test]
fn lease_expiry_is_exclusive_and_emits_lease_expired() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.events();
    h.at(29_999.0);
    assert_eq!(h.acquire("d"), None, "now < expiresAt: still leased");
    assert!(leased(&mut h, "p").is_some());
    h.events();
    h.at(30_000.0);
    assert!(leased(&mut h, "p").is_none(), "free at expiresAt");
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::LeaseExpired);
    assert_eq!(ev[0].at, T + 30_000);
    assert_eq!(ev[0].token, Some(lease.token));
    assert_eq!(ev[0].resource, Some((Kind::Proxy, "p".into())));
    let again = h.acquire("d").expect("free again");
    assert!(again.token > lease.token);
}

#[test]
fn renew_extends_to_now_plus_ttl_and_keeps_the_token() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.at(10_000.0);
    let renewed = h.pool.renew(&lease).unwrap().expect("current holder");
    assert_eq!(renewed.token, lease.token);
    assert_eq!(renewed.kind, lease.kind);
    assert_eq!(renewed.value, lease.value);
    assert_eq!(renewed.context, lease.context);
    assert_eq!(renewed.expires_at, T + 40_000);
    h.events();
    // The old expiry (T + 30 s) no longer applies.
    h.at(30_000.0);
    assert_eq!(h.acquire("other"), None);
    h.at(39_999.0);
    assert_eq!(h.acquire("other"), None);
    assert!(!h.event_types().contains(&"LEASE_EXPIRED"));
    // Renewing with the original lease value (same token) still works for the holder.
    let again = h.pool.renew(&lease).unwrap().expect("same token, same holder");
    assert_eq!(again.expires_at, T + 39_999 + 30_000);
    assert_eq!(again.token, lease.token);
    h.at(69_998.0);
    assert!(leased(&mut h, "p").is_some());
    h.at(69_999.0);
    assert!(leased(&mut h, "p").is_none());
}

#[test]
fn a_stale_holder_cannot_renew_or_release_the_new_lease() {
    let mut h = Harness::new();
    h.reg("p");
    let old = h.acquire("c").unwrap();
    h.at(30_000.0);
    let new = h.acquire("c").expect("the old lease expired");
    assert!(new.token > old.token);
    h.events();

    assert_eq!(h.pool.renew(&old).unwrap(), None);
    assert!(!h.pool.release(&old).unwrap());
    assert!(h.events().is_empty());
    // The new lease is untouched: same token and expiry, still exclusive.
    assert_eq!(leased(&mut h, "p"), Some(new.clone()));
    h.at(59_999.0);
    assert_eq!(h.acquire("c"), None);
    h.events();
    // And it still works for its holder.
    assert!(h.pool.release(&new).unwrap());
    expect_events(&mut h, &["LEASE_RELEASED"]);
}

#[test]
fn a_stale_holder_cannot_touch_a_new_lease_in_another_context_either() {
    let mut h = Harness::new();
    h.reg("p");
    let old = h.acquire("a").unwrap();
    h.at(30_000.0);
    let new = h.pool.acquire_resource(Kind::Proxy, "p", "b").unwrap().unwrap();
    // A forged lease with the new token but the old context is not the holder either.
    let forged = Lease { token: new.token, ..old.clone() };
    assert_eq!(h.pool.renew(&old).unwrap(), None);
    assert!(!h.pool.release(&forged).unwrap());
    assert_eq!(leased(&mut h, "p"), Some(new));
}

#[test]
fn renew_and_release_after_expiry_fail_even_without_a_new_holder() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.at(30_000.0);
    assert_eq!(h.pool.renew(&lease).unwrap(), None);
    assert!(!h.pool.release(&lease).unwrap());
}

#[test]
fn release_frees_and_a_second_release_is_false() {
    let mut h = Harness::new();
    h.reg("p");
    let lease = h.acquire("c").unwrap();
    h.events();
    h.at(1_000.0);
    assert!(h.pool.release(&lease).unwrap());
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::LeaseReleased);
    assert_eq!(ev[0].token, Some(lease.token));
    assert_eq!(ev[0].at, T + 1_000);
    assert!(leased(&mut h, "p").is_none());
    assert!(!h.pool.release(&lease).unwrap(), "already released");
    assert_eq!(h.pool.renew(&lease).unwrap(), None, "released: not renewable");
    assert!(h.events().is_empty());
    assert!(h.acquire("d").is_some(), "free again after release");
}

#[test]
fn fencing_tokens_strictly_increase() {
    let mut h = Harness::new();
    for v in ["a", "b", "c"] {
        h.reg(v);
    }
    let mut tokens = Vec::new();
    for round in 0..4 {
        let mut held = Vec::new();
        for v in ["a", "b", "c"] {
            let l = h.pool.acquire_resource(Kind::Proxy, v, &format!("ctx{round}")).unwrap().unwrap();
            tokens.push(l.token);
            held.push(l);
        }
        for l in held {
            h.pool.release(&l).unwrap();
        }
        // acquire with a single candidate left (others blocked): no draw needed.
        h.pool.block(Kind::Proxy, "a", BlockSpec::Permanent).unwrap();
        h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
        let l = h.acquire("x").unwrap();
        tokens.push(l.token);
        h.pool.release(&l).unwrap();
        h.pool.unblock(Kind::Proxy, "a").unwrap();
        h.pool.unblock(Kind::Proxy, "b").unwrap();
    }
    assert_eq!(tokens.len(), 16);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens must strictly increase: {tokens:?}");
}

#[test]
fn tokens_keep_increasing_across_snapshot_and_restore_and_leases_are_dropped() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let mut max_before = 0;
    for _ in 0..5 {
        let l = h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
        max_before = max_before.max(l.token);
        h.pool.release(&l).unwrap();
    }
    // Hold b at snapshot time.
    let held = h.pool.acquire_resource(Kind::Proxy, "b", "c").unwrap().unwrap();
    max_before = max_before.max(held.token);
    let json = h.snapshot();

    let clock = ManualClock::new(T0);
    let draws = Draws::default();
    let mut pool = ClockedPool::restore(&json, None, clock.clone(), draws.source()).unwrap();
    // Nothing is held right after a restore.
    let views = pool.resources(&Filter::default()).unwrap();
    assert!(views.iter().all(|r| r.lease.is_none()));
    assert_eq!(pool.stats().unwrap().leased, 0);
    // The stale lease from before cannot be released or renewed in the restored pool.
    assert!(!pool.release(&held).unwrap());
    assert_eq!(pool.renew(&held).unwrap(), None);
    let l = pool.acquire_resource(Kind::Proxy, "b", "c").unwrap().expect("b is free right after restore");
    assert!(l.token > max_before, "{} > {max_before}", l.token);
    // And they keep increasing.
    draws.push(0.0);
    let l2 = pool.acquire("c").unwrap().unwrap();
    assert!(l2.token > l.token);
}

#[test]
fn acquire_resource_on_an_unregistered_resource_is_unknown_resource() {
    let mut h = Harness::new();
    h.reg("p");
    let e = h.pool.acquire_resource(Kind::Proxy, "nope", "c").unwrap_err();
    assert!(matches!(e, Error::UnknownResource(_)), "{e:?}");
    // Same value, different kind: a different resource.
    let e = h.pool.acquire_resource(Kind::Account, "p", "c").unwrap_err();
    assert_eq!(e.code(), "UNKNOWN_RESOURCE");
}

/// Grants, checks and releases a lease on `value` in `ctx` by name.
fn grants(h: &mut Harness, value: &str, ctx: &str) {
    let l = h
        .pool
        .acquire_resource(Kind::Proxy, value, ctx)
        .unwrap()
        .unwrap_or_else(|| panic!("{value} in {ctx} should be granted"));
    assert_eq!(&*l.value, value);
    assert_eq!(&*l.context, ctx);
    assert!(h.pool.release(&l).unwrap());
}

#[test]
fn acquire_resource_grants_healthy_recovering_fresh_and_expired_cooldowns_of_any_cause() {
    let mut h = Harness::with_patch(r#"{"halfOpenCauses":["BLOCKED"]}"#);
    for v in ["fresh", "healthy", "recovering", "half-open", "probe-due"] {
        h.reg(v);
    }
    // fresh: no cell at all (the context does not exist yet).
    grants(&mut h, "fresh", "c");
    h.ok("healthy", "c");
    // fresh in a context that now exists.
    grants(&mut h, "fresh", "c");
    grants(&mut h, "healthy", "c");

    h.fail("recovering", "c", FailureType::Timeout);
    h.fail("recovering", "c", FailureType::Timeout); // until T + 120 s
    h.fail("half-open", "c", FailureType::Blocked);
    h.fail("half-open", "c", FailureType::Blocked); // until T + 2 h, cause in halfOpenCauses
    h.fail("probe-due", "c", FailureType::Slow);
    h.fail("probe-due", "c", FailureType::Slow); // until T + 60 s, probe-only cause
    h.at(120_000.0);
    h.ok("recovering", "c");
    assert_eq!(h.cell("recovering", "c").state, repute::ViewState::Recovering);
    grants(&mut h, "recovering", "c");
    grants(&mut h, "probe-due", "c");
    h.at(7_200_000.0);
    grants(&mut h, "half-open", "c");
}

#[test]
fn acquire_resource_refuses_without_an_event_when_leased_blocked_or_cooling() {
    // Long lease and block so that nothing expires by itself during the test.
    let mut h = Harness::with_patch(r#"{"leaseTtlMs":1000000}"#);
    for v in ["leased", "blocked", "cooling"] {
        h.reg(v);
    }
    let _held = h.pool.acquire_resource(Kind::Proxy, "leased", "a").unwrap().unwrap();
    h.block_secs("blocked", 3600.0);
    h.fail("cooling", "c", FailureType::Timeout);
    h.fail("cooling", "c", FailureType::Timeout); // until T + 120 s
    h.events();
    let rev = h.pool.stats().unwrap().revision;
    let snap = h.snapshot();
    for v in ["leased", "blocked", "cooling"] {
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, v, "c").unwrap(), None, "{v}");
    }
    h.at(119_999.0);
    assert_eq!(
        h.pool.acquire_resource(Kind::Proxy, "cooling", "c").unwrap(),
        None,
        "1 ms before the cooldown ends"
    );
    assert!(h.events().is_empty(), "a refusal emits nothing");
    assert_eq!(h.pool.stats().unwrap().revision, rev);
    let mut a: serde_json::Value = serde_json::from_str(&snap).unwrap();
    let mut b: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    a["takenAt"] = 0.into();
    b["takenAt"] = 0.into();
    assert_eq!(a, b, "a refusal changes nothing durable");
    // The cooling cell's own context only: in another context it is fresh and grantable.
    grants(&mut h, "cooling", "elsewhere");
    h.at(120_000.0);
    grants(&mut h, "cooling", "c");
}

#[test]
fn acquire_with_nothing_eligible_rejects_naming_only_the_context() {
    fn check_rejected(h: &mut Harness, ctx: &str) {
        assert_eq!(h.acquire(ctx), None);
        let ev = h.events();
        assert_eq!(ev.len(), 1, "{ev:?}");
        let e = &ev[0];
        assert_eq!(e.ty, EventType::AcquisitionRejected);
        assert_eq!(e.context.as_deref(), Some(ctx));
        assert_eq!(e.resource, None, "names only the context");
        assert_eq!(e.cause, None);
        assert_eq!(e.until, None);
        assert_eq!(e.token, None);
        assert!(!e.permanent);
    }
    // No resources at all.
    let mut h = Harness::new();
    check_rejected(&mut h, "c");
    // All leased / blocked / cooling here.
    h.reg("leased");
    h.reg("blocked");
    h.reg("cooling");
    let _l = h.pool.acquire_resource(Kind::Proxy, "leased", "x").unwrap().unwrap();
    h.pool.block(Kind::Proxy, "blocked", BlockSpec::Permanent).unwrap();
    h.fail("cooling", "c", FailureType::Blocked);
    h.fail("cooling", "c", FailureType::Blocked);
    h.events();
    check_rejected(&mut h, "c");
}

#[test]
fn acquire_never_creates_a_cell() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.ok("b", "known");
    h.events();
    let before = h.pool.stats().unwrap();
    assert_eq!((before.cells, before.contexts), (1, 1));
    h.draws.push(0.0);
    let l = h.acquire("brand-new").unwrap();
    h.pool.release(&l).unwrap();
    h.draws.push(0.0);
    let l = h.acquire("known").unwrap();
    h.pool.release(&l).unwrap();
    let l = h.pool.acquire_resource(Kind::Proxy, "a", "another").unwrap().unwrap();
    // Rejected acquire too.
    h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
    assert_eq!(h.acquire("third"), None);
    h.pool.release(&l).unwrap();

    let after = h.pool.stats().unwrap();
    assert_eq!((after.cells, after.contexts), (1, 1));
    assert!(h.view("a").cells.is_empty());
    let cells: Vec<_> = h.view("b").cells.iter().map(|c| c.context.clone()).collect();
    assert_eq!(cells, vec!["known".into()] as Vec<std::rc::Rc<str>>);
    let snap: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    assert_eq!(snap["cells"].as_array().unwrap().len(), 1);
}

#[test]
fn a_restored_pool_with_a_config_ttl_uses_it_for_new_leases() {
    let mut h = Harness::new();
    h.reg("p");
    let json = h.snapshot();
    let patch = ConfigPatch::from_json(r#"{"leaseTtlMs":5000}"#).unwrap();
    let clock = ManualClock::new(T0);
    let mut pool =
        ClockedPool::restore(&json, Some(&patch), clock, repute::Randomness::host(|| 0.0)).unwrap();
    let l = pool.acquire("c").unwrap().unwrap();
    assert_eq!(l.expires_at, T + 5_000);
}

#[test]
fn a_clock_stepping_backwards_does_not_move_leases_back() {
    let mut h = Harness::new();
    h.reg("p");
    h.at(10_000.0);
    h.pool.stats().unwrap();
    h.at(5_000.0);
    let l = h.acquire("c").unwrap();
    assert_eq!(l.leased_at, T + 10_000);
    assert_eq!(l.expires_at, T + 40_000);
    // Renew at an even earlier reading: from the latest instant.
    h.at(0.0);
    let r = h.pool.renew(&l).unwrap().unwrap();
    assert_eq!(r.expires_at, T + 40_000);
}

#[test]
fn several_expiries_in_one_call_are_stamped_with_their_own_instants_in_order() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let la = h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
    h.at(5_000.0);
    let lb = h.pool.acquire_resource(Kind::Proxy, "b", "c").unwrap().unwrap();
    // Renew a twice: only its last expiry counts.
    h.at(10_000.0);
    h.pool.renew(&la).unwrap().unwrap(); // T + 40 s
    h.at(20_000.0);
    h.pool.renew(&la).unwrap().unwrap(); // T + 50 s
    h.events();
    h.at(100_000.0);
    let ev = h.events();
    let got: Vec<(EventType, u64, Option<u64>)> = ev.iter().map(|e| (e.ty, e.at, e.token)).collect();
    assert_eq!(
        got,
        vec![
            (EventType::LeaseExpired, T + 35_000, Some(lb.token)),
            (EventType::LeaseExpired, T + 50_000, Some(la.token)),
        ]
    );
}

#[test]
fn a_lease_outlives_its_resource_being_removed_and_registered_again() {
    // Report and release find a resource by the lease's own string without hashing; an equal
    // copy of the string, a re-registered value and a reused slot must all still be told apart.
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    let old = h.pool.acquire_resource(Kind::Proxy, "p", "x").unwrap().expect("free");
    let value = old.value.to_string();
    assert!(h.pool.deregister(Kind::Proxy, &value).unwrap());
    // The lease's string is still alive (the lease holds it) but names nothing registered.
    assert!(matches!(
        h.pool.report(old.kind, &old.value, "x", repute::Outcome::success()),
        Err(Error::UnknownResource(_))
    ));
    assert!(!h.pool.release(&old).unwrap());
    h.reg(&value); // reuses the freed slot
    let fresh = h.pool.acquire_resource(Kind::Proxy, &value, "x").unwrap().expect("free again");
    assert!(fresh.token > old.token);
    assert!(!h.pool.release(&old).unwrap(), "the old lease does not release the new one");
    assert_eq!(h.pool.renew(&old).unwrap(), None);
    // By the lease's string and by an equal copy alike.
    h.pool.report(fresh.kind, &fresh.value, "x", repute::Outcome::success()).unwrap();
    h.pool.report(Kind::Proxy, &value.clone(), "x", repute::Outcome::success()).unwrap();
    assert_eq!(h.cell(&value, "x").score, 10.0);
    // Same string, other kind: not this resource.
    assert!(matches!(
        h.pool.report(Kind::Account, &fresh.value, "x", repute::Outcome::success()),
        Err(Error::UnknownResource(_))
    ));
    assert!(h.pool.release(&fresh).unwrap());
}

#[test]
fn a_resource_id_names_its_resource_and_is_refused_once_it_is_deregistered() {
    // What hosts that name resources by number rely on (the WebAssembly facade).
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let ia = h.pool.resource_id(Kind::Proxy, "a").expect("registered");
    let ib = h.pool.resource_id(Kind::Proxy, "b").expect("registered");
    assert_ne!(ia, ib);
    assert_eq!(h.pool.resource_id(Kind::Account, "a"), None, "kind is part of the name");
    assert_eq!(h.pool.resource_id(Kind::Proxy, "c"), None);
    let lease = h.pool.acquire_resource(Kind::Proxy, "b", "x").unwrap().expect("free");
    assert_eq!(h.pool.resource_id(lease.kind, &lease.value), Some(ib), "the lease's own string");
    let (kind, value) = h.pool.resource_of(ib).expect("registered");
    assert_eq!((kind, &**value), (Kind::Proxy, "b"));
    // A grant carries its resource's id, and the calls by a lease's id and token do what the
    // string calls do: the context is the lease's own.
    assert_eq!(lease.id, Some(ib), "the grant gives the id");
    assert!(h.pool.report_lease(ib, lease.token, repute::Outcome::success()).unwrap());
    h.pool.report(Kind::Proxy, "a", "x", repute::Outcome::success()).unwrap();
    assert_eq!(h.cell("b", "x").consecutive_successes, 1);
    assert_eq!(h.cell("b", "x").score, h.cell("a", "x").score);
    let renewed = h.pool.renew_lease(ib, lease.token).unwrap().expect("held");
    assert_eq!((renewed.token, renewed.id, &*renewed.context), (lease.token, Some(ib), "x"));
    assert_eq!(h.pool.renew_lease(ib, lease.token + 1).unwrap(), None, "not the holder's token");
    assert!(h.pool.release_lease(ib, lease.token).unwrap());
    assert!(!h.pool.release_lease(ib, lease.token).unwrap());
    // A lease no longer held: a report by it is left to the call by name (nothing done).
    let before = h.pool.snapshot().unwrap();
    assert!(!h.pool.report_lease(ib, lease.token, repute::Outcome::success()).unwrap());
    assert_eq!(h.pool.finish_lease(ib, lease.token, repute::Outcome::success(), None).unwrap(), None);
    assert_eq!(h.pool.snapshot().unwrap(), before, "left to the call by name: nothing done");
    // Deregistering "a" ends its id, also once "c" takes its slot: no call by it reaches "c",
    // where a slot number alone would now name it.
    let held = h.pool.acquire_resource(Kind::Proxy, "a", "x").unwrap().expect("free");
    assert!(h.pool.deregister(Kind::Proxy, "a").unwrap());
    h.reg("c");
    let ic = h.pool.resource_id(Kind::Proxy, "c").expect("registered");
    assert_eq!(ic.slot, ia.slot, "the slot is reused");
    assert_ne!(ic, ia);
    let c = h.pool.acquire_resource(Kind::Proxy, "c", "x").unwrap().expect("free");
    assert_eq!(c.token, held.token + 1);
    let before = h.pool.snapshot().unwrap();
    assert!(matches!(h.pool.resource_of(ia), Err(Error::UnknownResource(_))));
    assert!(!h.pool.report_lease(ia, c.token, repute::Outcome::success()).unwrap());
    assert_eq!(h.pool.renew_lease(ia, c.token).unwrap(), None);
    assert!(!h.pool.release_lease(ia, c.token).unwrap());
    assert_eq!(h.pool.finish_lease(ia, c.token, repute::Outcome::success(), None).unwrap(), None);
    assert_eq!(h.pool.snapshot().unwrap(), before, "nothing reached c");
    assert_eq!(h.pool.resource_of(ic).map(|(_, v)| &**v).unwrap(), "c");
    assert_eq!(h.pool.resource_of(ib).map(|(_, v)| &**v).unwrap(), "b", "others keep theirs");
}

#[test]
fn a_step_by_the_grant_is_the_step_by_name() {
    // finish_lease of a held lease: the outcome on its cell, the lease released, the next one
    // leased, as finish by name does; a lease it has finished is left to the call by name,
    // which refuses a second finish.
    let mut h = Harness::new();
    h.reg("a");
    let lease = h.pool.acquire("x").unwrap().expect("free");
    let id = lease.id.expect("granted");
    let next = Next { context: Some("y"), groups: None, quiet: false };
    let got = h.pool.finish_lease(id, lease.token, repute::Outcome::success(), Some(&next)).unwrap();
    let again = got.expect("held").expect("a is free again");
    assert_eq!((&*again.context, again.id), ("y", Some(id)));
    assert_eq!(h.cell("a", "x").consecutive_successes, 1, "reported on the lease's own cell");
    assert_eq!(h.pool.finish_lease(id, lease.token, repute::Outcome::success(), None).unwrap(), None);
    let refused = h.pool.finish(&lease, repute::Outcome::success(), None).unwrap_err();
    assert_eq!(refused.code(), "LEASE_FINISHED");
}

/// SPEC §5: every call reads the clock (`now = max(now, lastNow)`), also a renew or release of a
/// lease whose resource is not registered any more — which has nothing to renew. The JS `Pool`
/// once answered those itself without reaching the engine, so that reading was lost: after the
/// host clock stepped back, the next lease was dated up to a minute too early (a reference-model
/// comparison found it).
#[test]
fn renew_and_release_of_a_deregistered_resource_still_read_the_clock() {
    for release in [false, true] {
        let mut h = Harness::new();
        h.reg("d");
        h.reg("e");
        let lease = h.pool.acquire_resource(Kind::Proxy, "d", "x").unwrap().expect("free");
        assert!(h.pool.deregister(Kind::Proxy, "d").unwrap());
        let id = lease.id.expect("granted");
        h.clock.advance(100_000.0);
        if release {
            assert!(!h.pool.release_lease(id, lease.token).unwrap());
        } else {
            assert_eq!(h.pool.renew_lease(id, lease.token).unwrap(), None);
        }
        h.clock.advance(-40_000.0);
        let next = h.pool.acquire("x").unwrap().expect("e is free");
        assert_eq!(next.leased_at, T0 as u64 + 100_000, "the clock did not go back (release: {release})");
    }
}
