//! The engine benchmark's workload, shared by `benches/engine.rs` and `examples/cycle_loop.rs`
//! (included by `#[path]`): the pool of `n` resources × 10 contexts, the realistic outcome mix
//! (85 % success, then TIMEOUT 6 %, CONNECTION_RESET 4 %, SLOW 3 %, BLOCKED 1.5 %,
//! TLS_HANDSHAKE 0.5 %) and the acquire + report + release cycle — plain, by groups (three
//! tiers, the first two blocked, so each acquire walks all three), or on a paced pool.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;
use repute::{BlockSpec, Config, ConfigPatch, FailureType, Kind, Outcome, Pool};

pub const CONTEXTS: usize = 10;
pub const T0: f64 = 1_700_000_000_000.0;

fn config(max_cells: u32) -> Config {
    let json = format!(r#"{{"maxResources": 1000000, "maxCells": {max_cells}}}"#);
    Config::from_patch(&ConfigPatch::from_json(&json).unwrap()).unwrap()
}

pub fn contexts() -> Vec<String> {
    (0..CONTEXTS).map(|i| format!("target-{i:02}.example")).collect()
}

pub fn value(i: usize) -> String {
    format!("http://proxy-{i:06}.pool.example.net:8080")
}

/// An outcome drawn from the realistic mix.
pub fn outcome(r: u64) -> Outcome {
    let latency_ms = Some(50.0 + (r % 900) as f64);
    let failure = match r % 1000 {
        0..850 => None,
        850..910 => Some(FailureType::Timeout),
        910..950 => Some(FailureType::ConnectionReset),
        950..980 => Some(FailureType::Slow),
        980..995 => Some(FailureType::Blocked),
        _ => Some(FailureType::TlsHandshake),
    };
    match failure {
        None => Outcome::Success { latency_ms },
        Some(failure) => Outcome::Failure { failure, latency_ms },
    }
}

/// A pool of `n` resources with a cell in each context, `window` outcomes per cell, all at T0.
pub fn build(n: usize, window: usize) -> Pool {
    let mut pool = Pool::with_seed(config((n * CONTEXTS) as u32 + 16), 42).unwrap();
    let ctxs = contexts();
    let mut rng = Xoshiro256StarStar::seed_from_u64(7);
    for i in 0..n {
        pool.register(T0, Kind::Proxy, &value(i)).unwrap();
    }
    for i in 0..n {
        for ctx in &ctxs {
            for _ in 0..window {
                let o = match outcome(rng.next_u64()) {
                    Outcome::Failure { latency_ms, .. } => Outcome::Success { latency_ms },
                    ok => ok,
                };
                pool.report(T0, Kind::Proxy, &value(i), ctx, o).unwrap();
            }
        }
    }
    pool.drain_events(T0).unwrap();
    pool
}

/// How the cycle acquires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // each includer uses some
pub enum Mode {
    /// `acquire(context)`.
    Plain,
    /// Resources in three groups by `i % 3` (`dc`, `isp`, `res`); every resource of `dc` and
    /// `isp` blocked; `acquire(context, { groups: [dc, isp, res] })` — the worst case of
    /// three groups: two looked at and found empty, the pick in the third.
    Grouped,
    /// `minGapMs` 50 (with 1 ms per cycle and 10 contexts, each context has ~5 cells paced).
    Paced,
}

pub const GROUPS: [&str; 3] = ["dc", "isp", "res"];

pub struct CycleState {
    pub pool: Pool,
    /// The clock reading of the last call (ms since the Unix epoch).
    now: f64,
    ctxs: Vec<String>,
    rng: Xoshiro256StarStar,
    i: usize,
    mode: Mode,
}

impl CycleState {
    /// A pool of `n` resources, one cell per context, ready to cycle.
    pub fn new(n: usize) -> CycleState {
        CycleState::with_mode(n, Mode::Plain)
    }

    /// `new`, acquiring as `mode` says.
    pub fn with_mode(n: usize, mode: Mode) -> CycleState {
        let mut pool = build(n, 1);
        let mut now = T0;
        match mode {
            Mode::Plain => {}
            Mode::Grouped => {
                for i in 0..n {
                    pool.register_in(now, Kind::Proxy, &value(i), Some(Some(GROUPS[i % 3]))).unwrap();
                    if i % 3 < 2 {
                        pool.block(now, Kind::Proxy, &value(i), BlockSpec::Permanent).unwrap();
                    }
                }
            }
            Mode::Paced => {
                pool.set_config(now, &ConfigPatch::from_json(r#"{"minGapMs": 50}"#).unwrap()).unwrap();
                // Every cell was reported at T0 while building: all are paced until T0 + 50.
                now += 50.0;
            }
        }
        pool.drain_events(now).unwrap();
        CycleState { pool, now, ctxs: contexts(), rng: Xoshiro256StarStar::seed_from_u64(9), i: 0, mode }
    }

    fn acquire(&mut self, ctx: usize) -> repute::Lease {
        let ctx = &self.ctxs[ctx];
        let lease = match self.mode {
            Mode::Grouped => self.pool.acquire_in(self.now, ctx, &GROUPS.map(Some)),
            _ => self.pool.acquire(self.now, ctx),
        };
        lease.unwrap().expect("a candidate")
    }

    /// One acquire + release, 1 ms after the previous one (the acquire's own cost).
    #[allow(dead_code)]
    pub fn acquire_release(&mut self) {
        self.i += 1;
        self.now += 1.0;
        let lease = self.acquire(self.i % CONTEXTS);
        self.pool.release(self.now, &lease).unwrap();
        if self.i.is_multiple_of(4096) {
            self.pool.drain_events(self.now).unwrap();
        }
    }

    /// One acquire + report + release, 1 ms after the previous one; events drained every 4096.
    pub fn cycle(&mut self) {
        self.i += 1;
        self.now += 1.0;
        let lease = self.acquire(self.i % CONTEXTS);
        let ctx = &self.ctxs[self.i % CONTEXTS];
        let o = outcome(self.rng.next_u64());
        self.pool.report(self.now, lease.kind, &lease.value, ctx, o).unwrap();
        self.pool.release(self.now, &lease).unwrap();
        if self.i.is_multiple_of(4096) {
            self.pool.drain_events(self.now).unwrap();
        }
    }
}
