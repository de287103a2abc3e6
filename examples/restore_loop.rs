//! Snapshots and restores the benchmark's pool (resources × 10 contexts, full windows) a given
//! number of times, for counting instructions with valgrind (the 500k-cell timings of
//! `cargo bench --bench engine` move with the machine's load; counts do not):
//! `cargo run --release --example restore_loop -- 5000 2` (5 000 resources, 2 rounds).
//! Run it with 1 and 2 rounds under `valgrind --tool=cachegrind --cache-sim=no`: the difference
//! is one snapshot plus one restore; `restore` alone skips the snapshots after the first.

// Only the pool builder is used here, not the cycle.
#[path = "../benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

use repute::{Pool, Randomness};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(5_000, |a| a.parse().expect("a number of resources"));
    let rounds: usize = args.get(1).map_or(1, |a| a.parse().expect("a number of rounds"));
    let only = args.get(2).map(String::as_str); // "restore" or "snapshot": that step alone
    let mut pool = workload::build(n, 10);
    let snap = pool.snapshot(workload::T0).unwrap();
    let mut bytes = 0;
    for _ in 0..rounds {
        if only != Some("restore") {
            bytes += pool.snapshot(workload::T0).unwrap().len();
        }
        if only != Some("snapshot") {
            let restored = Pool::restore(&snap, None, Randomness::seeded(1)).unwrap();
            bytes += std::hint::black_box(restored).stats(workload::T0).unwrap().cells as usize;
        }
    }
    println!("{n} resources, {rounds} rounds: {} bytes of snapshot, {bytes}", snap.len());
}
