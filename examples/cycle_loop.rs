//! Runs the benchmark's acquire + report + release cycle in a plain loop, for profilers
//! (`perf record`, `valgrind --tool=callgrind`): `cargo run --release --example cycle_loop -- 10000 2000000`.

#[path = "../benches/common/workload.rs"]
mod workload;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let (n, cycles) = (args.first().copied().unwrap_or(10_000), args.get(1).copied().unwrap_or(1_000_000));
    let mut state = workload::CycleState::new(n);
    let start = std::time::Instant::now();
    for _ in 0..cycles {
        state.cycle();
    }
    let per = start.elapsed().as_nanos() as f64 / cycles as f64;
    println!("{n} resources: {per:.0} ns per cycle over {cycles} cycles");
}
