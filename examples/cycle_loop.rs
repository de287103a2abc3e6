//! Runs the benchmark's acquire + report + release cycle in a plain loop, for profilers
//! (`perf record`, `valgrind --tool=callgrind`): `cargo run --release --example cycle_loop -- 10000 2000000`.

use repute::{Config, ConfigPatch, FailureType, Kind, ManualClock, Outcome, Pool, SeededRandom};

fn outcome(r: u64) -> Outcome {
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

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let (n, cycles) = (args.first().copied().unwrap_or(10_000), args.get(1).copied().unwrap_or(1_000_000));
    let cfg = Config::from_patch(
        &ConfigPatch::from_json(r#"{"maxResources":1000000,"maxCells":10000000}"#).unwrap(),
    )
    .unwrap();
    let clock = ManualClock::new(1.7e12);
    let mut pool = Pool::with_seed(cfg, clock.clone(), 42).unwrap();
    let ctxs: Vec<String> = (0..10).map(|i| format!("target-{i:02}.example")).collect();
    let values: Vec<String> = (0..n).map(|i| format!("http://proxy-{i:06}.pool.example.net:8080")).collect();
    for v in &values {
        pool.register(Kind::Proxy, v).unwrap();
        for c in &ctxs {
            pool.report(Kind::Proxy, v, c, Outcome::success()).unwrap();
        }
    }
    let mut rng = SeededRandom::new(9);
    let start = std::time::Instant::now();
    for i in 0..cycles {
        clock.advance(1.0);
        let ctx = &ctxs[i % 10];
        let lease = pool.acquire(ctx).unwrap().expect("a candidate");
        pool.report(lease.kind, &lease.value, ctx, outcome(rng.next_u64())).unwrap();
        pool.release(&lease).unwrap();
        if i.is_multiple_of(4096) {
            pool.drain_events().unwrap();
        }
    }
    let per = start.elapsed().as_nanos() as f64 / cycles as f64;
    println!("{n} resources: {per:.0} ns per cycle over {cycles} cycles");
}
