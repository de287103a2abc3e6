//! The native side of `pkg-scripts/perf/bench`: the engine benchmark's acquire + report + release
//! cycle (benches/common/workload.rs) after the same 20 000-cycle warm-up as the Node side,
//! then exactly the number of cycles the Node side ran — the same simulated period, so both
//! sides do the same work (cooldowns started, expired, recovered) — printed as one JSON line
//! `{"size":N,"cycles":C,"ns":PER_CYCLE}`.
//!   cargo run --release --example cycle_rate -- 10000 2000000      (resources, cycles)

#[path = "../benches/common/workload.rs"]
mod workload;

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(10_000, |a| a.parse().expect("resources: a whole number"));
    let cycles: u64 = args.get(1).map_or(1_000_000, |a| a.parse().expect("cycles: a whole number"));
    let mut state = workload::CycleState::new(n);
    for _ in 0..20_000 {
        state.cycle();
    }
    let start = Instant::now();
    for _ in 0..cycles {
        state.cycle();
    }
    let ns = start.elapsed().as_nanos() as f64 / cycles as f64;
    println!("{{\"size\":{n},\"cycles\":{cycles},\"ns\":{ns:.1}}}");
}
