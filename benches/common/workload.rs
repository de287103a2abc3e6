//! The engine benchmark's workload, shared by `benches/engine.rs` and `examples/cycle_loop.rs`
//! (included by `#[path]`): the pool of `n` resources × 10 contexts, the realistic outcome mix
//! (85 % success, then TIMEOUT 6 %, CONNECTION_RESET 4 %, SLOW 3 %, BLOCKED 1.5 %,
//! TLS_HANDSHAKE 0.5 %) and the acquire + report + release cycle.

use repute::{Config, ConfigPatch, FailureType, Kind, ManualClock, Outcome, Pool, SeededRandom};

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

/// A pool of `n` resources with a cell in each context, `window` outcomes per cell.
pub fn build(n: usize, window: usize) -> (Pool, ManualClock) {
    let clock = ManualClock::new(T0);
    let mut pool = Pool::with_seed(config((n * CONTEXTS) as u32 + 16), clock.clone(), 42).unwrap();
    let ctxs = contexts();
    let mut rng = SeededRandom::new(7);
    for i in 0..n {
        pool.register(Kind::Proxy, &value(i)).unwrap();
    }
    for i in 0..n {
        for ctx in &ctxs {
            for _ in 0..window {
                let o = match outcome(rng.next_u64()) {
                    Outcome::Failure { latency_ms, .. } => Outcome::Success { latency_ms },
                    ok => ok,
                };
                pool.report(Kind::Proxy, &value(i), ctx, o).unwrap();
            }
        }
    }
    pool.drain_events().unwrap();
    (pool, clock)
}

pub struct CycleState {
    pub pool: Pool,
    clock: ManualClock,
    ctxs: Vec<String>,
    rng: SeededRandom,
    i: usize,
}

impl CycleState {
    /// A pool of `n` resources, one cell per context, ready to cycle.
    pub fn new(n: usize) -> CycleState {
        let (pool, clock) = build(n, 1);
        CycleState { pool, clock, ctxs: contexts(), rng: SeededRandom::new(9), i: 0 }
    }

    /// One acquire + report + release, 1 ms after the previous one; events drained every 4096.
    pub fn cycle(&mut self) {
        self.i += 1;
        self.clock.advance(1.0);
        let ctx = &self.ctxs[self.i % CONTEXTS];
        let lease = self.pool.acquire(ctx).unwrap().expect("a candidate");
        let o = outcome(self.rng.next_u64());
        self.pool.report(lease.kind, &lease.value, ctx, o).unwrap();
        self.pool.release(&lease).unwrap();
        if self.i.is_multiple_of(4096) {
            self.pool.drain_events().unwrap();
        }
    }
}
