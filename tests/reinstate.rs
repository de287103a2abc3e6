//! `Pool::reinstate` (the inverse of a deregistration a host could not store): the resource's
//! snapshot part taken just before `deregister`, put back, gives the same registration, block
//! and cells — the snapshot's sections are the same bytes, every index checks out — for
//! grouped, capped, blocked, cooling, paced and recovering resources; its leases stay ended (no
//! token handed out twice, the fencing mark never goes back); it is one new change; a part
//! that is not valid, a resource already back, and a full pool are refused or no-ops.

mod common;

use common::{ClockedPool, ManualClock, T0};
use repute::{BlockSpec, Config, EventType, FailureType, Kind, Outcome, Randomness, Registration};

/// The snapshot without its head (counters, clock, config): the resources, blocks and cells.
fn body(pool: &mut ClockedPool) -> String {
    let s = pool.snapshot().unwrap();
    s[s.find(",\"registered\":").unwrap()..].to_string()
}

fn busy_pool() -> (ManualClock, ClockedPool, Vec<String>) {
    let clock = ManualClock::new(T0);
    let config = Config { min_gap_ms: 2_000, cool_after: 2, max_cooling_percent: 50, ..Config::default() };
    let mut pool = ClockedPool::new(config, clock.clone(), Randomness::seeded(11)).unwrap();
    let names: Vec<String> = (0..24).map(|i| format!("proxy-{i}.example:8080")).collect();
    for (i, n) in names.iter().enumerate() {
        let group = if i % 3 == 0 { Some(Some("eu")) } else { None };
        let max_leases = if i % 5 == 0 { Some(3) } else { None };
        pool.register_with(Kind::Proxy, n, Registration { group, max_leases }).unwrap();
    }
    for step in 0..300u32 {
        clock.set(T0 + f64::from(step) * 700.0);
        let n = &names[(step as usize * 7) % names.len()];
        let context = ["checkout-us", "search-eu", "ä-utf8"][(step % 3) as usize];
        let outcome = if step % 4 == 0 {
            Outcome::Failure { failure: FailureType::ALL[(step % 5) as usize], latency_ms: Some(900.0) }
        } else {
            Outcome::Success { latency_ms: Some(12.5) }
        };
        pool.report(Kind::Proxy, n, context, outcome).unwrap();
        if step % 61 == 0 {
            pool.block(Kind::Proxy, n, BlockSpec::Seconds(600.0)).unwrap();
        }
    }
    pool.block(Kind::Proxy, &names[5], BlockSpec::Permanent).unwrap();
    (clock, pool, names)
}

#[test]
fn a_reinstated_resource_is_as_it_was() {
    let (clock, mut pool, names) = busy_pool();
    for (i, n) in names.iter().enumerate() {
        clock.advance(50.0);
        let before = body(&mut pool);
        let part = pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap();
        assert!(pool.deregister(Kind::Proxy, n).unwrap());
        assert_ne!(body(&mut pool), before);
        if i % 2 == 0 {
            let _ = pool.acquire("search-eu").unwrap(); // the pool goes on meanwhile
        }
        let revision = pool.stats().unwrap().revision;
        pool.drain_events().unwrap();
        assert!(pool.reinstate(clock.get(), &part).unwrap(), "{n}");
        let events = pool.drain_events().unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].ty, EventType::ResourceRegistered);
        assert_eq!(pool.stats().unwrap().revision, revision + 1, "one new change");
        pool.check_invariants().unwrap();
        if i % 2 == 1 {
            assert_eq!(body(&mut pool), before, "{n}: the same bytes");
        }
        assert_eq!(pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap(), part, "{n}");
    }
    // It serves as before: every context still leases, and the indexes still check out after.
    for _ in 0..50 {
        clock.advance(900.0);
        for context in ["checkout-us", "search-eu", "ä-utf8"] {
            if let Some(l) = pool.acquire(context).unwrap() {
                pool.finish(&l, Outcome::Success { latency_ms: None }, None).unwrap();
            }
        }
    }
    pool.check_invariants().unwrap();
}

#[test]
fn its_leases_stay_ended_and_no_token_comes_twice() {
    let (clock, mut pool, names) = busy_pool();
    clock.advance(3_600_000.0); // blocks over, pacing over
    let n = &names[1];
    pool.unblock(Kind::Proxy, n).ok();
    let lease = pool.acquire_resource(Kind::Proxy, n, "search-eu").unwrap().expect("a lease");
    let high = pool.stats().unwrap().fencing_high_water;
    let part = pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap();
    assert!(pool.deregister(Kind::Proxy, n).unwrap());
    assert!(pool.reinstate(clock.get(), &part).unwrap());
    assert_eq!(pool.stats().unwrap().fencing_high_water, high, "the mark never goes back");
    assert!(!pool.release(&lease).unwrap(), "the lease ended with the deregistration");
    assert!(!pool.release_lease(lease.id.unwrap(), lease.token).unwrap());
    assert!(pool.renew(&lease).is_err() || pool.renew(&lease).unwrap().is_none());
    let again = pool.acquire_resource(Kind::Proxy, n, "search-eu").unwrap().expect("free again");
    assert!(again.token > lease.token, "a new token");
    pool.check_invariants().unwrap();
}

#[test]
fn a_timed_block_that_ended_meanwhile_stays_ended() {
    let (clock, mut pool, names) = busy_pool();
    clock.advance(1_000.0);
    let n = &names[3];
    pool.block(Kind::Proxy, n, BlockSpec::Seconds(2.0)).unwrap();
    let part = pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap();
    assert!(part.split('\n').nth(1).unwrap().contains("until"));
    pool.deregister(Kind::Proxy, n).unwrap();
    clock.advance(5_000.0);
    assert!(pool.reinstate(clock.get(), &part).unwrap());
    let back = pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap();
    assert_eq!(back.split('\n').nth(1).unwrap(), "", "no block");
    pool.check_invariants().unwrap();
}

#[test]
fn refusals_change_nothing() {
    let (clock, mut pool, names) = busy_pool();
    let n = &names[2];
    let part = pool.snapshot_part(Some((Kind::Proxy, n))).unwrap().unwrap();
    let before = pool.snapshot().unwrap();
    assert!(!pool.reinstate(clock.get(), &part).unwrap(), "registered already: nothing done");
    assert_eq!(pool.snapshot().unwrap(), before);
    for bad in [
        "",
        "{}",
        "x\n\n",
        &part.replace("\n", " "),
        &part.replace("\"score\":", "\"score\":1e9,\"x\":"),
        &format!("{0},{0}\n\n", part.split('\n').next().unwrap()),
    ] {
        let e = pool.reinstate(clock.get(), bad).unwrap_err();
        assert_eq!(e.code(), "INVALID_SNAPSHOT", "{bad:?}");
    }
    pool.deregister(Kind::Proxy, n).unwrap();
    pool.set_config(&repute::ConfigPatch { max_resources: Some(24.0), ..Default::default() }).unwrap();
    pool.register(Kind::Proxy, "another:1").unwrap();
    let before = pool.snapshot().unwrap();
    assert_eq!(pool.reinstate(clock.get(), &part).unwrap_err().code(), "CAPACITY_EXCEEDED");
    assert_eq!(pool.snapshot().unwrap(), before);
}
