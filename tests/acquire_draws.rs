//! `acquire` decides whether it needs a random draw before it applies the expiries due at its
//! clock reading (so a bad draw fails a call that changed nothing). Differential property:
//! two pools run the same random history, except that before each acquire the second one makes
//! a read call at the same instant (which applies the due expiries first). Both must consume
//! the same draws, grant the same leases and end with the same events and snapshot. Histories
//! are small and fast-moving (short leases, blocks and cooldowns) so that acquires often land
//! right when leases, blocks and half-open cooldowns end, with few candidates.

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::{ClockedPool, ManualClock, T0};
use proptest::prelude::*;
use rand::{Rng, SeedableRng, TryRng};
use rand_xoshiro::Xoshiro256StarStar;
use repute::{BlockSpec, Config, ConfigPatch, FailureType, Kind, Outcome};
use std::convert::Infallible;

#[derive(Debug, Clone)]
enum Op {
    Register(u8),
    Acquire(u8),
    AcquireResource(u8, u8),
    Release(u8),
    Renew(u8),
    Fail(u8, u8, u8),
    Succeed(u8, u8),
    Block(u8, u16),
    Unblock(u8),
    Advance(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0u8..4).prop_map(Op::Register),
        4 => (0u8..3).prop_map(Op::Acquire),
        1 => (0u8..4, 0u8..3).prop_map(|(r, c)| Op::AcquireResource(r, c)),
        2 => (0u8..8).prop_map(Op::Release),
        1 => (0u8..8).prop_map(Op::Renew),
        2 => (0u8..4, 0u8..3, 0u8..5).prop_map(|(r, c, f)| Op::Fail(r, c, f)),
        1 => (0u8..4, 0u8..3).prop_map(|(r, c)| Op::Succeed(r, c)),
        1 => (0u8..4, 1u16..8).prop_map(|(r, s)| Op::Block(r, s)),
        1 => (0u8..4).prop_map(Op::Unblock),
        // Whole quarter seconds, like every duration of the config: ends often fall exactly on
        // an acquire's instant.
        3 => (0u16..16).prop_map(|q| Op::Advance(q * 250)),
    ]
}

/// A user's own `rand` generator: the seeded xoshiro256**, counting the 64-bit words drawn (an
/// acquire's draw is one word).
struct Counting(Xoshiro256StarStar, Rc<Cell<u32>>);

impl TryRng for Counting {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        unreachable!("an acquire's draw is one 64-bit word")
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.1.set(self.1.get() + 1);
        Ok(self.0.next_u64())
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Infallible> {
        unreachable!("an acquire's draw is one 64-bit word")
    }
}

struct Run {
    pool: ClockedPool,
    clock: ManualClock,
    draws: Rc<Cell<u32>>,
    held: Vec<repute::Lease>,
    log: Vec<String>,
}

fn run(ops: &[Op], read_before_acquire: bool) -> Run {
    let patch = r#"{"leaseTtlMs":3000,"coolAfter":1,"recoverAfter":1,"halfOpenCauses":["TIMEOUT","SLOW","BLOCKED"],
        "cooldownBaseMs":{"BLOCKED":1500,"TLS_HANDSHAKE":2500,"CONNECTION_RESET":1000,"TIMEOUT":700,"SLOW":300}}"#;
    let cfg = Config::from_patch(&ConfigPatch::from_json(patch).unwrap()).unwrap();
    let clock = ManualClock::new(T0);
    let draws = Rc::new(Cell::new(0));
    let pool = ClockedPool::new(
        cfg,
        clock.clone(),
        Counting(Xoshiro256StarStar::seed_from_u64(11), Rc::clone(&draws)),
    )
    .unwrap();
    let mut r = Run { pool, clock, draws, held: Vec::new(), log: Vec::new() };
    let value = |i: u8| format!("r{i}");
    let ctx = |i: u8| ["a", "b", "c"][i as usize].to_owned();
    for op in ops {
        let p = &mut r.pool;
        match *op {
            Op::Register(i) => {
                p.register(Kind::Proxy, &value(i)).unwrap();
            }
            Op::Acquire(c) => {
                if read_before_acquire {
                    p.stats().unwrap();
                }
                let before = r.draws.get();
                let lease = p.acquire(&ctx(c)).unwrap();
                r.log.push(format!(
                    "{:?} draws {}",
                    lease.as_ref().map(|l| (&l.value, l.token)),
                    r.draws.get() - before
                ));
                r.held.extend(lease);
            }
            Op::AcquireResource(i, c) => {
                if let Ok(Some(l)) = p.acquire_resource(Kind::Proxy, &value(i), &ctx(c)) {
                    r.held.push(l);
                }
            }
            // Any held lease, not only the newest: older ones leave stale expiry entries.
            Op::Release(i) if !r.held.is_empty() => {
                let l = r.held.remove(i as usize % r.held.len());
                p.release(&l).unwrap();
            }
            Op::Renew(i) if !r.held.is_empty() => {
                let at = i as usize % r.held.len();
                if let Some(l) = p.renew(&r.held[at]).unwrap() {
                    r.held[at] = l;
                }
            }
            Op::Release(_) | Op::Renew(_) => {}
            Op::Fail(i, c, f) => {
                let _ =
                    p.report(Kind::Proxy, &value(i), &ctx(c), Outcome::failure(FailureType::ALL[f as usize]));
            }
            Op::Succeed(i, c) => {
                let _ = p.report(Kind::Proxy, &value(i), &ctx(c), Outcome::success());
            }
            Op::Block(i, s) => {
                let _ = p.block(Kind::Proxy, &value(i), BlockSpec::Seconds(f64::from(s) / 2.0));
            }
            Op::Unblock(i) => {
                let _ = p.unblock(Kind::Proxy, &value(i));
            }
            Op::Advance(ms) => r.clock.advance(f64::from(ms)),
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn acquire_draws_as_if_the_expiries_were_applied_first(ops in prop::collection::vec(op(), 1..80)) {
        let mut direct = run(&ops, false);
        let mut read_first = run(&ops, true);
        prop_assert_eq!(&direct.log, &read_first.log, "same leases, same draws per acquire");
        prop_assert_eq!(direct.draws.get(), read_first.draws.get());
        let events = |r: &mut Run| r.pool.drain_events().unwrap();
        prop_assert_eq!(events(&mut direct), events(&mut read_first));
        // The read calls may add revision steps (one for the expiries, one for the acquire);
        // everything else in the snapshots is equal.
        let content = |r: &mut Run| {
            let mut v: serde_json::Value = serde_json::from_str(&r.pool.snapshot().unwrap()).unwrap();
            v.as_object_mut().unwrap().remove("revision");
            v
        };
        prop_assert_eq!(content(&mut direct), content(&mut read_first));
    }
}
