//! Snapshots keep fractional state exactly: random histories under configs with decimal
//! rewards, penalties and floors (0.1, 2.35, … — values no binary fraction equals) and
//! decimal latencies. snapshot → restore → snapshot must be byte-identical, every score must
//! come back bit for bit, and the restored pool must go on exactly as the original does.
//! (Issue 13: with `successReward` 0.1, ten successes gave 0.9999999999999999, restored as 1;
//! every earlier round-trip test used binary-exact values.)

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::{ClockedPool, ManualClock, Rng, T0};
use proptest::prelude::*;
use repute::{BlockSpec, Config, ConfigPatch, FailureType, Filter, Kind, Outcome};

/// A decimal with up to three fractional digits in [lo, hi], or any double there.
fn decimal(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![((lo * 1000.0) as u64..=(hi * 1000.0) as u64).prop_map(|n| n as f64 / 1000.0), lo..=hi,]
}

/// A config patch as JSON text (read through the exact number reader, as a host sends it).
fn config_text() -> impl Strategy<Value = String> {
    (decimal(0.0, 200.0), prop::collection::vec(decimal(0.0, 200.0), 5), decimal(0.001, 50.0), 1u32..6)
        .prop_map(|(reward, pens, floor, window)| {
            let pens: Vec<String> =
                FailureType::ALL.iter().zip(&pens).map(|(t, p)| format!("\"{}\":{p}", t.as_str())).collect();
            format!(
                r#"{{"successReward":{reward},"penalties":{{{}}},"explorationFloor":{floor},"windowSize":{window}}}"#,
                pens.join(",")
            )
        })
}

/// A random source both pools can share from a given state: a restored pool draws what the
/// original would have drawn.
fn draws(state: &Rc<Cell<u64>>) -> repute::Randomness {
    let s = Rc::clone(state);
    repute::Randomness::host(move || {
        let mut r = Rng(s.get());
        let u = r.unit();
        s.set(r.0);
        u
    })
}

/// One random call; errors (a block on an unknown resource, …) are part of the history.
fn step(pool: &mut ClockedPool, clock: &ManualClock, rng: &mut Rng) {
    let names = ["a", "b:c@d", "é", "Z"];
    let ctxs = ["x", "y", "😀"];
    let kind = [Kind::Proxy, Kind::Account][rng.below(2) as usize];
    let v = names[rng.below(4) as usize];
    let c = ctxs[rng.below(3) as usize];
    let latency = match rng.below(3) {
        0 => None,
        1 => Some(rng.below(100_000) as f64 / 10.0),
        _ => Some(rng.unit() * 5000.0),
    };
    match rng.below(12) {
        0 | 1 => drop(pool.register(kind, v)),
        2..=5 => drop(pool.report(kind, v, c, Outcome::Success { latency_ms: latency })),
        6 | 7 => {
            let failure = FailureType::ALL[rng.below(5) as usize];
            drop(pool.report(kind, v, c, Outcome::Failure { failure, latency_ms: latency }))
        }
        8 => drop(pool.block(kind, v, BlockSpec::Seconds(rng.below(3000) as f64 / 10.0 + 0.1))),
        9 => {
            if let Ok(Some(lease)) = pool.acquire(c)
                && rng.below(2) == 0
            {
                pool.release(&lease).unwrap();
            }
        }
        10 => drop(pool.deregister(kind, v)),
        _ => clock.advance(rng.below(200_000) as f64),
    }
}

fn scores(pool: &mut ClockedPool) -> Vec<u64> {
    let views = pool.resources(&Filter::default()).unwrap();
    views.iter().flat_map(|r| r.cells.iter().map(|c| c.score.to_bits())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn fractional_histories_round_trip_exactly(cfg in config_text(), seed in any::<u64>(), len in 1usize..120) {
        let config = Config::from_patch(&ConfigPatch::from_json(&cfg).unwrap()).unwrap();
        let clock = ManualClock::new(T0);
        let state = Rc::new(Cell::new(seed | 1));
        let mut pool = ClockedPool::new(config, clock.clone(), draws(&state)).unwrap();
        let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1);
        for _ in 0..len {
            step(&mut pool, &clock, &mut rng);
        }
        // Leases are not in snapshots: end them, so that both pools hold the same state.
        for lease in pool.resources(&Filter::default()).unwrap().into_iter().filter_map(|r| r.lease) {
            pool.release(&lease).unwrap();
        }
        let json = pool.snapshot().unwrap();
        let copy = Rc::new(Cell::new(state.get()));
        let clock2 = ManualClock::new(clock.get());
        let mut restored = ClockedPool::restore(&json, None, clock2.clone(), draws(&copy)).unwrap();
        prop_assert_eq!(restored.snapshot().unwrap(), json.clone(), "snapshot → restore → snapshot");
        prop_assert_eq!(scores(&mut restored), scores(&mut pool), "scores bit for bit");
        // The same further calls and draws: the same state.
        let (mut r1, mut r2) = (Rng(seed.rotate_left(17) | 1), Rng(seed.rotate_left(17) | 1));
        for _ in 0..40 {
            step(&mut pool, &clock, &mut r1);
            step(&mut restored, &clock2, &mut r2);
        }
        prop_assert_eq!(restored.snapshot().unwrap(), pool.snapshot().unwrap(), "after more calls");
    }
}
