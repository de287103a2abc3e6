//! The README's Rust example, word for word (`tests/readme_rust.rs` checks that the README's
//! block is this file without these header lines), so `cargo test`, which builds examples,
//! compiles it. Run: `cargo run --example readme`.

use repute::{Config, FailureType, Kind, Outcome, Pool};

fn main() -> Result<(), repute::Error> {
    // Every call that reads time takes the clock's reading first: milliseconds since the Unix
    // epoch (the engine never reads a clock itself, so a simulation passes virtual time).
    let now = || std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_millis() as f64;
    let mut pool = Pool::with_seed(Config::default(), 7)?;
    pool.register(now(), Kind::Proxy, "proxy-1.example.net:8080")?;
    if let Some(lease) = pool.acquire(now(), "checkout-us")? {
        // ... fetch through lease.value ...
        let outcome = Outcome::failure(FailureType::Blocked);
        pool.report(now(), lease.kind, &lease.value, &lease.context, outcome)?;
        pool.release(now(), &lease)?;
    }
    Ok(())
}
