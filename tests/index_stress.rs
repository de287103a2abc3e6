//! The index under sizes the model test does not reach: block splits and removals in the
//! resource order and in context sequences (thousands of resources registered, reported and
//! deregistered in scrambled order), and an availability log that overflows so a lagging
//! context must rebuild. After each phase the indexes must equal a from-scratch recomputation,
//! and a pool restored from a snapshot (built canonically, in one pass) must pick exactly what
//! the live pool picks for the same draws.

mod common;

use common::{ClockedPool, ManualClock};
use std::cell::RefCell;
use std::rc::Rc;

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;
use repute::{Config, ConfigPatch, FailureType, Filter, Kind, Outcome, Randomness, ViewState};

const T0: f64 = 1_700_000_000_000.0;

fn config() -> Config {
    Config::from_patch(&ConfigPatch::from_json(r#"{"maxResources": 100000, "maxCells": 1000000}"#).unwrap())
        .unwrap()
}

fn scrambled(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

fn value(i: u64) -> String {
    format!("res-{i:05}")
}

/// A pool whose random source can be re-seeded from outside.
fn pool_with_reseedable_rng(clock: &ManualClock) -> (ClockedPool, Rc<RefCell<Xoshiro256StarStar>>) {
    let rng = Rc::new(RefCell::new(Xoshiro256StarStar::seed_from_u64(11)));
    let source = Rc::clone(&rng);
    let pool =
        ClockedPool::new(config(), clock.clone(), Randomness::host(move || source.borrow_mut().random()))
            .unwrap();
    (pool, rng)
}

/// The spec's pick, computed naively from the dashboard view: candidates in canonical order
/// (the view's order), weights `(score − min) + 1`, first running sum above `u × total`.
fn spec_pick(pool: &mut ClockedPool, ctx: &str, u: f64) -> Option<String> {
    let now = pool.stats().unwrap().now;
    let views = pool.resources(&Filter::default()).unwrap();
    let cands: Vec<(String, f64)> = views
        .iter()
        .filter(|v| v.blocked.is_none() && v.lease.is_none())
        .filter_map(|v| match v.cells.iter().find(|c| &*c.context == ctx) {
            None => Some((v.value.to_string(), 0.0)),
            Some(c) if c.state == ViewState::Healthy || c.state == ViewState::Recovering => {
                Some((v.value.to_string(), c.score))
            }
            Some(c) if c.state == ViewState::Cooling && c.cooldown_until.unwrap() <= now => {
                Some((v.value.to_string(), c.score))
            }
            _ => None,
        })
        .collect();
    let min = cands.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let total: f64 = cands.iter().map(|c| (c.1 - min) + 1.0).sum();
    let target = if cands.len() > 1 { u * total } else { 0.0 };
    let mut running = 0.0;
    for c in &cands {
        running += (c.1 - min) + 1.0;
        if running > target {
            return Some(c.0.clone());
        }
    }
    cands.last().map(|c| c.0.clone())
}

/// Acquires (and releases) `n` times round the contexts on the live pool and on a pool restored
/// from its snapshot, both drawing the same numbers, and demands the same leases, equal to the
/// spec's pick computed naively.
fn live_and_restored_pick_alike(
    pool: &mut ClockedPool,
    rng: &RefCell<Xoshiro256StarStar>,
    clock: &ManualClock,
    contexts: &[&str],
    n: usize,
) {
    pool.check_invariants().unwrap();
    let snap = pool.snapshot().unwrap();
    let mut restored =
        ClockedPool::restore(&snap, None, clock.clone(), Xoshiro256StarStar::seed_from_u64(5)).unwrap();
    restored.check_invariants().unwrap();
    *rng.borrow_mut() = Xoshiro256StarStar::seed_from_u64(5);
    for i in 0..n {
        let ctx = contexts[i % contexts.len()];
        let u = rng.borrow().clone().random::<f64>();
        let want = spec_pick(pool, ctx, u);
        let a = pool.acquire(ctx).unwrap();
        let b = restored.acquire(ctx).unwrap();
        assert_eq!(a.as_ref().map(|l| l.value.to_string()), want, "live pick {i} in {ctx}");
        // Ids are not durable (a restore numbers slots afresh): the leases match but for them.
        let unnumbered = |l: &Option<repute::Lease>| l.clone().map(|l| repute::Lease { id: None, ..l });
        assert_eq!(unnumbered(&a), unnumbered(&b), "restored pick {i} in {ctx}");
        if let (Some(a), Some(b)) = (a, b) {
            pool.release(&a).unwrap();
            restored.release(&b).unwrap();
        }
    }
    pool.check_invariants().unwrap();
}

#[test]
fn splits_removals_and_restores_keep_the_index_exact() {
    let clock = ManualClock::new(T0);
    let (mut pool, rng) = pool_with_reseedable_rng(&clock);
    let contexts = ["alpha", "beta", "gamma"];
    for i in scrambled(3000, 1) {
        pool.register(Kind::Proxy, &value(i)).unwrap();
    }
    pool.check_invariants().unwrap();
    // Cells arrive in scrambled order, most resources in "alpha", fewer elsewhere.
    for (n, i) in scrambled(3000, 2).into_iter().enumerate() {
        clock.advance(1.0);
        let ctx = contexts[n % 3];
        let o = if i % 7 == 0 { Outcome::failure(FailureType::Timeout) } else { Outcome::success() };
        pool.report(Kind::Proxy, &value(i), "alpha", o).unwrap();
        if n % 2 == 0 {
            pool.report(Kind::Proxy, &value(i), ctx, Outcome::success()).unwrap();
        }
    }
    pool.check_invariants().unwrap();
    live_and_restored_pick_alike(&mut pool, &rng, &clock, &contexts, 300);
    // Remove a third, in scrambled order (blocks empty and leave the sequence).
    for i in scrambled(3000, 3).into_iter().take(1000) {
        assert!(pool.deregister(Kind::Proxy, &value(i)).unwrap());
    }
    pool.check_invariants().unwrap();
    // Hold some leases and blocks so gaps and flags are exercised, then compare again.
    let mut held = Vec::new();
    for _ in 0..200 {
        held.extend(pool.acquire("beta").unwrap());
    }
    for i in (0..3000).step_by(37) {
        let _ = pool.block(Kind::Proxy, &value(i), repute::BlockSpec::Seconds(60.0));
    }
    pool.check_invariants().unwrap();
    for l in &held {
        pool.release(l).unwrap();
    }
    pool.check_invariants().unwrap();
    live_and_restored_pick_alike(&mut pool, &rng, &clock, &contexts, 300);
}

#[test]
fn a_context_left_behind_by_the_log_rebuilds_its_index() {
    let clock = ManualClock::new(T0);
    let mut pool = ClockedPool::with_seed(config(), clock.clone(), 3).unwrap();
    for i in 0..50 {
        pool.register(Kind::Proxy, &value(i)).unwrap();
    }
    // "idle" gets cells for half of the resources, then is not used for a long time.
    for i in (0..50).step_by(2) {
        pool.report(Kind::Proxy, &value(i), "idle", Outcome::success()).unwrap();
    }
    let _ = pool.acquire("idle").unwrap().map(|l| pool.release(&l));
    // 50 000 acquire/release pairs elsewhere: 100 000 availability changes, more than the log
    // keeps, some of them left standing (leases held across the boundary, all within the
    // 30 s lease TTL: the clock moves 0.5 ms per pair).
    let mut held = Vec::new();
    for n in 0..50_000u32 {
        clock.advance(0.5);
        let l = pool.acquire("busy").unwrap().expect("a candidate");
        if n % 9_999 == 0 {
            held.push(l);
        } else {
            pool.release(&l).unwrap();
        }
        if n % 1000 == 0 {
            pool.drain_events().unwrap();
        }
    }
    assert_eq!(held.len(), 6);
    // The idle context catches up (by rebuilding) and is exact.
    let lease = pool.acquire("idle").unwrap().expect("a candidate");
    assert!(!held.iter().any(|h| h.value == lease.value), "a held resource was leased again");
    pool.check_invariants().unwrap();
    let stats = pool.stats().unwrap();
    assert_eq!(stats.leased, 7);
    assert_eq!(stats.available, 43);
}
