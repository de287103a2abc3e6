//! Shared test harness: a pool on a manual clock with scripted random draws, plus shorthands.
//! Each test crate includes it with `mod common;` and may use only part of it. The engine takes
//! each call's clock reading as an argument; the test clocks (`clock.rs`) and `ClockedPool`
//! (`clocked.rs`), which passes a clock's reading to every call, live here.
#![allow(dead_code)]

mod clock;
mod clocked;

pub use clock::ManualClock;
pub use clocked::ClockedPool;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use repute::{
    BlockSpec, Config, ConfigPatch, FailureType, Filter, Kind, Lease, Outcome, PoolEvent, ResourceView,
};

pub const T0: f64 = 1_700_000_000_000.0;

/// Random draws handed out in order; running out panics (a test must script every draw).
#[derive(Clone, Default)]
pub struct Draws(Rc<RefCell<VecDeque<f64>>>);

impl Draws {
    pub fn push(&self, u: f64) {
        self.0.borrow_mut().push_back(u);
    }
    pub fn remaining(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn source(&self) -> repute::Randomness {
        let q = Rc::clone(&self.0);
        repute::Randomness::host(move || {
            q.borrow_mut().pop_front().expect("the test did not script this random draw")
        })
    }
}

pub struct Harness {
    pub pool: ClockedPool,
    pub clock: ManualClock,
    pub draws: Draws,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_config(Config::default())
    }

    pub fn with_patch(json: &str) -> Harness {
        Harness::with_config(Config::from_patch(&ConfigPatch::from_json(json).unwrap()).unwrap())
    }

    pub fn with_config(cfg: Config) -> Harness {
        let clock = ManualClock::new(T0);
        let draws = Draws::default();
        let pool = ClockedPool::new(cfg, clock.clone(), draws.source()).unwrap();
        Harness { pool, clock, draws }
    }

    /// Milliseconds since T0.
    pub fn now(&self) -> u64 {
        (self.clock.get() - T0) as u64
    }

    pub fn at(&self, ms_since_t0: f64) {
        self.clock.set(T0 + ms_since_t0);
    }

    pub fn advance(&self, ms: f64) {
        self.clock.advance(ms);
    }

    pub fn reg(&mut self, value: &str) {
        self.pool.register(Kind::Proxy, value).unwrap();
    }

    pub fn fail(&mut self, value: &str, ctx: &str, t: FailureType) {
        self.pool.report(Kind::Proxy, value, ctx, Outcome::failure(t)).unwrap();
    }

    pub fn ok(&mut self, value: &str, ctx: &str) {
        self.pool.report(Kind::Proxy, value, ctx, Outcome::success()).unwrap();
    }

    pub fn acquire(&mut self, ctx: &str) -> Option<Lease> {
        self.pool.acquire(ctx).unwrap()
    }

    /// Registers `PROXY/value` with the `group` key given (`None`: no group).
    pub fn reg_in(&mut self, value: &str, group: Option<&str>) -> bool {
        self.pool.register_in(Kind::Proxy, value, Some(group)).unwrap()
    }

    /// Registers `PROXY/value` with `maxLeases` `max` (a known resource: reconfigures it);
    /// `true` when it was new.
    pub fn reg_max(&mut self, value: &str, max: u32) -> bool {
        let options = repute::Registration { group: None, max_leases: Some(max) };
        self.pool.register_with(Kind::Proxy, value, options).unwrap()
    }

    /// `acquire(ctx, { groups })`.
    pub fn acquire_in(&mut self, ctx: &str, groups: &[Option<&str>]) -> Option<Lease> {
        self.pool.acquire_in(ctx, groups).unwrap()
    }

    pub fn revision(&mut self) -> u64 {
        self.pool.stats().unwrap().revision
    }

    pub fn block_secs(&mut self, value: &str, secs: f64) {
        self.pool.block(Kind::Proxy, value, BlockSpec::Seconds(secs)).unwrap();
    }

    pub fn events(&mut self) -> Vec<PoolEvent> {
        self.pool.drain_events().unwrap()
    }

    pub fn event_types(&mut self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.ty.as_str()).collect()
    }

    pub fn view(&mut self, value: &str) -> ResourceView {
        self.pool
            .resources(&Filter::default())
            .unwrap()
            .into_iter()
            .find(|r| r.kind == Kind::Proxy && &*r.value == value)
            .expect("resource in view")
    }

    /// The stored cell of `value` in `ctx`, as the dashboard shows it.
    pub fn cell(&mut self, value: &str, ctx: &str) -> repute::CellView {
        self.view(value).cells.into_iter().find(|c| &*c.context == ctx).expect("cell in view")
    }

    pub fn snapshot(&mut self) -> String {
        self.pool.snapshot().unwrap()
    }
}

/// xorshift64*: reproducible pseudo-random inputs for tests that draw their own.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
