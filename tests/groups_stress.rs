//! Groups, pacing and the cooling cap under random histories: after every call the indexes
//! (the resource order, every group's order, every context's index and each of its group
//! sub-indexes, the cooling counts) must equal a from-scratch recomputation, every grouped pick
//! must be the spec's pick computed naively from the dashboard view, and a pool restored from
//! a snapshot must pick exactly what the live one picks.

mod common;

use common::{ClockedPool, ManualClock};
use std::cell::RefCell;
use std::rc::Rc;

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;
use repute::{BlockSpec, Config, ConfigPatch, FailureType, Filter, Kind, Outcome, Randomness, ViewState};

const T0: f64 = 1_700_000_000_000.0;
const GROUPS: [Option<&str>; 4] = [Some("dc"), Some("isp"), Some("res"), None];
const CONTEXTS: [&str; 3] = ["alpha", "beta", "gamma"];

fn config() -> Config {
    Config::from_patch(
        &ConfigPatch::from_json(r#"{"maxResources": 100000, "maxCells": 1000000, "leaseTtlMs": 3000}"#)
            .unwrap(),
    )
    .unwrap()
}

/// The spec's grouped pick from the views: the first listed group with a candidate that is not
/// held, else the first with any; weighted by `(score − min) + floor` in canonical order.
fn spec_pick(pool: &mut ClockedPool, ctx: &str, groups: &[Option<&str>], u: f64) -> Option<String> {
    let now = pool.stats().unwrap().now;
    let views = pool.resources(&Filter::default()).unwrap();
    let candidates = |g: Option<&str>| -> Vec<(String, f64, bool)> {
        views
            .iter()
            .filter(|v| v.group.as_deref() == g && v.blocked.is_none() && v.lease.is_none())
            .filter_map(|v| match v.cells.iter().find(|c| &*c.context == ctx) {
                None => Some((v.value.to_string(), 0.0, false)),
                Some(c) if c.paced_until.is_some() => None,
                Some(c) if c.state == ViewState::Healthy || c.state == ViewState::Recovering => {
                    Some((v.value.to_string(), c.score, c.held))
                }
                Some(c) if c.state == ViewState::Cooling && c.cooldown_until.unwrap() <= now => {
                    Some((v.value.to_string(), c.score, c.held))
                }
                _ => None,
            })
            .collect()
    };
    let lists: Vec<_> = groups.iter().map(|&g| candidates(g)).collect();
    let cands =
        lists.iter().find(|l| l.iter().any(|c| !c.2)).or_else(|| lists.iter().find(|l| !l.is_empty()))?;
    let min = cands.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let total: f64 = cands.iter().map(|c| (c.1 - min) + 1.0).sum();
    let target = if cands.len() > 1 { u * total } else { 0.0 };
    let mut running = 0.0;
    for c in cands {
        running += (c.1 - min) + 1.0;
        if running > target {
            return Some(c.0.clone());
        }
    }
    cands.last().map(|c| c.0.clone())
}

fn history(seed: u64, steps: usize, n: u64) {
    let clock = ManualClock::new(T0);
    let rng = Rc::new(RefCell::new(Xoshiro256StarStar::seed_from_u64(seed)));
    let source = Rc::clone(&rng);
    let mut pool =
        ClockedPool::new(config(), clock.clone(), Randomness::host(move || source.borrow_mut().random()))
            .unwrap();
    let mut ops = Xoshiro256StarStar::seed_from_u64(seed ^ 0x5eed);
    let mut leases = Vec::new();
    let value = |i: u64| format!("res-{i:03}");
    for step in 0..steps {
        let r = ops.next_u64();
        let i = (r >> 8) % n;
        let g = GROUPS[((r >> 20) % 4) as usize];
        let ctx = CONTEXTS[((r >> 24) % 3) as usize];
        // Mostly milliseconds; now and then past a TIMEOUT cooldown, so trials and recoveries
        // happen too.
        clock.advance(if (r >> 58).is_multiple_of(64) { 61_000.0 } else { ((r >> 28) % 40) as f64 });
        match r % 16 {
            0 | 1 => {
                pool.register_in(Kind::Proxy, &value(i), Some(g)).unwrap();
            }
            2 => {
                pool.deregister(Kind::Proxy, &value(i)).unwrap();
            }
            3..=6 => {
                let o = if (r >> 32).is_multiple_of(3) {
                    Outcome::success()
                } else {
                    Outcome::failure([FailureType::Timeout, FailureType::Blocked][((r >> 34) % 2) as usize])
                };
                let _ = pool.report(Kind::Proxy, &value(i), ctx, o);
            }
            7..=10 => {
                let k = 1 + ((r >> 36) % 3) as usize;
                let start = ((r >> 40) % 4) as usize;
                let list: Vec<Option<&str>> = (0..k).map(|j| GROUPS[(start + j) % 4]).collect();
                let u = rng.borrow().clone().random::<f64>();
                let want = spec_pick(&mut pool, ctx, &list, u);
                let got = pool.acquire_in(ctx, &list).unwrap();
                assert_eq!(
                    got.as_ref().map(|l| l.value.to_string()),
                    want,
                    "step {step}: pick in {ctx} over {list:?}"
                );
                match got {
                    Some(l) if (r >> 50).is_multiple_of(3) => leases.push(l),
                    Some(l) => {
                        // Report on it first, as a worker does, in this or another context.
                        let o = if (r >> 52).is_multiple_of(4) {
                            Outcome::failure(FailureType::Slow)
                        } else {
                            Outcome::success()
                        };
                        pool.report(l.kind, &l.value, CONTEXTS[((r >> 54) % 3) as usize], o).unwrap();
                        pool.release(&l).unwrap();
                    }
                    None => {}
                }
            }
            11 => {
                while let Some(l) = leases.pop() {
                    let _ = pool.release(&l);
                }
            }
            12 => {
                let _ = pool.block(Kind::Proxy, &value(i), BlockSpec::Seconds(0.5));
            }
            13 => {
                let _ = pool.unblock(Kind::Proxy, &value(i));
            }
            14 if (r >> 56).is_multiple_of(4) => {
                let gap = (r >> 44) % 3 * 25;
                let cap = 1 + (r >> 48) % 100;
                let json = format!(
                    r#"{{"minGapMs": {gap}, "maxCoolingPercent": {cap}, "minGapMsByContext": {{"beta": 7}}}}"#
                );
                pool.set_config(&ConfigPatch::from_json(&json).unwrap()).unwrap();
            }
            _ => {
                let _ = pool.acquire(ctx).unwrap().map(|l| leases.push(l));
            }
        }
        if std::env::var("STRESS_STATS").is_ok() && step == steps - 1 {
            let st = pool.stats().unwrap();
            let cells: Vec<_> =
                pool.resources(&Filter::default()).unwrap().into_iter().flat_map(|v| v.cells).collect();
            let held = cells.iter().filter(|c| c.held).count();
            let paced = cells.iter().filter(|c| c.paced_until.is_some()).count();
            eprintln!(
                "seed {seed}: {} resources, {} cells {:?}, {} leased, {held} held, {paced} paced",
                st.registered, st.cells, st.cells_by_state, st.leased
            );
        }
        if let Err(e) = pool.check_invariants() {
            panic!("seed {seed} step {step} (op {}): {e}", r % 16);
        }
        if step % 97 == 0 {
            let snap = pool.snapshot().unwrap();
            let mut restored =
                ClockedPool::restore(&snap, None, clock.clone(), Xoshiro256StarStar::seed_from_u64(1))
                    .unwrap();
            restored.check_invariants().unwrap();
            assert_eq!(restored.snapshot().unwrap(), snap, "seed {seed} step {step}: snapshot round trip");
            let mut live =
                ClockedPool::restore(&snap, None, clock.clone(), Xoshiro256StarStar::seed_from_u64(1))
                    .unwrap();
            for (j, c) in CONTEXTS.iter().enumerate() {
                let list = [GROUPS[j], GROUPS[(j + 1) % 4]];
                assert_eq!(live.acquire_in(c, &list).unwrap(), restored.acquire_in(c, &list).unwrap());
            }
        }
    }
}

#[test]
fn random_histories_keep_every_group_index_exact() {
    for seed in 1..=12 {
        history(seed, 1500, 60);
    }
}

#[test]
fn a_larger_pool_splits_group_orders_and_sub_indexes() {
    history(99, 4000, 600);
}
