//! Restoring above a host's floor (`Pool::restore_above`, JS `Pool.restore(json, {atLeast})`):
//! the revision, fencing high-water mark and next event seq are raised to at least the floor,
//! never lowered; everything else of the snapshot is unchanged; the next token and seq continue
//! above the floor; a floor that is not a whole number in [0, 2^53 − 1] is refused.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{Error, Floor};

fn restored(json: &str, floor: &Floor) -> ClockedPool {
    ClockedPool::restore_above(json, None, floor, ManualClock::new(T0), repute::Randomness::seeded(1))
        .unwrap()
}

fn without_counters(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["revision", "fencingHighWater", "nextEventSeq", "takenAt"] {
        o.remove(k);
    }
    v
}

fn busy_pool() -> Harness {
    let mut h = Harness::new();
    h.reg("http://u:pw@p1.example:8080");
    h.reg("p2.example:8080");
    h.ok("p2.example:8080", "shop");
    h.draws.push(0.5);
    let lease = h.acquire("shop").expect("a lease");
    assert!(lease.token >= 1);
    h
}

#[test]
fn counters_rise_to_the_floor_and_nothing_else_changes() {
    let mut h = busy_pool();
    let json = h.snapshot();
    let before = h.pool.stats().unwrap();
    let floor = Floor { revision: 500, fencing_high_water: 1_000, next_event_seq: 2_000 };
    let mut p = restored(&json, &floor);
    let s = p.stats().unwrap();
    assert_eq!((s.revision, s.fencing_high_water, s.next_event_seq), (500, 1_000, 2_000));
    assert_eq!(without_counters(&p.snapshot().unwrap()), without_counters(&json));
    assert!(before.fencing_high_water < 1_000);
    // The next token and the next event continue above the floor.
    let lease = p.acquire("other").unwrap().expect("a lease");
    assert_eq!(lease.token, 1_001);
    let events = p.drain_events().unwrap();
    assert_eq!(events.first().map(|e| e.seq), Some(2_000));
}

#[test]
fn a_floor_below_the_snapshot_changes_nothing() {
    let mut h = busy_pool();
    let json = h.snapshot();
    let mut plain = restored(&json, &Floor::default());
    let mut low = restored(&json, &Floor { revision: 1, fencing_high_water: 1, next_event_seq: 1 });
    assert_eq!(plain.snapshot().unwrap(), json);
    assert_eq!(low.snapshot().unwrap(), json);
}

#[test]
fn floors_that_are_not_whole_safe_numbers_are_refused() {
    let max = ((1u64 << 53) - 1) as f64;
    assert_eq!(Floor::from_host(Some(max), Some(max), Some(max)).unwrap().fencing_high_water, (1 << 53) - 1);
    assert_eq!(Floor::from_host(None, None, None).unwrap(), Floor::default());
    for (r, f, n, field) in [
        (Some(-1.0), None, None, "minRevision"),
        (None, Some(max + 1.0), None, "minFencingHighWater"),
        (None, None, Some(1.5), "minNextEventSeq"),
        (None, Some(f64::NAN), None, "minFencingHighWater"),
    ] {
        match Floor::from_host(r, f, n) {
            Err(Error::InvalidArgument(m)) => assert!(m.starts_with(field), "{m}"),
            other => panic!("{field}: {other:?}"),
        }
    }
}
