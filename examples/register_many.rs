//! Registers n resources with scrambled values and reports one outcome on each in a context,
//! timing both phases: `cargo run --release --example register_many -- 1000000`.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;
use repute::{Config, ConfigPatch, Kind, Outcome, Pool};

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(1_000_000, |a| a.parse().expect("a number"));
    let cfg = Config::from_patch(
        &ConfigPatch::from_json(r#"{"maxResources":10000000,"maxCells":10000000}"#).unwrap(),
    )
    .unwrap();
    let now = 1.7e12; // one clock reading for every call
    let mut pool = Pool::with_seed(cfg, 1).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    let values: Vec<String> = (0..n).map(|_| format!("proxy-{:016x}", rng.next_u64())).collect();
    let start = std::time::Instant::now();
    for v in &values {
        pool.register(now, Kind::Proxy, v).unwrap();
    }
    let registered = start.elapsed();
    let start = std::time::Instant::now();
    for v in &values {
        pool.report(now, Kind::Proxy, v, "ctx", Outcome::success()).unwrap();
    }
    println!(
        "{n} resources: registered in {registered:.2?}, first reports (new cells) in {:.2?}",
        start.elapsed()
    );
}
