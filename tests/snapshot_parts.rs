//! The snapshot in parts (`Pool::snapshot_part`, for the edge worker's per-resource records):
//! the head and every resource's three lines, joined as the edge store joins them, are the
//! very bytes of `Pool::snapshot` — for an empty pool, and for pools with blocks (timed and
//! permanent), cooled and recovered cells, several contexts and an unregistered name.

mod common;

use common::{ClockedPool, ManualClock};
use repute::{BlockSpec, Config, FailureType, Kind, Outcome, Randomness};

const T0: f64 = 1_700_000_000_000.0;

/// Joins the parts as `pkg-scripts/lib/snapshot-parts.js` does.
fn joined(pool: &mut ClockedPool, resources: &[(Kind, &str)]) -> String {
    let head = pool.snapshot_part(None).unwrap().unwrap();
    let (mut reg, mut blocks, mut cells) = (Vec::new(), Vec::new(), Vec::new());
    let mut order: Vec<(Kind, &str)> = resources.to_vec();
    order.sort_by(|a, b| (a.0 as u8, a.1.as_bytes()).cmp(&(b.0 as u8, b.1.as_bytes())));
    for (kind, value) in order {
        let Some(part) = pool.snapshot_part(Some((kind, value))).unwrap() else { continue };
        let lines: Vec<&str> = part.split('\n').collect();
        assert_eq!(lines.len(), 3, "three lines: {part}");
        reg.push(lines[0].to_string());
        if !lines[1].is_empty() {
            blocks.push(lines[1].to_string());
        }
        if !lines[2].is_empty() {
            cells.push(lines[2].to_string());
        }
    }
    format!(
        "{head},\"registered\":[{}],\"blocklist\":[{}],\"cells\":[{}]}}",
        reg.join(","),
        blocks.join(","),
        cells.join(",")
    )
}

#[test]
fn parts_join_into_the_snapshot_bytes() {
    let clock = ManualClock::new(T0);
    let mut pool = ClockedPool::new(Config::default(), clock.clone(), Randomness::seeded(7)).unwrap();
    let names: Vec<String> = (0..40).map(|i| format!("proxy-{}.example:80{:02}", 39 - i, i)).collect();
    let mut all: Vec<(Kind, &str)> = names.iter().map(|n| (Kind::Proxy, n.as_str())).collect();
    all.push((Kind::Account, "user:pass"));
    all.push((Kind::Session, "never-registered"));
    assert_eq!(joined(&mut pool, &all), pool.snapshot().unwrap(), "an empty pool");
    for (kind, value) in &all[..all.len() - 1] {
        pool.register(*kind, value).unwrap();
    }
    for step in 0..400u32 {
        clock.set(T0 + f64::from(step) * 1500.0);
        let (kind, value) = all[(step as usize * 7) % (all.len() - 1)];
        let context = ["checkout-us", "search-eu", "ä-utf8", "b"][(step % 4) as usize];
        let outcome = if step % 3 == 0 {
            Outcome::Failure { failure: FailureType::ALL[(step % 5) as usize], latency_ms: Some(900.0) }
        } else {
            Outcome::Success { latency_ms: Some(f64::from(step % 17) * 3.25) }
        };
        pool.report(kind, value, context, outcome).unwrap();
        if step % 50 == 0 {
            pool.block(kind, value, BlockSpec::Seconds(30.0)).unwrap();
        }
        if step == 77 {
            pool.block(Kind::Account, "user:pass", BlockSpec::Permanent).unwrap();
        }
        if step % 97 == 0 {
            let _ = pool.acquire("search-eu").unwrap();
        }
        assert_eq!(joined(&mut pool, &all), pool.snapshot().unwrap(), "after step {step}");
    }
    assert!(pool.snapshot_part(Some((Kind::Session, "never-registered"))).unwrap().is_none());
}
